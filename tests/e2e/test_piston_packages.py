"""Piston's runtimes, as Piston's own package tests reach them.

Each of Piston's packages (engineer-man/piston, packages/<name>/<version>)
has a test file that prints OK, which packages/test.sh sends to
/api/v2/execute: the language is the part of the file's name after
"test." (test.cpp: "cpp", test.bash.sh: "bash", test.nasm64.asm:
"nasm64"), the one file has no name (Piston calls it file0.code), and the
run passes when its stdout holds OK. tests/e2e/piston/ holds one program
of goboxd's own in that shape for every runtime goboxd shares with
Piston, and the tests send them as test.sh does, with version "*".

Every other runtime of Piston is refused in Piston's words, and
docs/api.md ("Piston's runtimes goboxd does not serve") says why.
"""
import os
import re

import pytest

from conftest import TOP, Daemon, dump

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "piston")
DOC = os.path.join(TOP, "docs", "api.md")

# Piston's runtimes (the "language" of each package's metadata.json or of
# its "provides"), at engineer-man/piston's master.
PISTON_RUNTIMES = {
    "awk", "basic", "basic.net", "bash", "befunge93", "bqn", "brachylog", "brainfuck", "c",
    "c++", "cjam", "clojure", "cobol", "coffeescript", "cow", "crystal", "csharp",
    "csharp.net", "d", "dart", "dash", "dragon", "elixir", "emacs", "emojicode", "erlang",
    "file", "forte", "forth", "fortran", "freebasic", "fsharp.net", "fsi", "go", "golfscript",
    "groovy", "haskell", "husk", "iverilog", "japt", "java", "javascript", "jelly", "julia",
    "kotlin", "lisp", "llvm_ir", "lolcode", "lua", "matl", "nasm", "nasm64", "nim", "ocaml",
    "octave", "osabie", "paradoc", "pascal", "perl", "php", "ponylang", "powershell", "prolog",
    "pure", "pyth", "python", "python2", "racket", "raku", "retina", "rockstar", "rscript",
    "ruby", "rust", "samarium", "scala", "smalltalk", "sqlite3", "swift", "typescript",
    "vlang", "vyxal", "yeethon", "zig",
}

# Piston's names of runtimes goboxd cannot give (a Debian 12 without the
# toolchain, or one that is another language than Piston's), with some
# aliases that would otherwise find a goboxd language of another kind.
REFUSED_NAMES = ["basic", "vb", "visual-basic", "bas", "fbc", "qbasic", "freebasic",
                 "deno", "deno-ts", "deno-js", "scala", "sc", "basic.net", "fsharp", "f#",
                 "csharp.net", "nasm", "nasm32", "asm", "file", "python2", "py2", "zig",
                 "python3.10", "python3.12"]


@pytest.fixture(scope="module")
def daemon():
    d = Daemon()
    yield d
    d.stop()


def programs():
    return sorted(n for n in os.listdir(PROGRAMS) if n.startswith("test."))


def language_of(name):
    """packages/test.sh's rule: the part of the name after "test."."""
    return name.split(".")[1]


def execute(daemon, body):
    return daemon.post("/api/v2/execute", body)


@pytest.mark.parametrize("name", programs())
def test_package_test_prints_ok(daemon, name):
    with open(os.path.join(PROGRAMS, name)) as f:
        src = f.read()
    body = {"language": language_of(name), "version": "*", "files": [{"content": src}]}
    status, answer = execute(daemon, body)
    assert status == 200, dump(answer)
    assert "OK" in answer["run"]["stdout"], dump(answer)
    assert answer["run"]["code"] == 0, dump(answer)


def refused_table():
    """The runtimes of docs/api.md's table of Piston's runtimes not served."""
    with open(DOC) as f:
        text = f.read()
    m = re.search(r"^### Piston's runtimes goboxd does not serve$", text, re.M)
    assert m, "docs/api.md has no table of the runtimes goboxd does not serve"
    rows = []
    for line in text[m.end():].splitlines():
        if line.startswith("| `"):
            rows.append(line.split("|")[1].strip().strip("`"))
        elif rows and not line.startswith("|"):
            break
    return set(rows)


def test_every_runtime_of_piston_is_served_or_documented(daemon):
    status, runtimes = daemon.get("/api/v2/runtimes")
    assert status == 200
    served = {r["language"] for r in runtimes} & PISTON_RUNTIMES
    tested = set()
    for name in programs():
        status, answer = execute(daemon, {"language": language_of(name), "version": "*",
                                          "files": [{"content": ""}]})
        assert status == 200, (name, answer)
        tested.add(answer["language"])
    assert served == tested, "a served runtime of Piston's has no program in tests/e2e/piston"
    assert PISTON_RUNTIMES - served == refused_table()


@pytest.mark.parametrize("language", REFUSED_NAMES)
def test_names_goboxd_cannot_serve_are_unknown(daemon, language):
    status, answer = execute(daemon, {"language": language, "version": "*",
                                      "files": [{"content": "print 'OK'"}]})
    assert (status, answer) == (400, {"message": "%s-* runtime is unknown" % language})


# Piston's aliases (its packages' metadata.json, the newest version's, and
# an older version's that still names the same runtime: php 8.0.2's php8
# and html) of the runtimes whose list goboxd did not have whole. Piston
# lists some runtimes among their own aliases, and /runtimes shows them.
PISTON_ALIASES = {
    "clojure": ["clojure", "clj"], "coffeescript": ["coffeescript", "coffee"],
    "crystal": ["crystal", "cr"], "dash": ["dash"], "elixir": ["elixir", "exs"],
    "emacs": ["emacs", "el", "elisp"], "erlang": ["erlang", "erl", "escript"],
    "fortran": ["fortran", "f90"], "go": ["go", "golang"], "groovy": ["groovy", "gvy"],
    "haskell": ["haskell", "hs"], "lisp": ["lisp", "cl", "sbcl", "commonlisp"],
    "ocaml": ["ocaml", "ml"], "prolog": ["prolog", "plg"], "lua": ["lua"],
    "raku": ["raku", "rakudo", "perl6", "p6", "pl6"], "ruby": ["ruby3", "rb", "ruby"],
    "javascript": ["node-javascript", "node-js", "javascript", "js"],
    "php": ["php8", "html"],
}


@pytest.mark.parametrize("runtime", sorted(PISTON_ALIASES))
def test_piston_aliases(daemon, runtime):
    status, runtimes = daemon.get("/api/v2/runtimes")
    listed = {r["language"]: r["aliases"] for r in runtimes}[runtime]
    assert set(PISTON_ALIASES[runtime]) <= set(listed), listed
    for alias in PISTON_ALIASES[runtime]:
        status, answer = execute(daemon, {"language": alias, "version": "*",
                                          "files": [{"content": ""}]})
        assert status == 200 and answer["language"] == runtime, dump(answer)


def test_yabasic_is_not_piston_basic(daemon):
    """Piston's basic is VB.NET; goboxd's BASIC is Yabasic, under its own name."""
    status, answer = execute(daemon, {"language": "yabasic", "version": "*",
                                      "files": [{"content": 'print "O" + "K"\n'}]})
    assert status == 200 and answer["run"]["stdout"] == "OK\n", dump(answer)


@pytest.mark.parametrize("language,src,word", [
    # go run and java's source launcher: Piston has no compile stage for them
    ("go", "package main\nfunc main() { println(undefinedName) }\n", "undefinedName"),
    ("java", "public class A { public static void main(String[] a) { nope(); } }\n", "nope"),
])
def test_no_compile_stage_where_piston_builds_in_its_run_script(daemon, language, src, word):
    status, answer = execute(daemon, {"language": language, "version": "*",
                                      "files": [{"content": src}]})
    assert status == 200, dump(answer)
    assert "compile" not in answer, dump(answer)
    # the build's failure is the run's
    run = answer["run"]
    assert (run["code"], run["status"]) == (1, "RE") and word in run["output"], dump(answer)


def test_compiled_runtimes_build_every_source(daemon):
    """gcc *.c: two files link; a header is included, not built; data is data."""
    files = [
        {"name": "main.c", "content": '#include <stdio.h>\n#include "twice.h"\n'
         'int main(void) { FILE *f = fopen("in.bin", "rb"); int c = fgetc(f);\n'
         ' printf("%d %s\\n", twice(c), __FILE__); return 0; }\n'},
        {"name": "twice.c", "content": '#include "twice.h"\nint twice(int x) { return 2 * x; }\n'},
        {"name": "twice.h", "content": "int twice(int x);\n"},
        {"name": "in.bin", "content": "Bw==", "encoding": "base64"},
    ]
    status, answer = execute(daemon, {"language": "c", "version": "*", "files": files})
    assert status == 200, dump(answer)
    assert answer["run"]["stdout"] == "14 main.c\n", dump(answer)
    # a generated name takes the compiler's extension, as Piston's rename gives it
    status, answer = execute(daemon, {"language": "c", "version": "*", "files": [
        {"content": '#include <stdio.h>\nint main(void) { puts(__FILE__); return 0; }\n'}]})
    assert answer["run"]["stdout"] == "file0.c\n", dump(answer)


@pytest.mark.parametrize("language,src,extra,stdout", [
    # Piston's swipl -g true: a file of directives is the program, main/0 is not called
    ("prolog", "main :- write(never), nl.\n:- write(directive), nl.\n", {}, "directive\n"),
    # cobc --free: code from column 1
    ("cobol", "identification division.\nprogram-id. f.\nprocedure division.\n"
     "display \"free\".\nstop run.\n", {}, "free\n"),
    # gcc -std=c11: no GNU keywords
    ("c", "#include <stdio.h>\nint main(void) { int typeof = 3; printf(\"%d\\n\", typeof);"
     " return 0; }\n", {}, "3\n"),
    # rustc without flags: edition 2015, where async is a name
    ("rust", "fn main() { let async = 5; println!(\"{}\", async); }\n", {}, "5\n"),
    # sqlite3: the script, and the args as rows of argv(arg)
    ("sqlite3", "SELECT group_concat(arg, '+') FROM argv;\n", {"args": ["a", "b c"]},
     "a+b c\n"),
    # brainfuck: its input a byte a line (fold -w1)
    ("brainfuck", ",.,.,.", {"stdin": "ab"}, "a\nb"),
    # php without php.ini: warnings on stdout
    ("php", "<?php echo $nope; echo \"after\\n\";", {}, None),
])
def test_piston_commands(daemon, language, src, extra, stdout):
    body = {"language": language, "version": "*", "files": [{"content": src}]}
    body.update(extra)
    status, answer = execute(daemon, body)
    assert status == 200, dump(answer)
    if stdout is None:
        assert "Warning" in answer["run"]["stdout"] and answer["run"]["stdout"].endswith(
            "after\n"), dump(answer)
    else:
        assert answer["run"]["stdout"] == stdout, dump(answer)
