import java.util.Scanner;

class Helper {
    static int add(int a, int b) { return a + b; }
}

class Program {
    public static void main(String[] args) {
        Scanner in = new Scanner(System.in);
        System.out.println(Helper.add(in.nextInt(), in.nextInt()));
    }
}
