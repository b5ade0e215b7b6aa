#!/usr/bin/env python3
"""Build time of one language: prints numbers, asserts nothing.

Starts a real goboxd on 127.0.0.1 with one language file and sends the
same hello world to /run, one request at a time; prints each build's
wall time, CPU time and peak memory as goboxd reports them, then the
median and the range. The first build is reported apart (a cold page
cache reads the toolchain from disk) and left out of the summary.

  tests/load/build_time.py path/to/goboxd --language-file languages/kotlin.yaml
      --source hello.kt [--source-filename Main.kt] [--requests 6] [--jail bwrap]

Every request must answer 200 with the build ok and the test accepted,
else the script stops. Bounded: a fixed count of requests.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import NSJAIL, free_port, stop_process  # noqa: E402  (same directory)

import http.client  # noqa: E402


def post(port, body):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    conn.request("POST", "/run", body=json.dumps(body).encode(),
                 headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    return resp.status, json.loads(raw)


def start(binary, jail, tmp, language_file):
    langs = os.path.join(tmp, "languages")
    os.makedirs(langs)
    shutil.copy(language_file, langs)
    port = free_port()
    log = open(os.path.join(tmp, "goboxd.log"), "w")
    proc = subprocess.Popen(
        [binary, "--listen", "127.0.0.1", "--port", str(port), "--workers", "1",
         "--languages-dir", langs, "--jail-dir", os.path.join(tmp, "jails"),
         "--jail", jail, "--nsjail-path", NSJAIL, "--log-level", "warn"],
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/readyz")
            resp = conn.getresponse()
            body = json.loads(resp.read())
            conn.close()
            if resp.status == 200:
                return proc, port, log, body
        except OSError:
            pass
        time.sleep(0.2)
    proc.terminate()
    raise SystemExit("goboxd did not become ready; see %s" % log.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("goboxd")
    ap.add_argument("--language-file", required=True)
    ap.add_argument("--source", required=True, help="a program that prints hello")
    ap.add_argument("--source-filename")
    ap.add_argument("--requests", type=int, default=6)
    ap.add_argument("--jail", default="bwrap", choices=["bwrap", "nsjail"])
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (the daemon makes cgroups and drops to sandbox uids)")
    with open(a.source) as f:
        source = f.read()
    lang_id = None
    with open(a.language_file) as f:
        for line in f:
            if line.startswith("id:"):
                lang_id = line.split(":", 1)[1].strip()
    body = {"language": lang_id, "source": source,
            "tests": [{"stdin": "", "expected_stdout": "hello\n"}]}
    if a.source_filename:
        body["source_filename"] = a.source_filename
    tmp = tempfile.mkdtemp(prefix="goboxd-buildtime-")
    os.chmod(tmp, 0o711)
    proc, port, log, ready = start(os.path.abspath(a.goboxd), a.jail, tmp, a.language_file)
    try:
        print("%s: %s, jail %s, %d CPUs, load average %s" % (
            lang_id, ready["languages"][lang_id].get("version"), a.jail, os.cpu_count(),
            " ".join("%.2f" % x for x in os.getloadavg())))
        walls, cpus, mems = [], [], []
        for i in range(a.requests):
            st, res = post(port, body)
            if st != 200 or res.get("status") != "accepted":
                raise SystemExit("request failed: %s" % json.dumps(res)[:1000])
            b = res["build"]
            print("build %d: %d ms wall, %d ms CPU, %d MiB peak%s" % (
                i + 1, b["duration_ms"], b["cpu_time_ms"], b["memory_peak_kb"] // 1024,
                " (first, left out)" if i == 0 else ""))
            if i == 0 and b["stderr"]:
                print("  its stderr: %s" % b["stderr"][:300].replace("\n", " | "))
            if i > 0:
                walls.append(b["duration_ms"])
                cpus.append(b["cpu_time_ms"])
                mems.append(b["memory_peak_kb"] // 1024)
        if walls:
            print("median of %d: %d ms wall (%d to %d), %d ms CPU, %d MiB peak" % (
                len(walls), statistics.median(walls), min(walls), max(walls),
                statistics.median(cpus), statistics.median(mems)))
    finally:
        stop_process(proc, log)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
