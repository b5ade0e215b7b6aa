#include "autoconf.h"

#include "common/caps.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/prctl.h>

int caps_keep(const cap_value_t *keep, size_t n)
{
	cap_t caps = cap_init();
	int rc = 0;

	if (!caps)
		return -errno;
	/* The bounding set first: it needs CAP_SETPCAP, which goes next. */
	for (cap_value_t v = 0; v <= CAP_LAST_CAP; v++) {
		bool kept = false;

		for (size_t i = 0; i < n; i++)
			kept |= keep[i] == v;
		if (!kept && prctl(PR_CAPBSET_DROP, v, 0, 0, 0) < 0 && errno != EINVAL) {
			rc = -errno;
			goto out;
		}
	}
	if ((n && (cap_set_flag(caps, CAP_PERMITTED, (int)n, keep, CAP_SET) < 0 ||
		   cap_set_flag(caps, CAP_EFFECTIVE, (int)n, keep, CAP_SET) < 0)) ||
	    cap_set_proc(caps) < 0) {
		rc = -errno;
		goto out;
	}
	/* Dropped for good: nothing exec'd later can regain them. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		rc = -errno;
out:
	cap_free(caps);
	return rc;
}
