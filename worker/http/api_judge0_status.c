/* Judge0's statuses (api_judge0_status.h). */
#include "autoconf.h"

#include "worker/http/api_judge0_status.h"

#include <stddef.h>

static const char *const status_names[] = {
	[J0_IN_QUEUE] = "In Queue",
	[J0_PROCESSING] = "Processing",
	[J0_ACCEPTED] = "Accepted",
	[J0_WRONG_ANSWER] = "Wrong Answer",
	[J0_TIME_LIMIT] = "Time Limit Exceeded",
	[J0_COMPILATION_ERROR] = "Compilation Error",
	[J0_SIGSEGV] = "Runtime Error (SIGSEGV)",
	[J0_SIGXFSZ] = "Runtime Error (SIGXFSZ)",
	[J0_SIGFPE] = "Runtime Error (SIGFPE)",
	[J0_SIGABRT] = "Runtime Error (SIGABRT)",
	[J0_NZEC] = "Runtime Error (NZEC)",
	[J0_RUNTIME_OTHER] = "Runtime Error (Other)",
	[J0_INTERNAL_ERROR] = "Internal Error",
	[J0_EXEC_FORMAT_ERROR] = "Exec Format Error",
};

const char *api_judge0_status_name(int id)
{
	return id >= J0_IN_QUEUE && id <= J0_EXEC_FORMAT_ERROR ? status_names[id] : NULL;
}
