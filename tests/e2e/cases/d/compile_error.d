import std.stdio;

void main()
{
	writeln(undefinedName);
}
