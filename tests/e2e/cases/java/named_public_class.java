import java.util.Scanner;

// The request names the file after the public class, and the class to run.
public class Solver {
    public static void main(String[] args) {
        Scanner in = new Scanner(System.in);
        System.out.println(in.nextLong() + in.nextLong());
    }
}
