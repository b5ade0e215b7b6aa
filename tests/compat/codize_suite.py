#!/usr/bin/env python3
"""Run the Codize sandbox's own end-to-end cases against goboxd's /v1/run.

The cases are Codize's (codize-dev/sandbox, e2e/tests/**/*.yml); they are
not part of this repository. Give the folder of a checkout:

  tests/compat/codize_suite.py --cases CODIZE/e2e/tests build/goboxd
      [--jail bwrap|nsjail] [--only security/seccomp] [--jobs 4]
      [--daemon-arg=--pin-cpus ...] [--url http://127.0.0.1:8080]

It starts goboxd on 127.0.0.1 with every language and Codize's own
deployment settings (30 s run and compile timeouts), or talks to --url.
Each case is judged as Codize's runner judges it: the HTTP status, then
for an error its code, message and validation errors, else every field of
compile and run (stdout, stderr and output base64-decoded; a value written
/like this/ is a regular expression searched in the actual one; exit_code,
status and signal compared exactly; duration_ms present). It prints one
line per miss with the first difference, then the pass count per category.
A report, not a test: its exit status is 0 whenever the suite ran.
"""
import argparse
import base64
import concurrent.futures
import http.client
import json
import os
import re
import sys
import tempfile
import urllib.parse

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "load"))
import engine  # noqa: E402  (its Daemon and stop_process)

TOP = engine.TOP


def load_cases(root, only):
    cases = []
    for dirpath, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            if not name.endswith(".yml"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)[:-len(".yml")]
            with open(path) as f:
                doc = yaml.safe_load(f)
            for i, case in enumerate(doc.get("tests") or []):
                cid = f"{rel}/{i}"
                if only and not any(cid == o or cid.startswith(o + "/") for o in only):
                    continue
                if case.get("arch") and "amd64" not in case["arch"]:
                    continue
                cases.append((cid, case))
    return cases


def content_of(item):
    kind = item.get("type") or "plain"
    if kind == "fill":
        return "A" * item.get("size", 0)
    if kind not in ("plain", "base64"):
        raise ValueError(f"unknown type {kind!r}")
    return item.get("content")


def request_body(inp):
    body = {"runtime": inp.get("runtime"), "files": None}
    if inp.get("files") is not None:
        files = []
        for f in inp["files"]:
            out = {"name": f.get("name"), "content": None}
            if f.get("content") is not None or f.get("type") == "fill":
                out["content"] = content_of(f)
                if f.get("type") == "base64":
                    out["base64_encoded"] = True
            files.append(out)
        body["files"] = files
    if inp.get("stdin") is not None:
        s = inp["stdin"]
        out = {"content": None}
        if s.get("type") == "fill" or s.get("content") is not None:
            out["content"] = content_of(s)
        if s.get("type") == "base64":
            out["base64_encoded"] = True
        body["stdin"] = out
    return body


def same(expected, actual):
    """Codize's string rule: /re/ is searched, anything else is equal."""
    expected = "" if expected is None else str(expected)
    if len(expected) >= 2 and expected[0] == "/" and expected[-1] == "/":
        return re.search(expected[1:-1], actual) is not None
    return expected == actual


def short(value):
    text = repr(value)
    return text if len(text) <= 160 else text[:157] + "..."


def check_result(part, want, got):
    if want is None:
        return None if got is None else f"{part}: expected null"
    if got is None:
        return f"{part}: expected an object, got null"
    for field in ("stdout", "stderr", "output"):
        try:
            actual = base64.b64decode(got.get(field) or "").decode("utf-8", "replace")
        except ValueError:
            return f"{part}.{field}: not base64"
        if not same(want.get(field, ""), actual):
            return f"{part}.{field}: want {short(want.get(field, ''))} got {short(actual)}"
    for field in ("exit_code", "status", "signal"):
        default = 0 if field == "exit_code" else ("" if field == "status" else None)
        if want.get(field, default) != got.get(field):
            return f"{part}.{field}: want {short(want.get(field, default))} got {short(got.get(field))}"
    if not isinstance(got.get("duration_ms"), int):
        return f"{part}.duration_ms: missing"
    if not same(want.get("duration_ms", ""), str(got["duration_ms"])):
        return f"{part}.duration_ms: want {want.get('duration_ms')} got {got['duration_ms']}"
    return None


def check_error(want, got):
    if want.get("code") != got.get("code"):
        return f"error.code: want {want.get('code')!r} got {got.get('code')!r}"
    if not same(want.get("message", ""), got.get("message") or ""):
        return f"error.message: want {short(want.get('message'))} got {short(got.get('message'))}"
    wanted = want.get("errors") or []
    errors = got.get("errors") or []
    if len(wanted) != len(errors):
        return f"error.errors: want {len(wanted)} entries got {len(errors)}: {short(errors)}"
    for w, g in zip(wanted, errors):
        if [str(p) for p in w.get("path") or []] != [str(p) for p in g.get("path") or []]:
            return f"error.errors.path: want {w.get('path')} got {g.get('path')}"
        if not same(w.get("message", ""), g.get("message") or ""):
            return f"error.errors.message: want {short(w.get('message'))} got {short(g.get('message'))}"
    return None


def run_case(url, case):
    parsed = urllib.parse.urlparse(url)
    for i, req in enumerate(case.get("requests") or []):
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=180)
        try:
            conn.request("POST", "/v1/run", body=json.dumps(request_body(req["input"])),
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            raw = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            return f"request {i}: {exc}"
        finally:
            conn.close()
        want = req.get("output") or {}
        if resp.status != want.get("status"):
            return f"request {i}: HTTP {resp.status}, want {want.get('status')}: {short(raw[:300])}"
        try:
            got = json.loads(raw)
        except ValueError:
            return f"request {i}: body is not JSON"
        body = want.get("body") or {}
        if body.get("error") is not None:
            miss = check_error(body["error"], got)
        else:
            miss = check_result("compile", body.get("compile"), got.get("compile")) or \
                check_result("run", body.get("run"), got.get("run"))
        if miss:
            return f"request {i}: {miss}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("goboxd", nargs="?", help="the goboxd binary (not needed with --url)")
    ap.add_argument("--cases", required=True, help="Codize's e2e/tests folder")
    ap.add_argument("--jail", default="bwrap")
    ap.add_argument("--only", action="append", default=[], help="a category or case id prefix")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--url")
    ap.add_argument("--daemon-arg", action="append", default=[])
    args = ap.parse_args()

    cases = load_cases(args.cases, args.only)
    if not cases:
        raise SystemExit("no cases found under " + args.cases)
    daemon = None
    url = args.url
    if not url:
        if not args.goboxd:
            raise SystemExit("give the goboxd binary or --url")
        tmp = tempfile.mkdtemp(prefix="goboxd-codize-")
        os.chmod(tmp, 0o755)  # the sandbox uids reach the jail dir through it
        daemon = engine.Daemon(args.goboxd, args.jail, tmp,
                               ["--run-timeout", "30s", "--compile-timeout", "30s"]
                               + args.daemon_arg, languages=None)
        url = f"http://127.0.0.1:{daemon.port}"
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda c: (c[0], run_case(url, c[1])), cases))
    finally:
        if daemon:
            daemon.stop()
    totals = {}
    for cid, miss in results:
        category = cid.split("/")[0]
        done, passed = totals.get(category, (0, 0))
        totals[category] = (done + 1, passed + (miss is None))
        if miss:
            print(f"MISS {cid}: {miss}")
    for category, (done, passed) in sorted(totals.items()):
        print(f"{category}: {passed}/{done} ({100.0 * passed / done:.0f} %)")


if __name__ == "__main__":
    main()
