// Reads a line of two integers and prints their sum; "crash" ends with
// exit status 3.
import std.algorithm : map;
import std.array : array, split;
import std.conv : to;
import std.stdio : readln, writeln;
import std.string : strip;

int main()
{
	auto line = readln().strip();
	if (line == "crash")
		return 3;
	auto nums = line.split().map!(to!long).array;
	writeln(nums[0] + nums[1]);
	return 0;
}
