"""docs/api.md lists the Judge0 ids and the Piston runtimes of every
language: the tables must say what the language files say, and what a
daemon serves."""
import os
import re

import yaml

from conftest import LANGUAGES, TOP, Daemon, small

DOC = os.path.join(TOP, "docs", "api.md")


def table_after(heading_re, columns):
    """The rows of the first table after a heading matching heading_re
    whose header starts with columns[0]."""
    with open(DOC) as f:
        text = f.read()
    m = re.search(heading_re, text, re.M)
    assert m, heading_re
    rows = []
    started = False
    for line in text[m.end():].splitlines():
        if line.startswith("| " + columns):
            started = True
            continue
        if started and line.startswith("|---"):
            continue
        if started and line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif started:
            break
    assert rows, "no table after " + heading_re
    return rows


def languages():
    out = {}
    for name in sorted(os.listdir(LANGUAGES)):
        if name.endswith(".yaml"):
            with open(os.path.join(LANGUAGES, name)) as f:
                lang = yaml.safe_load(f)
            out[lang["id"]] = lang
    return out


def names(cell):
    return [] if cell == "—" else [c.strip().strip("`") for c in cell.split(",")]


def test_the_judge0_table_is_the_language_files():
    langs = languages()
    rows = table_after(r"^### Languages$", "goboxd language")
    assert [r[0].strip("`") for r in rows] == sorted(langs)
    for lid, jid, listed, older, name in rows:
        j = langs[lid.strip("`")]["judge0"]
        assert int(jid) == j["id"], lid
        assert [int(x) for x in names(listed)] == j.get("listed_ids", []), lid
        assert [int(x) for x in names(older)] == j.get("older_ids", []), lid
        assert name == j["name"], lid


def test_every_active_judge0_id_is_listed_or_said_not_to_be():
    # Judge0 CE 1.13.1's active languages are ids 43 to 89 (its
    # db/languages/active.rb); each is listed by some language file, or
    # docs/api.md says why goboxd has none
    listed = set()
    for lang in languages().values():
        j = lang.get("judge0")
        if j:
            listed |= {j["id"], *j.get("listed_ids", [])}
    unserved = {int(r[0]) for r in table_after(r"^### Languages$", "Judge0 id")}
    assert not unserved & listed, unserved & listed
    assert set(range(43, 90)) - listed == unserved


def test_the_piston_table_is_the_language_files():
    langs = languages()
    rows = table_after(r"^### GET /api/v2/runtimes$", "goboxd language")
    assert [r[0].strip("`") for r in rows] == sorted(k for k in langs if "piston" in langs[k])
    for lid, runtime, version, aliases in rows:
        p = langs[lid.strip("`")].get("piston")
        if p is None:
            # a language Piston has no runtime for (Judge0's own kinds)
            assert (runtime, version, aliases) == ("—", "—", "—"), lid
            continue
        assert runtime.strip("`") == p["runtime"], lid
        assert version == p["version"], lid
        assert names(aliases) == p.get("aliases", []), lid


def test_a_daemon_serves_what_the_files_say():
    d = Daemon(languages=small())
    try:
        status, body = d.get("/languages")
        assert status == 200
        gcc, gpp = "C (GCC 12.2.0)", "C++ (GCC 12.2.0)"
        assert body == [{"id": 46, "name": "Bash (5.2.15)"}, {"id": 48, "name": gcc},
                        {"id": 49, "name": gcc}, {"id": 50, "name": gcc},
                        {"id": 52, "name": gpp}, {"id": 53, "name": gpp}, {"id": 54, "name": gpp},
                        {"id": 71, "name": "Python (3.11.2)"}]
        status, body = d.get("/api/v2/runtimes")
        assert status == 200
        assert {r["language"]: r["version"] for r in body} == {
            "bash": "5.2.15", "c": "12.2.0", "c++": "12.2.0", "python": "3.11.2"}
    finally:
        d.stop()
