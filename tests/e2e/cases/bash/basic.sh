# Prints each word of stdin reversed; the word "crash" exits with status 3.
while read -r word; do
	if [ "$word" = crash ]; then
		exit 3
	fi
	rev=
	for ((i = ${#word} - 1; i >= 0; i--)); do
		rev+=${word:i:1}
	done
	printf '%s\n' "$rev"
done
