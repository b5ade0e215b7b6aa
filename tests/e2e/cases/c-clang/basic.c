#include <stdio.h>
#include <string.h>
#include <math.h>

/* Prints the sum of two integers per line; "crash" exits with status 3.
 * sqrt() checks that libm is linked by default. */
int main(void)
{
	char line[256];
	long a, b;

	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "crash", 5) == 0)
			return 3;
		if (sscanf(line, "%ld %ld", &a, &b) == 2)
			printf("%ld\n", a + b + (long)sqrt(0.0));
	}
	return 0;
}
