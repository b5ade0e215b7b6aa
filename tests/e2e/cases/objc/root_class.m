// A root class of the program's own (no superclass, no Foundation), the
// way the GNU runtime allows: +alloc through class_createInstance.
#import <stdio.h>
#import <objc/runtime.h>

__attribute__((objc_root_class))
@interface Greeter
{
	Class isa;
	const char *name;
}
+ (id)alloc;
- (id)initWithName:(const char *)n;
- (void)greet;
@end

@implementation Greeter
+ (id)alloc
{
	return class_createInstance(self, 0);
}

- (id)initWithName:(const char *)n
{
	name = n;
	return self;
}

- (void)greet
{
	printf("Hello, %s!\n", name);
}
@end

int main(void)
{
	char buf[64];

	if (scanf("%63s", buf) != 1)
		return 1;
	[[[Greeter alloc] initWithName:buf] greet];
	return 0;
}
