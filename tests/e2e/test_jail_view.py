"""What a program sees of its jail: mount flags, a full /tmp, /etc, /dev
and /proc, through the real daemon under either jail driver
(GOBOXD_TEST_JAIL). Each case is a shell script run as one test and what
its output must be; docs/security.md ("The file tree") says why the jail
looks like this.
"""
import base64
import os
import re

import pytest

from conftest import dump, run_ok as run

# /usr/lib64 is x86-64's; the policy skips what the host lacks.
SYSTEM_DIRS = [d for d in ("/usr", "/usr/bin", "/usr/lib", "/usr/lib64") if os.path.isdir(d)]

# Every line of the mount table for these mount points, flags and all.
MOUNT_FLAGS = r'''
for mp in SYSTEM_DIRS /tmp /proc; do
  n=0
  while read -r dev point type opts rest; do
    [ "$point" = "$mp" ] || continue
    n=$((n+1))
    for f in ro nosuid nodev noexec; do
      case ",$opts," in *",$f,"*) printf ' %s' $f;; esac
    done
    echo " $mp"
  done < /proc/mounts
  [ $n -gt 0 ] || echo "no mount $mp"
done
cp /usr/bin/id /tmp/id && /tmp/id
echo "exec from /tmp: $?"
'''.replace("SYSTEM_DIRS", " ".join(SYSTEM_DIRS))

# The system directories read-only, nosuid and nodev, each a mount of its
# own; /tmp (the program's own and the placeholder under it) noexec too,
# and a binary copied there does not run; /proc read-only under both
# drivers.
MOUNT_FLAGS_SEEN = ("".join(" ro nosuid nodev %s\n" % d for d in SYSTEM_DIRS) +
                    " nosuid nodev noexec /tmp\n nosuid nodev noexec /tmp\n"
                    " ro nosuid nodev noexec /proc\n"
                    "exec from /tmp: 126\n")

# 100 MiB into /tmp, 10 MiB at a time: the program's /tmp is a quarter of
# its memory (64 MiB of bash's 256 MiB), so dd itself meets ENOSPC.
TMP_BYTES = r'''
for i in $(seq 0 9); do
  dd if=/dev/urandom of=/tmp/file$i bs=1M count=10 status=none || exit 1
done
'''

# Small files until something fails: /tmp has twice as many files as
# pages, so the write fails for want of bytes, not the open for files.
TMP_FILES = r'''
for i in $(seq 1 100000); do
  echo x > /tmp/f$i || exit 1
done
'''

ETC = 'id; ls /etc/passwd /etc/group'

DEV = 'ls /dev; echo x > /dev/new'

# Every write to /proc fails as on a read-only file system, before any
# permission check: tunables, a process's own files, its memory.
PROC_WRITES = r'''
for f in /proc/sys/kernel/core_pattern /proc/sys/vm/overcommit_memory \
         /proc/self/oom_score_adj /proc/self/attr/current /proc/self/mem; do
  (echo 1 > $f) 2>&1 | sed 's/.*: //'
done
'''

# The init is pid 1 and not dumpable, so the program's /proc, mounted
# hidepid=ptraceable, does not show it at all: no /proc/1 to follow.
PROC_1_ROOT = 'ln -s /proc/1/root/etc /tmp/l && ls /tmp/l/'

# (id, script, request extras, status, stdout, stderr as a regular expression)
CASES = [
    ("mount_flags", MOUNT_FLAGS, {}, "accepted", MOUNT_FLAGS_SEEN,
     r"^/sandbox/solution\.sh: line \d+: /tmp/id: Permission denied\n$"),
    ("tmp_full_of_bytes", TMP_BYTES, {}, "disk_exceeded", "",
     r"^dd: error writing '/tmp/file\d': No space left on device\n$"),
    ("tmp_full_of_files", TMP_FILES, {}, "disk_exceeded", "",
     r"^/sandbox/solution\.sh: line 3: echo: write error: No space left on device\n$"),
    # 64 MiB of memory: /tmp is 16 MiB, and filling it is ENOSPC, not an
    # OOM kill
    ("tmp_below_a_small_memory_limit", TMP_BYTES, {"run": {"limits": {"memory_kb": 65536}}},
     "disk_exceeded", "", r"^dd: error writing '/tmp/file1': No space left on device\n$"),
    ("etc_has_no_user_database", ETC, {}, "runtime_error", "uid=65534 gid=65534 groups=65534\n",
     r"^ls: cannot access '/etc/passwd': No such file or directory\n"
     r"ls: cannot access '/etc/group': No such file or directory\n$"),
    ("dev_has_three_devices", DEV, {}, "runtime_error",
     "fd\nnull\nrandom\nstderr\nstdin\nstdout\nurandom\n",
     r"^/sandbox/solution\.sh: line 1: /dev/new: Read-only file system\n$"),
    ("proc_is_read_only", PROC_WRITES, {}, "accepted", "Read-only file system\n" * 5, r"^$"),
    ("proc_1_root_is_closed", PROC_1_ROOT, {}, "runtime_error", "",
     r"^ls: cannot access '/tmp/l/': No such file or directory\n$"),
]


@pytest.mark.parametrize("name,script,extra,status,stdout,stderr", CASES,
                         ids=[c[0] for c in CASES])
def test_jail_view(daemon, name, script, extra, status, stdout, stderr):
    req = {"language": "bash", "source": script, "tests": [{"stdin": ""}]}
    req.update(extra)
    body = run(daemon, req)
    t = body["tests"][0]
    assert t["status"] == status, dump(body)
    assert t["stdout"] == stdout, dump(body)
    assert re.search(stderr, t["stderr"]), dump(body)


def test_a_full_tmp_is_the_programs_own_error_in_codize_terms(daemon):
    """/v1/run: the step ends normally with dd's own message, as Codize's."""
    code, body = daemon.post("/v1/run", {"runtime": "bash", "files": [
        {"name": "main.sh", "content": TMP_BYTES}]})
    assert code == 200, dump(body)
    err = base64.b64decode(body["run"]["stderr"]).decode()
    assert (body["run"]["status"], body["run"]["exit_code"]) == ("OK", 1), dump(body)
    assert re.search(r"^dd: error writing '/tmp/file\d': No space left on device\n$", err), err
