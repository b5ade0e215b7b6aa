// GNUstep's Foundation: NSObject, NSString, collection literals,
// @autoreleasepool and exceptions. Reads every word of stdin, prints them
// sorted and counted; NSLog writes to stderr. Foundation needs a user name
// (objc.yaml gives the jail's uid one).
#import <Foundation/Foundation.h>

@interface Tally : NSObject
{
	NSCountedSet *words;
}
- (void)addWords:(NSString *)text;
- (NSString *)report;
@end

@implementation Tally
- (id)init
{
	if ((self = [super init]) != nil)
		words = [NSCountedSet new];
	return self;
}

- (void)dealloc
{
	[words release];
	[super dealloc];
}

- (void)addWords:(NSString *)text
{
	NSCharacterSet *blank = [NSCharacterSet whitespaceAndNewlineCharacterSet];
	for (NSString *w in [text componentsSeparatedByCharactersInSet:blank])
		if ([w length] > 0)
			[words addObject:w];
}

- (NSString *)report
{
	NSMutableArray *lines = [NSMutableArray array];
	NSArray *sorted = [[words allObjects] sortedArrayUsingSelector:@selector(compare:)];
	for (NSString *w in sorted)
		[lines addObject:[NSString stringWithFormat:@"%@ %lu", w,
		                  (unsigned long)[words countForObject:w]]];
	return [lines componentsJoinedByString:@"\n"];
}
@end

int main(void)
{
	@autoreleasepool {
		NSData *data = [[NSFileHandle fileHandleWithStandardInput] readDataToEndOfFile];
		NSString *text = [[[NSString alloc] initWithData:data
		                                        encoding:NSUTF8StringEncoding] autorelease];
		Tally *t = [[Tally new] autorelease];
		NSDictionary *extra = @{@"literal": @[@1, @2]};

		[t addWords:text];
		printf("%s\n", [[t report] UTF8String]);
		@try {
			[NSException raise:@"Check" format:@"%lu", (unsigned long)[[extra objectForKey:@"literal"] count]];
		} @catch (NSException *e) {
			printf("%s %s\n", [[e name] UTF8String], [[e reason] UTF8String]);
		}
		NSLog(@"done as %@", NSUserName());
	}
	return 0;
}
