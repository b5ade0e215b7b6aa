// Reads lines of two integers and prints their sums; the line "crash"
// ends the program with exit status 3.
int main()
{
	string line;
	while ((line = Stdio.stdin->gets())) {
		if (line == "crash")
			return 3;
		array(int) v = (array(int))(line / " ");
		write("%d\n", v[0] + v[1]);
	}
	return 0;
}
