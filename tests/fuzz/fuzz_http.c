/* libFuzzer target: the HTTP parser, fed the input in two uneven pieces. */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>

#include "worker/http/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_parser p;
	size_t split = size ? data[0] % (size + 1) : 0;
	const char *chunks[2] = { (const char *)data, (const char *)data + split };
	size_t lens[2] = { split, size - split };

	http_parser_init(&p, 4096, 65536);
	for (int c = 0; c < 2; c++) {
		const char *d = chunks[c];
		size_t n = lens[c];

		while (n > 0) {
			size_t used = 0;
			enum http_feed f = http_parser_feed(&p, d, n, &used);

			d += used;
			n -= used;
			if (f == HTTP_ERROR)
				goto out;
			if (f == HTTP_REQUEST_DONE)
				http_parser_next(&p);
			else if (f == HTTP_NEED_MORE)
				break;
		}
	}
out:
	http_parser_free(&p);
	return 0;
}
