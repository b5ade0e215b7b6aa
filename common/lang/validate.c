#include "autoconf.h"

#include "common/lang/validate.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"
#include "common/lang/jailpath.h"

#define FLAG_MAX_LEN 256

/*
 * The portable set: what every file system and tool takes as it is, with
 * no quoting, globbing or option meaning once the name does not start
 * with '-' or '+'.
 */
static bool portable_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '+' || c == '-';
}

const struct validate_filename_rule validate_filename_native = {
	.max_len = FILENAME_MAX_LEN,
	.portable = true,
	.no_first = ".-+",
	.length_first = true,
};

const struct validate_filename_rule validate_filename_codize = {
	.max_len = CODIZE_FILENAME_MAX_LEN,
	.portable = false,
	.no_first = "-",
	.length_first = false,
};

enum validate_filename_problem validate_filename_check(const struct validate_filename_rule *rule,
							const char *name, size_t len,
							char *bad)
{
	if (!name || len == 0)
		return VALIDATE_FILENAME_EMPTY;
	if (rule->length_first && len > rule->max_len)
		return VALIDATE_FILENAME_TOO_LONG;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '\0' || c == '/' || (rule->portable && !portable_byte(c))) {
			*bad = (char)c;
			return VALIDATE_FILENAME_BAD_BYTE;
		}
	}
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return VALIDATE_FILENAME_DOTS;
	if (len > rule->max_len)
		return VALIDATE_FILENAME_TOO_LONG;
	if (strchr(rule->no_first, name[0])) {
		*bad = name[0];
		return VALIDATE_FILENAME_BAD_FIRST;
	}
	return VALIDATE_FILENAME_OK;
}

int validate_filename(const char *name, size_t len, char *err, size_t errlen)
{
	char bad = 0;

	switch (validate_filename_check(&validate_filename_native, name, len, &bad)) {
	case VALIDATE_FILENAME_OK:
		return 0;
	case VALIDATE_FILENAME_EMPTY:
		snprintf(err, errlen, "file name is empty");
		break;
	case VALIDATE_FILENAME_TOO_LONG:
		snprintf(err, errlen, "file name is longer than %d bytes", FILENAME_MAX_LEN);
		break;
	case VALIDATE_FILENAME_BAD_BYTE:
		if (bad == '\0')
			snprintf(err, errlen, "file name contains a NUL byte");
		else if (bad == '/')
			snprintf(err, errlen, "file name must be one path component (no '/')");
		else
			snprintf(err, errlen, "file name may only contain letters, digits and _ . + -");
		break;
	case VALIDATE_FILENAME_DOTS:
		snprintf(err, errlen, "file name must not start with a dot");
		break;
	case VALIDATE_FILENAME_BAD_FIRST:
		if (bad == '.')
			snprintf(err, errlen, "file name must not start with a dot");
		else
			snprintf(err, errlen, "file name must not start with '%c'", bad);
		break;
	}
	return -EINVAL;
}

int validate_path(const char *path, size_t len, char *err, size_t errlen)
{
	char why[128];
	size_t depth = 0;

	/* one name: in validate_filename's words */
	if (!path || len == 0 || !memchr(path, '/', len))
		return validate_filename(path, len, err, errlen);
	if (len > VALIDATE_PATH_MAX_LEN) {
		snprintf(err, errlen, "path is longer than %d bytes", VALIDATE_PATH_MAX_LEN);
		return -EINVAL;
	}
	for (size_t at = 0; at <= len;) {
		const char *slash = memchr(path + at, '/', len - at);
		size_t n = slash ? (size_t)(slash - (path + at)) : len - at;

		if (++depth > VALIDATE_PATH_MAX_DEPTH) {
			snprintf(err, errlen, "path is more than %d names deep",
				 VALIDATE_PATH_MAX_DEPTH);
			return -EINVAL;
		}
		if (validate_filename(path + at, n, why, sizeof(why)) < 0) {
			if (n == 0)
				snprintf(err, errlen, "path has an empty part (a leading, trailing or "
					 "double '/')");
			else
				snprintf(err, errlen, "path part '%.*s': %s", (int)(n > 64 ? 64 : n),
					 path + at, why);
			return -EINVAL;
		}
		at += n + 1;
	}
	return 0;
}

/* What is wrong with a pattern's bytes, NULL when nothing. */
static const char *pattern_bytes(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '\0')
			return "pattern contains a NUL byte";
		if (c < 0x20 || c == 0x7f)
			return "pattern contains a control character";
	}
	return utf8_valid(p, len) ? NULL : "pattern is not valid UTF-8";
}

int validate_path_pattern(const char *pattern, size_t len, char *err, size_t errlen)
{
	const char *why;
	size_t depth = 0;

	if (!pattern || len == 0) {
		snprintf(err, errlen, "pattern is empty");
		return -EINVAL;
	}
	if (len > VALIDATE_PATH_MAX_LEN) {
		snprintf(err, errlen, "pattern is longer than %d bytes", VALIDATE_PATH_MAX_LEN);
		return -EINVAL;
	}
	if ((why = pattern_bytes(pattern, len))) {
		snprintf(err, errlen, "%s", why);
		return -EINVAL;
	}
	if (pattern[0] == '/') {
		snprintf(err, errlen, "pattern must be relative to the job directory (no leading '/')");
		return -EINVAL;
	}
	for (size_t at = 0; at <= len;) {
		const char *slash = memchr(pattern + at, '/', len - at);
		size_t n = slash ? (size_t)(slash - (pattern + at)) : len - at;

		if (++depth > VALIDATE_PATH_MAX_DEPTH) {
			snprintf(err, errlen, "pattern is more than %d names deep",
				 VALIDATE_PATH_MAX_DEPTH);
			return -EINVAL;
		}
		if (n == 0) {
			snprintf(err, errlen, "pattern has an empty part (a trailing or double '/')");
			return -EINVAL;
		}
		if (n <= 2 && memcmp(pattern + at, "..", n) == 0) {
			snprintf(err, errlen, "pattern part '%.*s' names no file of the job directory",
				 (int)n, pattern + at);
			return -EINVAL;
		}
		at += n + 1;
	}
	return 0;
}

bool validate_paths_clash(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb;

	if (strncmp(a, b, n) != 0)
		return false;
	return la == lb || (la < lb ? b[la] : a[lb]) == '/';
}

const char *validate_codize_filename(const char *name, size_t len)
{
	char bad = 0;

	switch (validate_filename_check(&validate_filename_codize, name, len, &bad)) {
	case VALIDATE_FILENAME_OK:
		return NULL;
	case VALIDATE_FILENAME_EMPTY:
		return "must not be empty";
	case VALIDATE_FILENAME_TOO_LONG:
		return "file name too long (max: 255 bytes)";
	case VALIDATE_FILENAME_BAD_BYTE:
		return "contains invalid characters";
	case VALIDATE_FILENAME_DOTS:
		return "not allowed";
	case VALIDATE_FILENAME_BAD_FIRST:
		break;
	}
	return "must not start with '-'";
}

/*
 * Match one bracket expression starting after '['. Returns the position
 * after the closing ']' and sets *hit, or NULL when the bracket is not
 * closed (the '[' is then an ordinary character, as in fnmatch).
 */
static const char *match_bracket(const char *p, unsigned char c, bool *hit)
{
	bool neg = false, found = false;
	bool first = true;

	if (*p == '!' || *p == '^') {
		neg = true;
		p++;
	}
	while (*p && (first || *p != ']')) {
		unsigned char lo = (unsigned char)*p, hi;

		first = false;
		if (lo == '\\' && p[1])
			lo = (unsigned char)*++p;
		p++;
		hi = lo;
		if (*p == '-' && p[1] && p[1] != ']') {
			hi = (unsigned char)p[1];
			if (hi == '\\' && p[2]) {
				hi = (unsigned char)p[2];
				p++;
			}
			p += 2;
		}
		if (c >= lo && c <= hi)
			found = true;
	}
	if (*p != ']')
		return NULL;
	*hit = found != neg;
	return p + 1;
}

/*
 * Iterative matcher: on a mismatch after a '*', retry with the star eating
 * one more byte. Only the last star needs remembering, so the cost stays
 * O(len(pattern) * len(flag)) whatever the pattern.
 */
bool validate_flag_glob_match(const char *pattern, const char *flag)
{
	const char *p = pattern, *s = flag;
	const char *star_p = NULL, *star_s = NULL;

	while (*s) {
		const char *next = NULL;
		bool hit = false;

		switch (*p) {
		case '*':
			while (*p == '*')
				p++;
			star_p = p;
			star_s = s;
			continue;
		case '?':
			next = p + 1;
			hit = true;
			break;
		case '[':
			next = match_bracket(p + 1, (unsigned char)*s, &hit);
			if (next)
				break;
			hit = *s == '[';
			next = p + 1;
			break;
		case '\\':
			if (p[1]) {
				hit = *s == p[1];
				next = p + 2;
				break;
			}
			/* a trailing backslash matches itself */
			/* fall through */
		default:
			hit = *p && *p == *s;
			next = p + 1;
			break;
		}
		if (hit) {
			p = next;
			s++;
			continue;
		}
		if (!star_p)
			return false;
		p = star_p;
		s = ++star_s;
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

/*
 * The built-in deny-list, applied whatever a language's allow-list says.
 * Matching is case-sensitive, as the compilers' own option parsing is.
 * Every flag is one argv element, so an option that takes its value in the
 * next element is refused in its bare form: that value would reach the
 * tool without being checked as what it is.
 */
struct deny_rule {
	const char *pattern;
	const char *why;
};

static const struct deny_rule deny_rules[] = {
	/* gcc / clang driver: code execution and tool substitution */
	{ "-fplugin*", "loads a compiler plugin (also -fplugin-arg-*)" },
	{ "-iplugindir*", "changes where compiler plugins are loaded from" },
	{ "-B*", "changes where the driver finds cc1, as and ld" },
	{ "-specs*", "spec files rewrite the driver's commands" },
	{ "--specs*", "spec files rewrite the driver's commands" },
	{ "-wrapper*", "runs every subcommand under another program" },
	{ "-fuse-ld*", "picks the linker program" },
	{ "-Wl,*", "passes raw options to the linker" },
	{ "-Wa,*", "passes raw options to the assembler" },
	{ "-Wp,*", "passes raw options to the preprocessor" },
	{ "-Xlinker*", "passes raw options to the linker" },
	{ "-Xassembler*", "passes raw options to the assembler" },
	{ "-Xpreprocessor*", "passes raw options to the preprocessor" },
	{ "-Xclang*", "passes raw options to clang's frontend (-load)" },
	{ "-T*", "linker script" },
	{ "--sysroot*", "changes where headers, crt files and libraries come from" },
	{ "-isysroot*", "changes where headers come from" },
	{ "-iprefix*", "include prefix outside the job directory" },
	{ "-iwithprefix*", "include prefix outside the job directory" },
	{ "-imultilib*", "changes the library subdirectory" },
	/* gcc: inputs the runner does not control */
	{ "@*", "response file: reads more options from a file" },
	{ "-x*", "overrides the source language" },
	{ "-include*", "injects a file into the compilation" },
	{ "-imacros*", "injects a file into the compilation" },
	{ "-fprofile-use*", "reads profile data from a path" },
	{ "-fauto-profile*", "reads profile data from a path" },
	/* gcc: outputs the runner owns, or files written to chosen paths */
	{ "-o*", "the runner names the output" },
	{ "-save-temps*", "writes intermediate files" },
	{ "-dump*", "names auxiliary outputs (-dumpdir, -dumpbase)" },
	{ "-fdump-*", "writes compiler dumps" },
	{ "-fprofile-generate*", "writes profile data to a path" },
	{ "-fprofile-dir*", "writes profile data to a path" },
	{ "-fopt-info*=*", "writes optimisation reports to a path" },
	{ "-aux-info*", "writes prototypes to a path" },
	/* gcc's dependency options exactly, so that other compilers' -M<word>
	 * (Free Pascal's language modes) stay usable */
	{ "-M", "dependency output instead of a build" },
	{ "-MM", "dependency output instead of a build" },
	{ "-MG", "dependency output instead of a build" },
	{ "-MP", "dependency output" },
	{ "-MD", "writes dependency files" },
	{ "-MMD", "writes dependency files" },
	{ "-MF*", "writes dependency output to a chosen path" },
	{ "-MT*", "dependency target from the request" },
	{ "-MQ*", "dependency target from the request" },
	{ "-print-*", "prints tool paths instead of building" },
	{ "--print*", "prints tool paths instead of building" },
	{ "-c", "stops before linking: there would be no artifact" },
	{ "-e", "sets the entry point, or evaluates code (node, ruby, perl)" },
	{ "--entry*", "sets the entry point" },
	/* bare forms whose value would be the next, unchecked element */
	{ "-I", "takes its path from the next argument" },
	{ "-L", "takes its path from the next argument" },
	{ "-l", "takes its library from the next argument" },
	{ "-isystem", "takes its path from the next argument" },
	{ "-idirafter", "takes its path from the next argument" },
	{ "-iquote", "takes its path from the next argument" },
	{ "-z", "takes a linker keyword from the next argument" },
	{ "-u", "takes a symbol from the next argument" },
	{ "-X", "takes its value from the next argument" },
	{ "-D", "takes its value from the next argument" },
	{ "-U", "takes its value from the next argument" },
	/* javac */
	{ "-processor*", "runs annotation processors (also -processorpath)" },
	{ "--processor-path*", "annotation processor path" },
	{ "--processor-module-path*", "annotation processor path" },
	{ "-J*", "passes options to the JVM running javac" },
	{ "-Xplugin*", "loads a compiler plugin (javac, kotlinc)" },
	{ "-Xcompiler-plugin*", "loads a compiler plugin (kotlinc)" },
	{ "-d", "output directory is the runner's" },
	{ "-s", "output directory is the runner's" },
	{ "-h", "output directory is the runner's" },
	{ "-p", "module path from the next argument" },
	{ "-cp*", "class path outside the job directory" },
	{ "-classpath*", "class path outside the job directory" },
	{ "--class-path*", "class path outside the job directory" },
	{ "-sourcepath*", "source path outside the job directory" },
	{ "--source-path*", "source path outside the job directory" },
	{ "--module-path*", "module path outside the job directory" },
	{ "--upgrade-module-path*", "replaces system modules" },
	{ "--patch-module*", "replaces module classes" },
	{ "--system*", "replaces the system modules" },
	{ "-bootclasspath*", "replaces the boot class path" },
	{ "-Xbootclasspath*", "replaces the boot class path" },
	{ "-extdirs*", "extension directories" },
	{ "-endorseddirs*", "endorsed directories" },
	/* java (run flags) */
	{ "-javaagent*", "loads an agent" },
	{ "-agentlib*", "loads a native agent" },
	{ "-agentpath*", "loads a native agent" },
	{ "-XX:OnOutOfMemoryError*", "runs a command" },
	{ "-XX:OnError*", "runs a command" },
	{ "-XX:Flags*", "reads options from a file" },
	{ "-XX:VMOptionsFile*", "reads options from a file" },
	{ "-XX:CompileCommandFile*", "reads a file" },
	{ "-XX:ErrorFile*", "writes a file" },
	{ "-XX:HeapDumpPath*", "writes a file" },
	{ "-XX:SharedArchiveFile*", "maps an archive file" },
	{ "-XX:ArchiveClassesAtExit*", "writes an archive file" },
	{ "-Xlog*", "may write log files" },
	{ "-Xloggc*", "writes a file" },
	{ "-Djava.*", "JVM system property (library path, class loader...)" },
	{ "-Djdk.*", "JVM system property" },
	{ "-Dsun.*", "JVM system property" },
	{ "-splash*", "reads an image file" },
	{ "-jar", "runs another archive than the artifact" },
	/* rustc */
	{ "-C", "takes its codegen option from the next argument" },
	{ "-C*linker*", "picks the linker program" },
	{ "-C*link-arg*", "passes raw options to the linker" },
	{ "-C*link-self-contained*", "changes the linked crt objects" },
	{ "-C*llvm-args*", "passes raw options to LLVM" },
	{ "-C*passes*", "runs extra LLVM passes" },
	{ "-C*profile-*", "profile data paths" },
	{ "-C*incremental*", "incremental cache path" },
	{ "-C*dlltool*", "picks a tool program" },
	{ "--codegen*", "codegen options (see -C)" },
	{ "-Z*", "unstable options" },
	{ "--extern*", "links a crate from a path" },
	{ "--out-dir*", "output directory is the runner's" },
	{ "--emit*", "writes outputs to chosen paths" },
	/* go build (go accepts both - and --) */
	{ "-toolexec*", "runs every tool under another program" },
	{ "--toolexec*", "runs every tool under another program" },
	{ "-exec*", "runs the binary under another program" },
	{ "--exec*", "runs the binary under another program" },
	{ "-ldflags*", "raw linker options" },
	{ "--ldflags*", "raw linker options" },
	{ "-gcflags*", "raw compiler options" },
	{ "--gcflags*", "raw compiler options" },
	{ "-asmflags*", "raw assembler options" },
	{ "--asmflags*", "raw assembler options" },
	{ "-gccgoflags*", "raw compiler options" },
	{ "--gccgoflags*", "raw compiler options" },
	{ "-overlay*", "replaces source files from a file" },
	{ "--overlay*", "replaces source files from a file" },
	{ "-modfile*", "reads another go.mod" },
	{ "--modfile*", "reads another go.mod" },
	{ "-pkgdir*", "package directory outside the job" },
	{ "--pkgdir*", "package directory outside the job" },
	{ "-compiler*", "picks the compiler program" },
	{ "--compiler*", "picks the compiler program" },
	{ "-pgo*", "reads a profile from a path" },
	/* ocaml */
	{ "-pp*", "runs a preprocessor command (also -ppx)" },
	{ "-cc*", "picks the C compiler or passes it options" },
	/* interpreters' run flags */
	{ "-r", "requires a module from the next argument" },
	{ "--require*", "loads a module before the program" },
	{ "--import*", "loads a module before the program" },
	{ "--loader*", "replaces the module loader" },
	{ "--experimental-loader*", "replaces the module loader" },
	{ "--eval*", "evaluates code instead of the program" },
	{ "-m", "runs a module instead of the program" },
	{ "--inspect*", "opens a debugger port" },
	{ "--env-file*", "reads a file" },
	{ "--openssl-config*", "reads a file" },
	{ "--redirect-warnings*", "writes a file" },
	{ "--report*", "writes diagnostic reports" },
	{ "--diagnostic-dir*", "writes diagnostic files" },
	{ "--cpu-prof*", "writes profiles" },
	{ "--heap-prof*", "writes profiles" },
	{ "--prof*", "writes profiles" },
	{ "--snapshot-blob*", "reads or writes a snapshot" },
	{ "--build-snapshot*", "writes a snapshot" },
	{ "--icu-data-dir*", "reads data from a path" },
	{ "--tls-keylog*", "writes a file" },
	{ "--experimental-policy*", "reads a file" },
};

/*
 * gcc accepts any unambiguous abbreviation of its "--" long options, each
 * an alias of a short one: "--pre=/x" is "--prefix=/x" is "-B/x". A "--"
 * flag whose name (up to '=') is a prefix of one of these, or which starts
 * with one of them, is refused.
 */
static const char *const gcc_long_denied[] = {
	"--prefix",              /* -B */
	"--specs",
	"--for-linker",          /* -Xlinker */
	"--for-assembler",       /* -Wa */
	"--force-link",          /* -u */
	"--include",             /* -include, and --include-* prefixes */
	"--include-directory",   /* -I */
	"--include-directory-after",
	"--include-prefix",
	"--include-with-prefix",
	"--include-with-prefix-after",
	"--include-with-prefix-before",
	"--imacros",
	"--library-directory",   /* -L */
	"--library",             /* -l */
	"--language",            /* -x */
	"--output",              /* -o */
	"--output-class-directory",
	"--dump",                /* -d */
	"--dumpbase",
	"--dumpdir",
	"--save-temps",
	"--print-file-name",
	"--print-prog-name",
	"--print-search-dirs",
	"--entry",               /* -e */
	"--sysroot",
	"--dependencies",        /* -M */
	"--user-dependencies",
	"--write-dependencies",  /* -MD */
	"--write-user-dependencies",
	"--compile",             /* -c */
	"--no-standard-libraries",
};

static bool gcc_long_abbrev_denied(const char *flag, const char **hit)
{
	size_t n;

	if (strncmp(flag, "--", 2) != 0 || flag[2] == '\0')
		return false;
	n = strcspn(flag, "=");
	for (size_t i = 0; i < ARRAY_SIZE(gcc_long_denied); i++) {
		const char *name = gcc_long_denied[i];
		size_t ln = strlen(name);

		if ((n <= ln && strncmp(flag, name, n) == 0) || strncmp(flag, name, ln) == 0) {
			*hit = name;
			return true;
		}
	}
	return false;
}

static bool has_dotdot(const char *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if (p[i] == '.' && p[i + 1] == '.' && (i == 0 || p[i - 1] == '/') &&
		    (i + 2 == n || p[i + 2] == '/'))
			return true;
	return false;
}

/*
 * A path given to a flag may be relative to the job directory (the tools'
 * working directory) or absolute under the box, and never climbs with "..".
 */
static bool path_in_box(const char *p, size_t n)
{
	const size_t bl = sizeof(JAILPATH_BOX) - 1;

	if (has_dotdot(p, n))
		return false;
	if (n >= bl && strncmp(p, JAILPATH_BOX, bl) == 0 && (n == bl || p[bl] == '/'))
		return true;
	return n == 0 || p[0] != '/';
}

static bool is_path_sep(char c)
{
	return c == '/' || c == '=' || c == ',' || c == ':' || c == '\0';
}

/*
 * Paths inside a flag: no ".." component anywhere, and every absolute path
 * (at the start, or after '=', ',' or ':') under the box.
 */
static bool flag_paths_ok(const char *flag)
{
	for (size_t i = 0; flag[i]; i++) {
		bool start = i == 0 || flag[i - 1] == '=' || flag[i - 1] == ',' ||
			     flag[i - 1] == ':' || flag[i - 1] == '/';

		if (start && flag[i] == '.' && flag[i + 1] == '.' && is_path_sep(flag[i + 2]))
			return false;
		if (flag[i] == '/' && (i == 0 || flag[i - 1] == '=' || flag[i - 1] == ',' ||
				       flag[i - 1] == ':')) {
			size_t n = strcspn(flag + i, ",:");

			if (!path_in_box(flag + i, n))
				return false;
		}
	}
	return true;
}

/* -I/-L style options joined to their path: the path must stay in the box. */
static const char *const path_options[] = {
	"-isystem", "-idirafter", "-iquote", "-I", "-L",
};

static bool path_option_ok(const char *flag)
{
	for (size_t i = 0; i < ARRAY_SIZE(path_options); i++) {
		size_t n = strlen(path_options[i]);
		const char *v;

		if (strncmp(flag, path_options[i], n) != 0)
			continue;
		v = flag + n;
		/* rustc's -L takes an optional KIND= before the path */
		if (strcmp(path_options[i], "-L") == 0 && strchr(v, '=') && v[0] != '/')
			v = strchr(v, '=') + 1;
		return *v == '\0' || path_in_box(v, strlen(v));
	}
	return true;
}

int validate_flag(const char *const *allow, size_t nallow, const char *flag,
		  char *err, size_t errlen)
{
	size_t len;
	const char *abbrev = NULL;
	bool allowed = false;

	if (!flag || !*flag) {
		snprintf(err, errlen, "empty flag");
		return -EINVAL;
	}
	len = strnlen(flag, FLAG_MAX_LEN + 1);
	if (len > FLAG_MAX_LEN) {
		snprintf(err, errlen, "flag longer than %d bytes", FLAG_MAX_LEN);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)flag[i];

		if (c < 0x20 || c == 0x7f) {
			snprintf(err, errlen, "flag contains a control character");
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < nallow && !allowed; i++)
		allowed = allow[i] && validate_flag_glob_match(allow[i], flag);
	if (!allowed) {
		snprintf(err, errlen, "flag '%s' is not in the language's allow-list", flag);
		return -EINVAL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(deny_rules); i++) {
		if (validate_flag_glob_match(deny_rules[i].pattern, flag)) {
			snprintf(err, errlen, "flag '%s' is refused: %s", flag, deny_rules[i].why);
			return -EINVAL;
		}
	}
	if (gcc_long_abbrev_denied(flag, &abbrev)) {
		snprintf(err, errlen, "flag '%s' is refused: gcc reads it as %s", flag, abbrev);
		return -EINVAL;
	}
	if (!path_option_ok(flag) || !flag_paths_ok(flag)) {
		snprintf(err, errlen, "flag '%s' is refused: it names a path outside the job directory",
			 flag);
		return -EINVAL;
	}
	return 0;
}
