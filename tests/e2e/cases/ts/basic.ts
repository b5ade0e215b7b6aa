// Prints the sum of two integers per line; "crash" exits with status 3.
import { readFileSync } from "fs";

const out: string[] = [];
for (const line of readFileSync(0, "utf8").split("\n")) {
	if (line.trim() === "crash")
		process.exit(3);
	const f: string[] = line.trim().split(/\s+/);
	if (f.length === 2)
		out.push(String(BigInt(f[0]) + BigInt(f[1])));
}
process.stdout.write(out.map((s: string) => s + "\n").join(""));
