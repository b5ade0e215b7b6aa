// Prints the sum of two integers per line; "crash" throws (exit status 1).
const lines = require('fs').readFileSync(0, 'utf8').split('\n');
const out = [];

for (const line of lines) {
	if (line.trim() === 'crash')
		throw new Error('crash requested');
	const f = line.trim().split(/\s+/);
	if (f.length === 2)
		out.push(String(BigInt(f[0]) + BigInt(f[1])));
}
process.stdout.write(out.map((s) => s + '\n').join(''));
