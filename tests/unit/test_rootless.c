#include "autoconf.h"

#include "master/rootless.h"

#include <criterion/criterion.h>
#include <errno.h>

static const char subuid[] =
	"# not a range\n"
	"alice:100000:65536\n"
	"bob:165536:1000\n"
	"bob:300000:70000\n"
	"1001:400000:65536\n"
	"carol:x:65536\n"
	"dave:0:65536\n"
	"erin:4294967000:65536\n"
	"frank:500000";

Test(rootless, a_range_by_name_or_uid_that_holds_what_is_needed)
{
	struct rootless_range r = { 0, 0 };

	cr_assert_eq(rootless_find_range(subuid, "alice", 1000, 61025, &r), 0);
	cr_assert_eq(r.start, 100000);
	cr_assert_eq(r.count, 65536);
	/* bob's first range is too small: the next one of his */
	cr_assert_eq(rootless_find_range(subuid, "bob", 1002, 61025, &r), 0);
	cr_assert_eq(r.start, 300000);
	cr_assert_eq(r.count, 70000);
	/* by uid, when the user's name is not listed (or unknown) */
	cr_assert_eq(rootless_find_range(subuid, NULL, 1001, 61025, &r), 0);
	cr_assert_eq(r.start, 400000);
}

Test(rootless, nothing_for_a_user_without_a_fit_range)
{
	struct rootless_range r = { 7, 7 };

	cr_assert_eq(rootless_find_range(subuid, "alice", 1000, 70000, &r), -ENOENT);
	cr_assert_eq(rootless_find_range(subuid, "mallory", 1003, 1, &r), -ENOENT);
	/* no prefix matches: "ali" is not alice */
	cr_assert_eq(rootless_find_range(subuid, "ali", 1003, 1, &r), -ENOENT);
	/* malformed, starting at 0, past 32 bits, cut short */
	cr_assert_eq(rootless_find_range(subuid, "carol", 1004, 1, &r), -ENOENT);
	cr_assert_eq(rootless_find_range(subuid, "dave", 1005, 1, &r), -ENOENT);
	cr_assert_eq(rootless_find_range(subuid, "erin", 1006, 1, &r), -ENOENT);
	cr_assert_eq(rootless_find_range(subuid, "frank", 1007, 1, &r), -ENOENT);
	cr_assert_eq(rootless_find_range("", "alice", 1000, 1, &r), -ENOENT);
	cr_assert_eq(r.start, 7, "untouched on failure");
}

Test(rootless, the_sandbox_ids_fit_a_default_range)
{
	struct config c = { .sandbox_uid_base = 60000 };

	/* usermod --add-subuids 100000-165535 gives 65536 */
	cr_assert_leq(rootless_ids_needed(&c), 65536);
	cr_assert_gt(rootless_ids_needed(&c), 60000);
}

/* uid 0 mapped into a child namespace needs CAP_SETFCAP besides the
 * other two (Linux 5.12): a pod given SETUID and SETGID alone is refused
 * at start with the one it lacks, not by newuidmap's EPERM. */
Test(rootless, root_needs_setuid_setgid_and_setfcap)
{
	cap_t caps = cap_init();
	cap_value_t two[] = { CAP_SETUID, CAP_SETGID };
	cap_value_t fcap[] = { CAP_SETFCAP };
	char out[64];

	cr_assert_eq(rootless_root_lacks(caps, out, sizeof(out)), 3);
	cr_assert_str_eq(out, "CAP_SETUID, CAP_SETGID, CAP_SETFCAP");
	cr_assert_eq(cap_set_flag(caps, CAP_EFFECTIVE, 2, two, CAP_SET), 0);
	cr_assert_eq(rootless_root_lacks(caps, out, sizeof(out)), 1);
	cr_assert_str_eq(out, "CAP_SETFCAP");
	/* permitted is not enough: newuidmap acts with what is effective */
	cr_assert_eq(cap_set_flag(caps, CAP_PERMITTED, 1, fcap, CAP_SET), 0);
	cr_assert_eq(rootless_root_lacks(caps, out, sizeof(out)), 1);
	cr_assert_eq(cap_set_flag(caps, CAP_EFFECTIVE, 1, fcap, CAP_SET), 0);
	cr_assert_eq(rootless_root_lacks(caps, out, sizeof(out)), 0);
	cr_assert_str_eq(out, "");
	cap_free(caps);
}
