#include <stdio.h>
#include <string.h>

/* C11: a static assertion and a compound literal */
_Static_assert(sizeof(char) == 1, "a char is a byte");

int main(void)
{
	const char *word = (const char[]){ 'O', 'K', '\0' };

	printf("%s\n", strlen(word) == 2 ? word : "no");
	return 0;
}
