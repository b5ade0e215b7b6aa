"""Codize's runtimes as its clients see them: the Go module, the pinned Node
and TypeScript releases, and one CPU per /v1/run program.

Codize's own suite compares compile errors and tracebacks byte for byte;
these cases check the properties that make them equal (the module name, the
releases, the CPU count) with programs of this project.
"""
import base64
import os
import re

import pytest

from conftest import Daemon


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(args=["--run-timeout", "10s"])
    yield d
    d.stop()


def decode(step, key):
    return base64.b64decode(step[key]).decode()


def v1(daemon, runtime, name, src):
    status, body = daemon.post("/v1/run", {"runtime": runtime,
                                           "files": [{"name": name, "content": src}]})
    assert status == 200, body
    return body


GO_UNDEFINED = "package main\n\nfunc main() {\n\tprintln(nowhere)\n}\n"
GO_MISSING = ('package main\n\nimport (\n\t_ "example.com/no/such/module"\n)\n\n'
              "func main() {}\n")
GO_X_TEXT = ('package main\n\nimport (\n\t"fmt"\n\n\t"golang.org/x/text/cases"\n'
             '\t"golang.org/x/text/language"\n)\n\n'
             'func main() {\n\tfmt.Println(cases.Title(language.English).String("go module"))\n}\n')

# (runtime, file name, source, step, field, expected: a string for an exact
# match, a compiled pattern for a search)
CASES = {
    # Module mode names the package by its module: "# sandbox", not GOPATH
    # mode's "# _/sandbox" for a directory outside GOPATH.
    "go_compile_error_names_module_sandbox":
        ("go", "main.go", GO_UNDEFINED, "compile", "stderr",
         "# sandbox\n./main.go:4:10: undefined: nowhere\n"),
    # An import no module provides, with no proxy to ask: the read-only
    # module mode's words, not GOPATH's "cannot find package ... in any of".
    "go_missing_package_is_not_in_a_required_module":
        ("go", "main.go", GO_MISSING, "compile", "stderr",
         "main.go:4:2: no required module provides package example.com/no/such/module; "
         "to add it:\n\tgo get example.com/no/such/module\n"),
    # Debian's x/text, through the go.mod's replace.
    "go_x_text_is_importable_in_module_mode":
        ("go", "main.go", GO_X_TEXT, "run", "stdout", "Go Module\n"),
    # Codize's Node release: the frames of Node's own library in a
    # traceback (node:fs:NNN) are line numbers of that release.
    "node_is_codize_release":
        ("node", "index.js", "console.log(process.version)\n", "run", "stdout", "v24.14.1\n"),
    "node_fs_frame_is_codize_line":
        ("node", "index.js", 'require("fs").readFileSync("/no/such/file");\n', "run", "stderr",
         re.compile(r"\Anode:fs:560\n  return binding\.open\(\n[\s\S]*"
                    r"Error: ENOENT: no such file or directory, open '/no/such/file'")),
    "node_events_frame_is_codize_line":
        ("node", "index.js",
         'const e = new (require("events"))();\ne.emit("error", new Error("boom"));\n',
         "run", "stderr", re.compile(r"\Anode:events:486\n      throw er; // Unhandled 'error' event\n")),
    # Codize's node-typescript package.json: the compiler, the declarations
    # and lodash at its versions.
    "typescript_packages_are_codize_versions":
        ("node-typescript", "index.ts",
         "const v = (p: string): string => require(p + '/package.json').version;\n"
         "console.log(['typescript', '@types/node', '@types/lodash', 'lodash'].map(v).join(' '));\n",
         "run", "stdout", "5.9.3 24.12.2 4.17.24 4.18.1\n"),
    # One CPU, as under Codize's nsjail (max_cpus: 1).
    "bash_sees_one_cpu":
        ("bash", "main.sh", "nproc\n", "run", "stdout", "1\n"),
    "python_affinity_is_one_cpu":
        ("python", "main.py", "import os\nprint(len(os.sched_getaffinity(0)))\n", "run", "stdout",
         "1\n"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_codize_runtime(daemon, name):
    runtime, fname, src, step, field, want = CASES[name]
    body = v1(daemon, runtime, fname, src)
    assert body[step] is not None, body
    got = decode(body[step], field)
    if isinstance(want, str):
        assert got == want, (body, got)
    else:
        assert want.search(got), got


def test_program_cannot_widen_its_cpu(daemon):
    """The pin is set before the program starts and the program cannot
    undo it: sched_setaffinity to every CPU fails and leaves one."""
    src = ("import os\ntry:\n    os.sched_setaffinity(0, range(os.cpu_count()))\n"
           "    print('widened')\nexcept OSError as e:\n    print(e.errno)\n"
           "print(len(os.sched_getaffinity(0)))\n")
    body = v1(daemon, "python", "main.py", src)
    out = decode(body["run"], "stdout").split()
    assert out[-1] == "1", out


def test_run_api_is_not_pinned_and_codize_pin_can_be_lifted(daemon):
    """/run keeps every CPU without --pin-cpus; --codize-pin-cpus=false
    gives /v1/run programs every CPU too."""
    usable = len(os.sched_getaffinity(0))
    src = "import os\nprint(len(os.sched_getaffinity(0)))\n"
    st, res = daemon.post("/run", {"language": "py3", "source": src, "tests": [{}]})
    assert st == 200 and res["tests"][0]["stdout"] == f"{usable}\n", res

    free = Daemon(args=["--codize-pin-cpus=false"])
    try:
        body = v1(free, "python", "main.py", src)
        assert decode(body["run"], "stdout") == f"{usable}\n", body
    finally:
        free.stop()
