/*
 * node-semver's version ranges, read and matched as node-semver does it.
 * Piston picks a runtime with semver.satisfies(runtime.version, range),
 * and its clients send the range.
 */
#ifndef GOBOXD_SEMVER_H
#define GOBOXD_SEMVER_H

#include <stdbool.h>

/*
 * Whether the release version (x.y.z) satisfies range as node-semver's
 * satisfies() would, Piston's test of a request's "version": "*", "3",
 * "3.11", "3.x", "3.11.x", "3.11.2", the operators ^ ~ ~> >= <= > < =, a
 * hyphen range "3.10 - 3.12", space-separated ANDs and "||" ORs. A range
 * node-semver cannot parse matches nothing.
 */
bool semver_range_matches(const char *range, const char *version);

#endif
