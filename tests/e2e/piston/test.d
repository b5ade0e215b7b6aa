import std.stdio : writeln;
import std.array : join;

void main()
{
    writeln(["O", "K"].join);
}
