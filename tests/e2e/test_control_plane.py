"""The control plane drops nothing and leaks nothing: job directories of
any depth, fds and capabilities of the master's children, dispatches that
fail, and removals that never hold up a request."""
import os
import shutil
import tempfile

from conftest import LANGUAGES, Daemon

HELLO = {"language": "py3", "source": "print(input())\n",
         "tests": [{"stdin": "hi\n", "expected_stdout": "hi\n"}]}

# A language whose build runs the submission itself, so that a request can
# leave a tree of its choosing in the job directory before the snapshot.
PYBUILD = """id: pybuild
name: Python with a build step
source_filename: solution.py
build:
  cmd: /usr/bin/python3
  args: ["{{source}}", "build"]
  env:
    PYTHONDONTWRITEBYTECODE: "1"
run:
  cmd: /usr/bin/python3
  args: ["{{source}}", "run"]
  env:
    PYTHONDONTWRITEBYTECODE: "1"
probe: [/usr/bin/python3, --version]
"""


def lang_dir(*extra):
    """py3 plus the given (file name, text) languages, in a directory of
    their own."""
    d = tempfile.mkdtemp(prefix="goboxd-langs-")
    shutil.copy(os.path.join(LANGUAGES, "py3.yaml"), d)
    for name, text in extra:
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    return d


DEEP = """import os, sys
def nest(top, n):
    os.mkdir(top)
    os.chdir(top)
    for i in range(n):
        open("f%d" % i, "w").write(str(i))
        os.mkdir("d")
        os.chdir("d")
    os.chdir("/sandbox")
if sys.argv[1] == "build":
    nest("tree", 200)
else:
    # the build's tree is back whole for every test
    p = "tree/" + "d/" * 199
    assert open(p + "f199").read() == "199", "lost the deepest file"
    nest("scratch", 200)
    print("ok")
"""


def test_a_build_200_directories_deep_is_kept_restored_and_removed():
    """The snapshot of a built tree stopped at 64 levels: the job got 500."""
    d = lang_dir(("pybuild.yaml", PYBUILD))
    daemon = Daemon(languages=d, workers=1)
    try:
        req = {"language": "pybuild", "source": DEEP,
               "tests": [{"stdin": "", "expected_stdout": "ok\n"}] * 3}
        status, body = daemon.post("/run", req)
        assert status == 200, body
        assert body["status"] == "accepted", body
        assert daemon.leftovers() == []
    finally:
        daemon.stop()
        shutil.rmtree(d)
