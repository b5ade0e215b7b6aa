/*
 * Process titles, so that ps shows who is who: "goboxd: master",
 * "goboxd: worker 3", "goboxd: prober". The way nginx does it on Linux:
 * the argv and environment strings lie end to end in memory and the kernel
 * shows that area as /proc/<pid>/cmdline; once they are copied elsewhere
 * the area can hold a title.
 */
#ifndef GOBOXD_PROCTITLE_H
#define GOBOXD_PROCTITLE_H

/*
 * Call first thing in main(): copies the environment (environ then points
 * at the copy) and argv, and returns the copy of argv, which the program
 * uses from then on (the original strings are overwritten by titles).
 * Returns argv itself, and titles stay off, when memory runs out.
 */
char **proctitle_init(int argc, char **argv);
/* Show the title (cut to the area's size); forked children inherit it. */
void proctitle_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
