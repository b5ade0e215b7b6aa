#include <iostream>
#include <optional>
#include <string>

// C++17: std::optional and a structured binding
int main()
{
	std::optional<std::string> word = "OK";
	auto [first, second] = std::pair{(*word)[0], (*word)[1]};
	std::cout << first << second << '\n';
}
