// Plain Objective-C on the GNU runtime, without Foundation: a subclass of
// the runtime's own root class Object (objc/Object.h), which has no +alloc:
// class_createInstance makes the instance. Prints the sum of the integers
// on stdin; "crash" exits with status 3.
#import <stdio.h>
#import <string.h>
#import <objc/Object.h>
#import <objc/runtime.h>

@interface Accumulator : Object
{
	long total;
}
+ (id)make;
- (void)add:(long)n;
- (long)total;
@end

@implementation Accumulator
+ (id)make
{
	return class_createInstance(self, 0);
}

- (void)add:(long)n
{
	total += n;
}

- (long)total
{
	return total;
}
@end

int main(void)
{
	Accumulator *acc = [Accumulator make];
	char word[64];
	long n;

	while (scanf("%63s", word) == 1) {
		if (strcmp(word, "crash") == 0)
			return 3;
		if (sscanf(word, "%ld", &n) == 1)
			[acc add:n];
	}
	printf("%ld\n", [acc total]);
	object_dispose(acc);
	return 0;
}
