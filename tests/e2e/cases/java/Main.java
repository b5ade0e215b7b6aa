import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;

// Prints the sum of two integers per line; "crash" exits with status 3.
public class Main {
	public static void main(String[] args) throws IOException {
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
		StringBuilder out = new StringBuilder();
		String line;

		while ((line = in.readLine()) != null) {
			if (line.equals("crash"))
				System.exit(3);
			String[] f = line.trim().split("\\s+");
			if (f.length == 2)
				out.append(Long.parseLong(f[0]) + Long.parseLong(f[1])).append('\n');
		}
		System.out.print(out);
	}
}
