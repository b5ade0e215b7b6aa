/*
 * One language as its file gives it, with its steps and the schema's
 * defaults. docs/languages.md is the schema's reference; langtab.h holds
 * the table of languages.
 */
#ifndef GOBOXD_LANG_H
#define GOBOXD_LANG_H

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

/* The longest id, alias or Codize runtime name. */
#define LANG_ID_MAX 32

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
	/* its tests have a network unless the request says "network": false,
	 * where the server gives one (--network); default no */
	bool network;
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

#endif
