/*
 * The language table: every languages/NAME.yaml loaded with libyaml into
 * an immutable table. docs/languages.md is the schema's reference.
 */
#ifndef GOBOXD_LANGTAB_H
#define GOBOXD_LANGTAB_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/limits.h"

struct lang_step {
	char *cmd;               /* may contain placeholders */
	char **args;             /* may contain placeholders */
	char **env;              /* "KEY=VALUE", VALUE may contain placeholders */
	struct limits limits;    /* defaults for this step */
	char **flag_allow;       /* glob patterns; empty: no flags accepted */
	char **default_flags;    /* {{flags}} when the request gives none */
	unsigned open_files;     /* RLIMIT_NOFILE of the step's program */
};

/*
 * What Piston's compile or run script runs where it differs from the
 * step's own command (the keys piston.build and piston.run): used for
 * Piston's requests only, with the step's env, limits and flags. NULL
 * cmd or args: the step's.
 */
struct lang_piston_cmd {
	char *cmd;
	char **args;
};

/* Default open_files of build and run steps. */
#define LANG_BUILD_OPEN_FILES 256
#define LANG_RUN_OPEN_FILES 64

struct lang {
	char *id;                /* [a-z0-9][a-z0-9_+.-]* */
	char *name;
	char *version_hint;      /* optional free text, e.g. "Debian 12 gcc 12.2" */
	char *source_filename;   /* NULL when source_from_request */
	bool source_from_request;
	/*
	 * source_from_request only: the name when the request gives none
	 * (NULL: the entry names the file, or the request must). A request's
	 * own name must then end in this name's extension.
	 */
	char *source_default;
	char *artifact;          /* NULL: no artifact */
	bool artifact_from_request;
	bool has_build;
	struct lang_step build;
	struct lang_step run;
	char **aliases;          /* extra names, e.g. Codize runtimes "python" */
	char **probe;            /* argv run in the sandbox by /readyz; [0] = cmd */
	char **ro_mounts;        /* extra read-only host paths bound in every jail */
	bool tmp_exec;           /* programs may execute files from /tmp (default no) */
	/*
	 * entry: the class a JVM language runs, inferred from the source: the
	 * last group of the first pattern that matches names it, else
	 * entry_default. NULL entry_res: the language infers nothing.
	 */
	char **entry_patterns;   /* POSIX extended regular expressions */
	regex_t *entry_res;      /* compiled, one per pattern */
	regex_t *entry_locate;   /* each as "^.*(P)": where matches are (entry.c) */
	char *entry_default;     /* may hold {{stem}} and {{stem_class}} */
	char *entry_suffix;      /* source file name = entry + suffix; "" if none */
	char *codize_runtime;    /* name served on /v1/run, NULL: not served there */
	char **codize_refused;   /* /v1/run file names refused for this runtime */
	/*
	 * Judge0's API: the language's id there (0: not served), the name
	 * GET /languages shows, the ids listed beside it (Judge0 CE 1.13.1
	 * lists them as active: other versions that clients pick from the
	 * list), and the ids of its older versions, which clients hard-code
	 * too (both 0-terminated).
	 */
	unsigned judge0_id;
	char *judge0_name;
	/* A project (Judge0's Multi-file program): no source_code, the
	 * program is the additional_files archive, its source_filename file
	 * the entry. */
	bool judge0_project;
	unsigned *judge0_listed;
	unsigned *judge0_older;
	/* Piston's API: the runtime's name, its version (x.y.z), its aliases. */
	char *piston_runtime;
	char *piston_version;
	char **piston_aliases;
	/*
	 * The extension Piston's compile script gives the files it builds
	 * (".c"), NULL: none; whether Piston answers a compile stage (false
	 * where its run script builds: go run, java's source launcher);
	 * and its own commands where they differ from the steps'.
	 */
	char *piston_extension;
	bool piston_compiled;
	struct lang_piston_cmd piston_build;
	struct lang_piston_cmd piston_run;
	char **debian_packages;  /* install step (setup script) */
	char **npm_packages;     /* install step (setup script) */
	char *file;              /* origin, for messages */
	int line;
};

/*
 * Built-in limits for the keys a step's "limits" leaves out (cpu_time_s
 * defaults to the step's wall_time_s). A default above the server maximum
 * is lowered to it; a value written in the file above it is an error.
 */
#define LANG_DEFAULT_WALL_MS 5000u
#define LANG_DEFAULT_MEMORY_KB (256u * 1024u)
#define LANG_DEFAULT_MAX_PROCESSES 64u
#define LANG_DEFAULT_FSIZE_KB (64u * 1024u)
#define LANG_DEFAULT_OUTPUT_KB 64u

/* The literal that makes source_filename or artifact come from the request. */
#define LANG_FROM_REQUEST "from_request"

struct langtab;

/*
 * Load every NAME.yaml under dir (byte order of names; names starting with
 * "." and other files are skipped). Validates: unknown keys, missing fields,
 * bad ids, duplicate ids or aliases, unknown or misplaced placeholders,
 * limits above max (a zero field of max, or max NULL, means no maximum).
 * Returns 0 and *out, or -EINVAL with "file:line: reason" in err. A directory
 * without any language is an error.
 */
int langtab_load(const char *dir, const struct limits *max,
		 struct langtab **out, char *err, size_t errlen);
void langtab_free(struct langtab *t);

size_t langtab_count(const struct langtab *t);
/*
 * Every language's extra read-only mounts, in one NULL-terminated array
 * of borrowed strings (duplicates kept): a jail is made before its job's
 * language is known. Free the array, not the strings.
 */
const char **langtab_mounts(const struct langtab *t);
const struct lang *langtab_at(const struct langtab *t, size_t i);
/* By id, then by alias. NULL when unknown. */
const struct lang *langtab_find(const struct langtab *t, const char *id);
/*
 * The entry class of src for a language with an entry section, as a
 * malloc'd string: the first pattern's match, else the default expanded
 * for the source file name (a match or a default that, with the suffix,
 * is not a plain file name does not count). NULL for other languages, or
 * when even the default gives no plain file name (a default built from
 * name, or name NULL where the default needs it).
 */
char *langtab_infer_entry(const struct lang *l, const char *src, const char *name);

/* By Codize runtime name (the language's codize.runtime). NULL when unknown. */
const struct lang *langtab_find_runtime(const struct langtab *t, const char *runtime);
/*
 * The Codize runtime names of the table, sorted byte-wise, each in double
 * quotes, joined by ", ": "\"bash\", \"go\"". Empty when none is served.
 * Returns the length written (truncated to fit n).
 */
size_t langtab_runtime_list(const struct langtab *t, char *buf, size_t n);

/* By Judge0 language id, its own or an older one's. NULL when unknown. */
const struct lang *langtab_find_judge0(const struct langtab *t, unsigned id);
/* By Piston runtime name or alias. NULL when unknown. */
const struct lang *langtab_find_piston(const struct langtab *t, const char *name);
/*
 * The command line a step runs: its own cmd and args, or what instead
 * (a language's piston.build or piston.run, for Piston's requests) gives
 * in their place, each where it gives one (instead NULL: none).
 */
void langtab_step_cmdline(const struct lang_step *step, const struct lang_piston_cmd *instead,
			  const char **cmd, char *const **args);

#endif
