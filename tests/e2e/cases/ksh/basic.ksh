# Reads lines of two integers and prints their sums; the line "crash"
# ends the program with exit status 3.
while read -r a b; do
	[[ $a == crash ]] && exit 3
	print -- $(( a + b ))
done
