/*
 * A sequence lock over a plain structure in memory shared between
 * processes: one writer at a time, any number of readers, none of them
 * ever blocking the writer. The count is odd while a write is under way;
 * a reader copies, then checks that the count was even and did not move.
 */
#ifndef GOBOXD_SEQLOCK_H
#define GOBOXD_SEQLOCK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Copy n bytes of src to the shared dst under seq. */
void seqlock_write(_Atomic uint64_t *seq, void *dst, const void *src, size_t n);
/*
 * A consistent copy of the shared src (n bytes) into dst. A writer that
 * died in the middle leaves the count odd for good: after about 100 ms
 * of tries, dst is zeroed instead (nothing rather than garbage).
 */
void seqlock_read(const _Atomic uint64_t *seq, void *dst, const void *src, size_t n);

#endif
