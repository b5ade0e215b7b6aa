// GCC's catch-all header, common in contest code: clang++ builds against
// libstdc++, so it is there. Prints the sum of each line's integers;
// "crash" exits with status 3.
#include <bits/stdc++.h>

int main()
{
	std::string line;
	while (std::getline(std::cin, line)) {
		if (line.rfind("crash", 0) == 0)
			return 3;
		std::istringstream in(line);
		std::vector<long> v{std::istream_iterator<long>(in), std::istream_iterator<long>()};
		std::cout << std::accumulate(v.begin(), v.end(), 0L) << '\n';
	}
}
