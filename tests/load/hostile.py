#!/usr/bin/env python3
"""Hostile clients against one worker: prints numbers, asserts nothing.

Starts a real goboxd on 127.0.0.1 with one worker (so every connection
and every job lands on the same process) and plays, one after the other:

  output     a /run whose 4 tests each print 16 MiB of the byte 0x01 (at
             the largest output cap), while another client asks /healthz
             every 100 ms: the size of the answer, how long it took, and
             the slowest /healthz;
  chunkext   one chunked request that sends nothing but a chunk extension,
             for --seconds or --max-mib, whichever comes first: whether the
             worker answered, and what it was;
  pipeline   one connection that pipelines GET /info for --seconds and
             never reads an answer: how much the worker took in.

Before each phase the worker's peak RSS is reset (clear_refs 5), and
after it VmHWM (/proc/PID/status) is printed, with the worker's VmRSS.

  tests/load/hostile.py path/to/goboxd [--jail bwrap|nsjail] [--seconds 6]
      [--max-mib 256] [--skip output,chunkext,pipeline] [--daemon-arg=...]

Bounded: each phase stops by itself after --seconds (the output job after
its own time limits), and the daemon is stopped at the end. Needs root
(clear_refs of a root process).
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import NSJAIL, free_port, stop_process  # noqa: E402  (same directory)

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIB = 1024 * 1024
BIG_OUTPUT = "import sys\nsys.stdout.buffer.write(b'\\x01' * (16 << 20))\n"



def http(port, method, path, body=None, timeout=120):
    """One request on its own connection: (status, body bytes, seconds)."""
    t0 = time.time()
    data = json.dumps(body).encode() if body is not None else b""
    head = ("%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
            % (method, path, len(data))).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(head + data)
        chunks = []
        while True:
            b = s.recv(1 << 20)
            if not b:
                break
            chunks.append(b)
    raw = b"".join(chunks)
    head, _, rest = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/") else 0
    return status, rest, time.time() - t0


class Daemon:
    def __init__(self, binary, jail, tmp, extra):
        langs = os.path.join(tmp, "languages")
        os.makedirs(langs)
        shutil.copy(os.path.join(TOP, "languages", "py3.yaml"), langs)
        self.port = free_port()
        self.log = open(os.path.join(tmp, "goboxd.log"), "w")
        self.proc = subprocess.Popen(
            [binary, "--listen", "127.0.0.1", "--port", str(self.port), "--workers", "1",
             "--languages-dir", langs, "--jail-dir", os.path.join(tmp, "jails"),
             "--jail", jail, "--nsjail-path", NSJAIL, "--log-level", "warn"] + extra,
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                st, body, _ = http(self.port, "GET", "/readyz", timeout=5)
                if st == 200:
                    info = json.loads(http(self.port, "GET", "/info")[1])
                    self.worker = info["stats"]["workers"][0]["pid"]
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.2)
        raise SystemExit("goboxd did not become ready; see its log")

    def reset_peak(self):
        with open("/proc/%d/clear_refs" % self.worker, "w") as f:
            f.write("5")

    def memory_kb(self):
        out = {}
        with open("/proc/%d/status" % self.worker) as f:
            for line in f:
                key, _, val = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    out[key] = int(val.split()[0])
        return out

    def stop(self):
        stop_process(self.proc, self.log)


def phase_output(d, args):
    stop = threading.Event()
    worst = [0.0, 0]

    def poll():
        while not stop.is_set():
            try:
                st, _, secs = http(d.port, "GET", "/healthz", timeout=60)
            except OSError:
                st, secs = 0, 60.0
            worst[0] = max(worst[0], secs)
            worst[1] += st != 200
            time.sleep(0.1)

    req = {"language": "py3", "source": BIG_OUTPUT,
           "run": {"limits": {"output_kb": 16384, "wall_time_s": 20, "cpu_time_s": 20}},
           "tests": [{"stdin": ""} for _ in range(4)]}
    t = threading.Thread(target=poll)
    t.start()
    st, body, secs = http(d.port, "POST", "/run", req, timeout=300)
    stop.set()
    t.join()
    statuses = []
    try:
        statuses = [x["status"] for x in json.loads(body)["tests"]]
    except (ValueError, KeyError):
        pass
    return ("HTTP %d, %.1f MB in %.1f s, tests %s; slowest /healthz %.2f s (%d failed)"
            % (st, len(body) / 1e6, secs, ",".join(statuses) or "?", worst[0], worst[1]))


def phase_chunkext(d, args):
    s = socket.create_connection(("127.0.0.1", d.port))
    s.setblocking(False)
    head = b"POST /run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;"
    block = b"a" * 65536
    sent, answer = 0, b""
    pending = head
    deadline = time.time() + args.seconds
    while time.time() < deadline and sent < args.max_mib * MIB:
        try:
            answer += s.recv(65536)
            if answer.count(b"\r\n\r\n") or not answer:
                break
        except BlockingIOError:
            pass
        except OSError:
            break
        try:
            n = s.send(pending)
            sent += n
            pending = pending[n:] or block
        except BlockingIOError:
            time.sleep(0.001)
        except OSError:
            break
    s.setblocking(True)
    s.settimeout(2)
    try:
        while b"\r\n" not in answer:
            b = s.recv(65536)
            if not b:
                break
            answer += b
    except OSError:
        pass
    s.close()
    line = answer.split(b"\r\n")[0].decode(errors="replace") or "no answer"
    return "sent %.1f MB of one chunk extension; answer: %s" % (sent / 1e6, line)


def phase_pipeline(d, args):
    s = socket.create_connection(("127.0.0.1", d.port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.setblocking(False)
    req = b"GET /info HTTP/1.1\r\nHost: x\r\n\r\n" * 256
    sent, stalled_since = 0, None
    deadline = time.time() + args.seconds
    while time.time() < deadline and sent < args.max_mib * MIB:
        try:
            sent += s.send(req)
            stalled_since = None
        except BlockingIOError:
            stalled_since = stalled_since or time.time()
            if time.time() - stalled_since > 2:
                break  # the worker stopped reading
            time.sleep(0.01)
        except OSError:
            break
    time.sleep(0.5)
    s.close()
    return "pipelined %.1f MB of GET /info (%d requests) without reading" % (
        sent / 1e6, sent // (len(req) // 256))


PHASES = [("output", phase_output), ("chunkext", phase_chunkext), ("pipeline", phase_pipeline)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("--jail", default="bwrap")
    ap.add_argument("--seconds", type=float, default=6)
    ap.add_argument("--max-mib", type=int, default=256)
    ap.add_argument("--skip", default="")
    ap.add_argument("--daemon-arg", action="append", default=[])
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="goboxd-hostile-")
    os.chmod(tmp, 0o711)
    d = Daemon(os.path.abspath(args.binary), args.jail, tmp, args.daemon_arg)
    try:
        # one job first: the worker's steady state, jail warm
        http(d.port, "POST", "/run", {"language": "py3", "source": "print(1)",
                                      "tests": [{"stdin": ""}]})
        print("worker %d at rest: %s" % (d.worker, d.memory_kb()))
        for name, fn in PHASES:
            if name in args.skip.split(","):
                continue
            d.reset_peak()
            what = fn(d, args)
            time.sleep(0.5)
            if d.proc.poll() is not None:
                print("%-9s %s; goboxd exited" % (name, what))
                break
            m = d.memory_kb()
            print("%-9s %s; worker VmHWM %d MiB, VmRSS %d MiB"
                  % (name, what, m["VmHWM"] // 1024, m["VmRSS"] // 1024))
            sys.stdout.flush()
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
