/*
 * Judge0's statuses: the numbers Judge0 gives them and their
 * descriptions. A finished job's result picks one
 * (api_judge0_result.c), a stored submission shows one
 * (api_judge0_show.c), /statuses lists them (api_judge0_info.c).
 */
#ifndef GOBOXD_API_JUDGE0_STATUS_H
#define GOBOXD_API_JUDGE0_STATUS_H

/* Statuses, as Judge0 numbers them. */
enum judge0_status {
	J0_IN_QUEUE = 1,
	J0_PROCESSING,
	J0_ACCEPTED,
	J0_WRONG_ANSWER,
	J0_TIME_LIMIT,
	J0_COMPILATION_ERROR,
	J0_SIGSEGV,
	J0_SIGXFSZ,
	J0_SIGFPE,
	J0_SIGABRT,
	J0_NZEC,
	J0_RUNTIME_OTHER,
	J0_INTERNAL_ERROR,
	J0_EXEC_FORMAT_ERROR,
};

/* Judge0's description of a status ("Wrong Answer"), NULL past 14. */
const char *api_judge0_status_name(int id);

#endif
