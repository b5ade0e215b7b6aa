#include "autoconf.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sha1.h"
#include "worker/http/session_msg.h"
#include "worker/http/websocket.h"

static void hex(const unsigned char *d, char *out)
{
	for (int i = 0; i < SHA1_LEN; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/* FIPS 180's examples, and lengths around the padding's block edge. */
Test(sha1, vectors)
{
	static const struct {
		const char *in, *sum;
	} v[] = {
		{ "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
		{ "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
	};
	unsigned char d[SHA1_LEN];
	char h[41];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		sha1_digest(v[i].in, strlen(v[i].in), d);
		hex(d, h);
		cr_expect_str_eq(h, v[i].sum, "sha1(\"%s\")", v[i].in);
	}
}

/* RFC 6455, 1.3's example key and its accept value. */
Test(websocket, accept_of_the_rfc_example)
{
	char out[WEBSOCKET_ACCEPT_LEN];

	websocket_accept("dGhlIHNhbXBsZSBub25jZQ==", out);
	cr_expect_str_eq(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

Test(session_msg, native_messages)
{
	struct session_msg m;
	const char *start = "{\"type\":\"start\",\"language\":\"python3\",\"source\":\"x\"}";

	session_msg_parse(SESSION_NATIVE, start, strlen(start), &m);
	cr_assert_eq(m.kind, SM_START);
	cr_expect_null(strstr(m.data, "type"), "the type is not the job's");
	session_msg_free(&m);
	const char *in = "{\"type\":\"stdin\",\"data\":\"hi\\n\"}";

	session_msg_parse(SESSION_NATIVE, in, strlen(in), &m);
	cr_assert_eq(m.kind, SM_STDIN);
	cr_expect_eq(m.len, 3);
	session_msg_free(&m);
	session_msg_parse(SESSION_NATIVE, "{\"type\":\"signal\",\"name\":\"SIGINT\"}", 33, &m);
	cr_expect_eq(m.kind, SM_SIGNAL);
	cr_expect_eq(m.signal, SIGINT);
	session_msg_parse(SESSION_NATIVE, "{\"type\":\"signal\",\"name\":\"SIGSTOP\"}", 34, &m);
	cr_expect_eq(m.kind, SM_BAD);
	session_msg_parse(SESSION_NATIVE, "[1", 2, &m);
	cr_expect_eq(m.kind, SM_BAD);
	cr_expect_str_eq(m.code, "invalid_json");
}

static void parse_native(const char *text, struct session_msg *m)
{
	session_msg_parse(SESSION_NATIVE, text, strlen(text), m);
}

Test(session_msg, a_terminal_its_size_and_its_resizes)
{
	struct session_msg m;

	parse_native("{\"type\":\"start\",\"language\":\"c\",\"source\":\"x\",\"tty\":true}", &m);
	cr_assert_eq(m.kind, SM_START);
	cr_expect(m.tty);
	cr_expect_eq(m.rows, SESSION_TTY_ROWS);
	cr_expect_eq(m.cols, SESSION_TTY_COLS);
	cr_expect_null(strstr(m.data, "tty"), "tty is not the job's: /run would refuse it");
	session_msg_free(&m);
	parse_native("{\"type\":\"start\",\"language\":\"c\",\"tty\":{\"cols\":132}}", &m);
	cr_expect(m.tty);
	cr_expect_eq(m.rows, SESSION_TTY_ROWS);
	cr_expect_eq(m.cols, 132);
	session_msg_free(&m);
	parse_native("{\"type\":\"start\",\"language\":\"c\",\"tty\":false}", &m);
	cr_expect_eq(m.kind, SM_START);
	cr_expect_not(m.tty);
	session_msg_free(&m);
	parse_native("{\"type\":\"resize\",\"rows\":50,\"cols\":1000}", &m);
	cr_assert_eq(m.kind, SM_RESIZE);
	cr_expect_eq(m.rows, 50);
	cr_expect_eq(m.cols, 1000);
	static const char *const bad[] = {
		"{\"type\":\"start\",\"tty\":1}",
		"{\"type\":\"start\",\"tty\":{\"rows\":-1}}",
		"{\"type\":\"start\",\"tty\":{\"rows\":65560}}",
		"{\"type\":\"start\",\"tty\":{\"cols\":\"80\"}}",
		"{\"type\":\"resize\",\"rows\":0,\"cols\":80}",
		"{\"type\":\"resize\",\"rows\":24,\"cols\":80.5}",
		"{\"type\":\"resize\",\"rows\":24,\"cols\":80,\"x\":1}",
		"{\"type\":\"resize\",\"rows\":1e300,\"cols\":80}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse_native(bad[i], &m);
		cr_expect_eq(m.kind, SM_BAD, "%s", bad[i]);
		cr_expect_str_eq(m.code, "invalid_message", "%s", bad[i]);
		session_msg_free(&m);
	}
}

Test(session_msg, piston_close_codes)
{
	struct session_msg m;
	const char *out = "{\"type\":\"data\",\"stream\":\"stdout\",\"data\":\"x\"}";
	const char *sig = "{\"type\":\"signal\",\"signal\":\"SIGNOPE\"}";

	session_msg_parse(SESSION_PISTON, out, strlen(out), &m);
	cr_expect_eq(m.kind, SM_BAD);
	cr_expect_eq(m.close_code, 4004);
	session_msg_parse(SESSION_PISTON, sig, strlen(sig), &m);
	cr_expect_eq(m.close_code, 4005);
}

/* Output that is not UTF-8 still makes a valid text message. */
Test(session_msg, output_is_text)
{
	char *s = session_msg_output(SESSION_NATIVE, true, "a\xff" "b", 3);

	cr_assert_not_null(s);
	cr_expect_str_eq(s, "{\"type\":\"stderr\",\"data\":\"a\xEF\xBF\xBD" "b\"}");
	free(s);
}
