/*
 * UTF-8 as RFC 3629 defines it, the one decoder of the code base: a
 * request's source must be valid UTF-8, and program output is cleaned to
 * valid UTF-8 before it goes into a JSON answer.
 *
 * Well-formed means Unicode's table 3-7: no overlong form (C0, C1, E0 80,
 * F0 80), no UTF-16 surrogate (ED A0..ED BF), nothing above U+10FFFF (F4
 * 90 and up, F5..FF), and every sequence complete.
 */
#ifndef GOBOXD_UTF8_H
#define GOBOXD_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * How long a sequence that starts with byte c is: 1 for ASCII (NUL too),
 * 2 to 4 for a lead byte, 0 for a byte that starts none (a continuation
 * byte, C0, C1, F5..FF). Whether the sequence is well-formed is for
 * utf8_decode to say.
 */
unsigned utf8_lead_len(unsigned char c);

/*
 * Decode the sequence at the start of s, of which n bytes are there: its
 * length (1 to 4), with its code point in *cp when cp is not NULL, or 0
 * when s does not start with a well-formed sequence (or n is 0).
 */
size_t utf8_decode(const char *s, size_t n, uint32_t *cp);

/* Whether all n bytes of s are well-formed UTF-8 (NUL bytes are). */
bool utf8_valid(const char *s, size_t n);

#endif
