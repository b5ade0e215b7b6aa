/*
 * What goboxd's own request (POST /run) judges its program against: the
 * tests, the files they name, stop_on_failure and the groups, the
 * comparison. Read after the program (api_run.c), whose files the tests'
 * may not be.
 */
#ifndef GOBOXD_API_RUN_TESTS_H
#define GOBOXD_API_RUN_TESTS_H

#include <cjson/cJSON.h>

#include "worker/http/api_run_read.h"

/*
 * root's "tests" (each test's stdin, expected output and files, checked
 * against the request's files and artifact), "stop_on_failure" and
 * "groups", and "compare" into c->r. 0, or -EINVAL with c->e filled.
 */
int api_run_tests_parse(struct native_ctx *c, const cJSON *root);

#endif
