#!/usr/bin/env python3
"""Live sessions (GET /sessions): prints numbers, asserts nothing.

Starts a real goboxd on 127.0.0.1 (py3 only) with --workers N and
--max-concurrency N (a session is a job: a worker serves one at a time),
opens N sessions that each run a py3 echo loop, and prints:

  held       how many sessions ran at once (each saw its first echo);
  memory     the memory each held session costs: the workers' RSS
             (VmRSS, the master's children) and the cgroup usage of
             their subtrees (jails, inits, the programs), with N held
             less the same with none (the daemon just started, its
             jails warm), over N;
  echo       one session at a time: a line written to its stdin until
             its echo arrives (the program prints it back in capitals),
             p50 and p99 over --lines lines, one after the other;
  start      the time from the WebSocket handshake's first byte to the
             program's first echo (the session's admission, its start
             message, the jail's program and python3's start), p50.

With --tty each session has a terminal (its start's tty): a line is sent
with the Enter key's "\r", and the terminal echoes it before the program
does.

  tests/load/sessions.py path/to/goboxd [--jail bwrap|nsjail] [--sessions 8]
      [--lines 500] [--tty]
"""
import argparse
import base64
import glob
import json
import os
import shutil
import socket
import struct
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine  # noqa: E402  (the daemon, percentiles)
from engine import pct  # noqa: E402

ECHO = "import sys\nfor line in sys.stdin:\n    print(line.strip().upper(), flush=True)\n"


class Session:
    """One session's client: RFC 6455 framing over a plain socket."""

    def __init__(self, port):
        self.t0 = time.perf_counter()
        self.s = socket.create_connection(("127.0.0.1", port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(("GET /sessions HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                        "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n" % key).encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            data = self.s.recv(65536)
            if not data:
                raise SystemExit("the session's handshake was refused")
            self.buf += data
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise SystemExit("no session: %s" % head.decode(errors="replace")[:200])
        self.out = ""

    def send(self, msg):
        payload = json.dumps(msg).encode()
        n, mask = len(payload), os.urandom(4)
        head = struct.pack("!BB", 0x81, 0x80 | n) if n < 126 else \
            struct.pack("!BBH", 0x81, 0x80 | 126, n)
        self.s.sendall(head + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(payload)))

    def _need(self, n):
        while len(self.buf) < n:
            data = self.s.recv(65536)
            if not data:
                raise SystemExit("the session closed early")
            self.buf += data
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        b0, b1 = self._need(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._need(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._need(8))[0]
        payload = self._need(n)
        if b0 & 0x0F == 8:
            raise SystemExit("the session ended: %r" % payload[2:])
        return json.loads(payload) if b0 & 0x0F == 1 else {}

    def until(self, text):
        while text not in self.out:
            m = self.recv()
            if m.get("type") == "stdout":
                self.out += m["data"]
        self.out = self.out.split(text, 1)[1]

    def close(self):
        self.send({"type": "close_stdin"})
        self.s.close()


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def subtree_bytes(master):
    """Memory charged to the workers' cgroup subtrees (v1 or v2)."""
    total = 0
    for path in glob.glob("/sys/fs/cgroup/**/goboxd/%d-w*" % master, recursive=True):
        for name in ("memory.usage_in_bytes", "memory.current"):
            try:
                with open(os.path.join(path, name)) as f:
                    total += int(f.read())
            except OSError:
                pass
    return total


def footprint(d):
    workers = [w["pid"] for w in d.request("GET", "/info")[1]["stats"]["workers"]]
    time.sleep(0.5)
    return sum(rss_kb(p) for p in workers), subtree_bytes(d.proc.pid) // 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("goboxd")
    ap.add_argument("--jail", default="bwrap", choices=["bwrap", "nsjail"])
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--lines", type=int, default=500)
    ap.add_argument("--tty", action="store_true", help="sessions with a terminal")
    a = ap.parse_args()
    # what ends a line the client sends, and one the program prints
    enter, eol = ("\r", "\r\n") if a.tty else ("\n", "\n")
    if os.geteuid() != 0:
        raise SystemExit("needs root (the daemon makes cgroups and drops to sandbox uids)")
    print("kernel %s, %s CPUs" % (os.uname().release, os.cpu_count()))
    tmp = tempfile.mkdtemp(prefix="goboxd-sessions-")
    os.chmod(tmp, 0o711)
    n = a.sessions
    d = engine.Daemon(os.path.abspath(a.goboxd), a.jail, tmp,
                      ["--workers", str(n), "--max-concurrency", str(n),
                       "--session-idle-timeout", "60s"], languages=("py3",))
    try:
        print("goboxd %s, jail %s, workers %d, max concurrency %d%s" % (
            d.info["build_info"]["version"], a.jail, n, n, ", a terminal each" if a.tty else ""))
        idle_rss, idle_cg = footprint(d)
        sessions, starts = [], []
        for i in range(n):
            s = Session(d.port)
            start = {"type": "start", "language": "py3", "source": ECHO}
            if a.tty:
                start["tty"] = True
            s.send(start)
            s.send({"type": "stdin", "data": "ready %d%s" % (i, enter)})
            s.until("READY %d%s" % (i, eol))
            starts.append((time.perf_counter() - s.t0) * 1000)
            sessions.append(s)
        held = len(sessions)
        busy_rss, busy_cg = footprint(d)
        print("held: %d sessions at once" % held)
        print("memory a held session: workers' RSS %.0f KiB, their cgroups %.0f KiB"
              " (idle %d and %d KiB in all, %d held %d and %d)" % (
                  (busy_rss - idle_rss) / held, (busy_cg - idle_cg) / held,
                  idle_rss, idle_cg, held, busy_rss, busy_cg))
        print("start: handshake to first echo, p50 %.1f ms, max %.1f ms" % (
            pct(starts, 50), max(starts)))
        s = sessions[0]
        lat = []
        for i in range(a.lines):
            t = time.perf_counter()
            s.send({"type": "stdin", "data": "line %d%s" % (i, enter)})
            s.until("LINE %d%s" % (i, eol))
            lat.append((time.perf_counter() - t) * 1000)
        print("echo: a stdin line to its echo, p50 %.2f ms, p99 %.2f ms (%d lines)" % (
            pct(lat, 50), pct(lat, 99), len(lat)))
        for s in sessions:
            s.close()
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
