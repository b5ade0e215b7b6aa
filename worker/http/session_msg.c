#include "autoconf.h"

#include "worker/http/session_msg.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "common/utf8.h"

/* The signals a client may send (Piston's list, less the ones that stop
 * or continue a process or cannot be caught anyway). */
static const struct {
	const char *name;
	int sig;
} signals[] = {
	{ "SIGHUP", SIGHUP }, { "SIGINT", SIGINT }, { "SIGQUIT", SIGQUIT },
	{ "SIGABRT", SIGABRT }, { "SIGKILL", SIGKILL }, { "SIGUSR1", SIGUSR1 },
	{ "SIGUSR2", SIGUSR2 }, { "SIGPIPE", SIGPIPE }, { "SIGALRM", SIGALRM },
	{ "SIGTERM", SIGTERM },
};

int session_msg_signal_number(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(signals); i++)
		if (!strcmp(name, signals[i].name) || !strcmp(name, signals[i].name + 3))
			return signals[i].sig;
	return 0;
}

static const char *signal_name(int sig)
{
	for (size_t i = 0; i < ARRAY_SIZE(signals); i++)
		if (signals[i].sig == sig)
			return signals[i].name;
	return NULL;
}

static void refuse(struct session_msg *m, uint16_t close_code, const char *code, const char *msg)
{
	m->kind = SM_BAD;
	m->close_code = close_code;
	snprintf(m->code, sizeof(m->code), "%s", code);
	snprintf(m->error, sizeof(m->error), "%s", msg);
}

/* start's (init's) body: the message without its type, as the job's API reads it. */
/* goboxd's start is /run's body with one program and no tests: its
 * stdin (the first of it) becomes the one test /run reads. */
static void one_test(cJSON *root)
{
	cJSON *stdin_v = cJSON_DetachItemFromObjectCaseSensitive(root, "stdin");
	cJSON *tests = cJSON_CreateArray(), *t = cJSON_CreateObject();

	if (cJSON_HasObjectItem(root, "tests")) {
		cJSON_Delete(tests);
		cJSON_Delete(t);
		cJSON_Delete(stdin_v);
		return;
	}
	cJSON_AddItemToObject(t, "stdin", stdin_v ? stdin_v : cJSON_CreateString(""));
	cJSON_AddItemToArray(tests, t);
	cJSON_AddItemToObject(root, "tests", tests);
}

/* rows and cols of o (each 1 to SESSION_TTY_MAX, the defaults when
 * absent); false when o holds anything else. */
static bool take_size(const cJSON *o, struct session_msg *m)
{
	const cJSON *it;

	m->rows = SESSION_TTY_ROWS;
	m->cols = SESSION_TTY_COLS;
	cJSON_ArrayForEach(it, o) {
		bool rows = !strcmp(it->string, "rows");
		double v = it->valuedouble;

		if (!strcmp(it->string, "type"))
			continue;
		if ((!rows && strcmp(it->string, "cols")) || !cJSON_IsNumber(it) || v < 1 ||
		    v > SESSION_TTY_MAX || v != (double)(int)v)
			return false;
		if (rows)
			m->rows = (unsigned short)v;
		else
			m->cols = (unsigned short)v;
	}
	return true;
}

/* goboxd's "tty": true, false, or {"rows", "cols"}; taken out of the
 * start, which /run's parser reads. False (m refused) when it is none. */
static bool take_tty(cJSON *root, struct session_msg *m)
{
	cJSON *tty = cJSON_DetachItemFromObjectCaseSensitive(root, "tty");
	bool ok = !tty || cJSON_IsBool(tty) || (cJSON_IsObject(tty) && take_size(tty, m));

	m->tty = ok && tty && !cJSON_IsFalse(tty);
	if (m->tty && cJSON_IsTrue(tty)) {
		m->rows = SESSION_TTY_ROWS;
		m->cols = SESSION_TTY_COLS;
	}
	cJSON_Delete(tty);
	if (!ok)
		refuse(m, 0, "invalid_message",
		       "tty must be true, false or {\"rows\", \"cols\"}, each 1 to 1000");
	return ok;
}

static void take_start(cJSON *root, struct session_msg *m, bool native)
{
	/* every "type" (a duplicate too): none is the job's */
	while (cJSON_GetObjectItemCaseSensitive(root, "type"))
		cJSON_DeleteItemFromObjectCaseSensitive(root, "type");
	if (native && !take_tty(root, m))
		return;
	if (native)
		one_test(root);
	m->data = cJSON_PrintUnformatted(root);
	if (!m->data) {
		refuse(m, 0, "internal_error", "no memory");
		return;
	}
	m->len = strlen(m->data);
	m->kind = SM_START;
}

static void take_stdin(const cJSON *data, struct session_msg *m)
{
	if (!cJSON_IsString(data)) {
		refuse(m, 0, "invalid_message", "data must be a string");
		return;
	}
	m->data = xstrdup(data->valuestring);
	m->len = strlen(m->data);
	m->kind = SM_STDIN;
}

static void take_signal(const cJSON *name, struct session_msg *m, uint16_t bad_close)
{
	m->signal = cJSON_IsString(name) ? session_msg_signal_number(name->valuestring) : 0;
	if (m->signal)
		m->kind = SM_SIGNAL;
	else
		refuse(m, bad_close, "invalid_signal", "Invalid signal");
}

static void parse_native(cJSON *root, const char *type, struct session_msg *m)
{
	if (!strcmp(type, "start"))
		take_start(root, m, true);
	else if (!strcmp(type, "stdin"))
		take_stdin(cJSON_GetObjectItemCaseSensitive(root, "data"), m);
	else if (!strcmp(type, "close_stdin"))
		m->kind = SM_CLOSE_STDIN;
	else if (!strcmp(type, "signal"))
		take_signal(cJSON_GetObjectItemCaseSensitive(root, "name"), m, 0);
	else if (!strcmp(type, "resize") && take_size(root, m))
		m->kind = SM_RESIZE;
	else if (!strcmp(type, "resize"))
		refuse(m, 0, "invalid_message", "resize takes rows and cols, each 1 to 1000");
	else
		refuse(m, 0, "invalid_message",
		       "type must be start, stdin, close_stdin, signal or resize");
}

/* Piston's close codes: 4004 for data to another stream, 4005 for a bad signal. */
static void parse_piston(cJSON *root, const char *type, struct session_msg *m)
{
	const cJSON *stream = cJSON_GetObjectItemCaseSensitive(root, "stream");

	if (!strcmp(type, "init")) {
		take_start(root, m, false);
	} else if (!strcmp(type, "data")) {
		if (!cJSON_IsString(stream) || strcmp(stream->valuestring, "stdin"))
			refuse(m, 4004, "invalid_message", "Can only write to stdin");
		else
			take_stdin(cJSON_GetObjectItemCaseSensitive(root, "data"), m);
	} else if (!strcmp(type, "signal")) {
		take_signal(cJSON_GetObjectItemCaseSensitive(root, "signal"), m, 4005);
	} else {
		refuse(m, 0, "invalid_message", "unknown message type");
	}
}

void session_msg_parse(enum session_proto p, const char *text, size_t len, struct session_msg *m)
{
	cJSON *root = cJSON_ParseWithLength(text, len);
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");

	memset(m, 0, sizeof(*m));
	if (!cJSON_IsObject(root))
		refuse(m, 0, "invalid_json", "a message is a JSON object");
	else if (!cJSON_IsString(type))
		refuse(m, 0, "invalid_message", "type is required as a string");
	else if (p == SESSION_PISTON)
		parse_piston(root, type->valuestring, m);
	else
		parse_native(root, type->valuestring, m);
	cJSON_Delete(root);
}

void session_msg_free(struct session_msg *m)
{
	free(m->data);
	m->data = NULL;
}

static char *print(cJSON *o)
{
	char *s = o ? cJSON_PrintUnformatted(o) : NULL;

	cJSON_Delete(o);
	return s;
}

static cJSON *typed(const char *type)
{
	cJSON *o = cJSON_CreateObject();

	if (o)
		cJSON_AddStringToObject(o, "type", type);
	return o;
}

char *session_msg_stage(enum session_proto p, bool build)
{
	cJSON *o = typed("stage");

	if (p == SESSION_PISTON)
		cJSON_AddStringToObject(o, "stage", build ? "compile" : "run");
	else
		cJSON_AddStringToObject(o, "stage", build ? "build" : "run");
	return print(o);
}

/* Bytes that are not UTF-8 become U+FFFD: a text frame carries text. */
static char *as_text(const char *data, size_t len)
{
	char *s = xmalloc(len * 3 + 1), *o = s;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_decode(data + i, len - i, NULL);

		if (n && data[i]) {
			memcpy(o, data + i, n);
			o += n;
			i += n;
		} else {
			memcpy(o, data[i] ? "\xEF\xBF\xBD" : "", data[i] ? 3 : 0);
			o += data[i] ? 3 : 0;
			i++;
		}
	}
	*o = '\0';
	return s;
}

char *session_msg_output(enum session_proto p, bool is_stderr, const char *data, size_t len)
{
	cJSON *o = typed(p == SESSION_PISTON ? "data" : is_stderr ? "stderr" : "stdout");
	char *text = as_text(data, len);

	if (p == SESSION_PISTON)
		cJSON_AddStringToObject(o, "stream", is_stderr ? "stderr" : "stdout");
	cJSON_AddStringToObject(o, "data", text);
	free(text);
	return print(o);
}

static void add_or_null(cJSON *o, const char *key, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

char *session_msg_exit(enum session_proto p, const struct session_exit *e)
{
	cJSON *o = typed("exit");

	if (p == SESSION_PISTON) {
		cJSON_AddStringToObject(o, "stage", e->build ? "compile" : "run");
		if (e->exit_code >= 0)
			cJSON_AddNumberToObject(o, "code", e->exit_code);
		else
			cJSON_AddNullToObject(o, "code");
		add_or_null(o, "signal", e->signal ? signal_name(e->signal) : NULL);
		return print(o);
	}
	cJSON_AddStringToObject(o, "status", e->status);
	if (e->exit_code >= 0)
		cJSON_AddNumberToObject(o, "exit_code", e->exit_code);
	else
		cJSON_AddNullToObject(o, "exit_code");
	if (e->signal)
		cJSON_AddNumberToObject(o, "signal", e->signal);
	else
		cJSON_AddNullToObject(o, "signal");
	cJSON_AddNumberToObject(o, "time_ms", (double)e->time_ms);
	cJSON_AddNumberToObject(o, "memory_kb", (double)e->memory_kb);
	return print(o);
}

char *session_msg_error(enum session_proto p, const char *code, const char *message)
{
	cJSON *o = typed("error");

	if (p == SESSION_NATIVE)
		cJSON_AddStringToObject(o, "code", code);
	cJSON_AddStringToObject(o, "message", message);
	return print(o);
}

char *session_msg_runtime(const char *language, const char *version)
{
	cJSON *o = typed("runtime");

	cJSON_AddStringToObject(o, "language", language);
	cJSON_AddStringToObject(o, "version", version);
	return print(o);
}
