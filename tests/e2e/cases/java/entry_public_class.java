import java.util.Scanner;

// No file names in the request: the public class names the file and the class to run.
public final class Solution {
    public static class Pair {
        int a, b;
    }

    public static void main(String[] args) {
        Scanner in = new Scanner(System.in);
        Pair p = new Pair();
        p.a = in.nextInt();
        p.b = in.nextInt();
        System.out.println(p.a + p.b);
    }
}
