/*
 * A live session's messages (docs/api.md, "Live sessions"), in its two
 * dialects: goboxd's own (GET /sessions) and Piston's (GET
 * /api/v2/connect). What a client's text frame says, read without I/O,
 * and the server's messages, each a JSON text. Pure: fuzzed
 * (tests/fuzz/fuzz_session.c) and unit-tested.
 */
#ifndef GOBOXD_SESSION_MSG_H
#define GOBOXD_SESSION_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum session_proto { SESSION_NATIVE, SESSION_PISTON };

enum session_msg_kind {
	SM_START,        /* start (init): body holds the job's request body */
	SM_STDIN,        /* data for the program's stdin */
	SM_CLOSE_STDIN,
	SM_SIGNAL,       /* signal: its number */
	SM_RESIZE,       /* the terminal's new rows and cols (goboxd's own) */
	SM_BAD,          /* refused: close_code and error say how */
};

struct session_msg {
	enum session_msg_kind kind;
	char *data;      /* SM_STDIN's bytes, or SM_START's body (malloc'd, NUL-ended) */
	size_t len;
	int signal;
	/* SM_START: a terminal asked for (goboxd's own "tty"), of rows and
	 * cols; SM_RESIZE: the new size */
	bool tty;
	unsigned short rows, cols;
	/* SM_BAD: the close code (0: an error message, then the session's
	 * error close), its code word and message */
	uint16_t close_code;
	char code[32];
	char error[160];
};

/* A terminal's default size, and the most rows or columns one may have. */
#define SESSION_TTY_ROWS 24
#define SESSION_TTY_COLS 80
#define SESSION_TTY_MAX 1000

/* Read one text message of protocol p. Always fills m (SM_BAD when refused). */
void session_msg_parse(enum session_proto p, const char *text, size_t len, struct session_msg *m);
void session_msg_free(struct session_msg *m);
/* A signal's name (SIGINT, or INT) as a number; 0 when it is none a client may send. */
int session_msg_signal_number(const char *name);

/* The server's messages, malloc'd JSON texts (NULL: no memory). */
char *session_msg_stage(enum session_proto p, bool build);
/* Output of the program (or its build): data need not end on a character. */
char *session_msg_output(enum session_proto p, bool is_stderr, const char *data, size_t len);
struct session_exit {
	bool build;          /* the build's end (Piston says it; goboxd's own only when it failed) */
	const char *status;  /* goboxd's verdict word */
	int exit_code;       /* -1: none */
	int signal;          /* 0: none */
	uint64_t time_ms, memory_kb;
};
char *session_msg_exit(enum session_proto p, const struct session_exit *e);
char *session_msg_error(enum session_proto p, const char *code, const char *message);
/* Piston's runtime message. */
char *session_msg_runtime(const char *language, const char *version);

#endif
