/*
 * The table of wire formats (a struct api_format each, api.h): goboxd's
 * own, Codize's, Judge0's and Piston's, each parser, answer and error
 * behind one signature. The worker finds a request's format by its path
 * and a stored submission's by its name; it never asks which API a job
 * came by.
 */
#ifndef GOBOXD_WIRE_H
#define GOBOXD_WIRE_H

#include "worker/http/api.h"

/* The formats, WIRE_FORMATS of them, goboxd's own first. */
#define WIRE_FORMATS 4
extern const struct api_format wire_formats[WIRE_FORMATS];

/* Which format a path speaks: every path speaks one (goboxd's own,
 * when no other API's). */
const struct api_format *wire_of_path(const char *path);
/* The format of that name (a stored submission's "api"), NULL: none. */
const struct api_format *wire_named(const char *name);

#endif
