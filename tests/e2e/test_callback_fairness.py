"""Judge0 callbacks: one client's receiver holds up no other's, and what
waits is bounded in bytes (worker/outbox.c).

Receivers live on 127.0.0.1 (the daemon runs with --callback-allow-local)
and one worker holds every callback (--workers 1), so that all of them
share one worker's senders and bounds. A hanging receiver accepts and
never answers: each try at it lasts its whole 5 s.
"""
import datetime
import http.server
import json
import re
import socket
import threading
import time

import pytest

from conftest import Daemon, HttpReceiver, budget, poll, small, wait_until

PY, BASH = 71, 46


class Hanging:
    """A receiver that accepts every connection and never answers; its
    connections are counted and closed by close()."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.conns = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(conn)

    def close(self):
        self.stop.set()
        self.thread.join(5)
        for c in self.conns:
            c.close()
        self.sock.close()


class Receiver:
    """A receiver that answers 204 at once and notes when each callback
    came (wall clock) and which submission it was."""

    def __init__(self):
        self.got = []
        rec = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_PUT(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                rec.got.append((time.time(), json.loads(body)["token"]))
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.http = HttpReceiver(Handler)
        self.url = self.http.url

    def close(self):
        self.http.close()


def submit(d, source, url, language=BASH):
    status, body = d.post("/submissions", {"language_id": language, "source_code": source,
                                           "callback_url": url})
    assert status == 201, body
    return body["token"]


def finished(d, token):
    """The submission once finished: its finished_at as a wall clock time."""
    def done():
        status, body = d.get("/submissions/%s?fields=status_id,finished_at" % token)
        assert status == 200, body
        return body if body["status_id"] > 2 else None
    body = wait_until(done, "submission %s finished" % token, 30)
    at = datetime.datetime.strptime(body["finished_at"], "%Y-%m-%dT%H:%M:%S.%fZ")
    return at.replace(tzinfo=datetime.timezone.utc).timestamp()


def metric(d, name):
    status, text, _ = d.request("GET", "/metrics")
    assert status == 200
    text = text if isinstance(text, str) else text.decode()
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    assert m, "no %s in /metrics" % name
    return float(m.group(1))


def not_sent(d):
    """The tokens of the callbacks a bound left no room for (the log)."""
    return [m.group(1) for m in (re.match(r"callback of submission (\S+) to .* not sent: ",
                                          line.get("msg", "")) for line in d.log_lines()) if m]


@pytest.mark.slow
def test_hanging_receivers_do_not_delay_another_clients_callback():
    """The issue's case: four receivers that hang, then one that answers.
    With one sender a worker, the victim's callback waited for the four
    first tries (5 s each), about 20 s; now it goes at once."""
    hanging = [Hanging() for _ in range(4)]
    victim = Receiver()
    d = Daemon(languages=small(), workers=1, args=["--callback-allow-local"])
    try:
        for i, h in enumerate(hanging):
            finished(d, submit(d, "echo %d" % i, h.url + "/cb"))
        token = submit(d, "echo victim", victim.url + "/cb")
        done_at = finished(d, token)
        got = poll(lambda: victim.got, timeout=30)
        assert got, "the victim's callback never came"
        delay = got[0][0] - done_at
        print("victim's callback %.2f s after its submission finished" % delay)
        assert got[0][1] == token
        assert delay <= budget(3), \
            "the victim's callback came %.1f s after its submission finished" % delay
        # every hanging receiver had its own try under way meanwhile
        assert all(len(h.conns) >= 1 for h in hanging)
    finally:
        for h in hanging:
            h.close()
        victim.close()
        d.stop()


def test_a_receiver_past_its_bound_loses_its_own_callbacks():
    """--callback-host-queue-size: one receiver's fifth callback of
    ~14 KB would pass its 64 KiB; it is refused (logged with its token,
    counted), its submission stays, and another receiver's still goes."""
    hang = Hanging()
    other = Receiver()
    d = Daemon(languages=small(), workers=1,
               args=["--callback-allow-local", "--metrics",
                     "--callback-host-queue-size", "64k", "--callback-queue-size", "1m"])
    try:
        big = "print('x' * 10000)"
        tokens = [submit(d, big, hang.url + "/cb", PY) for _ in range(5)]
        for t in tokens:
            finished(d, t)
        wait_until(lambda: not_sent(d), "a callback refused")
        assert not_sent(d) == [tokens[4]]
        assert metric(d, "goboxd_callbacks_refused_total") == 1
        waiting = metric(d, "goboxd_callbacks_waiting_bytes")
        assert 4 * 13336 < waiting <= 64 * 1024, waiting
        # the submission stays for its client
        status, body = d.get("/submissions/%s?fields=stdout" % tokens[4])
        assert status == 200 and body["stdout"] == "x" * 10000 + "\n"
        line = next(l for l in d.log_lines() if tokens[4] in l.get("msg", ""))
        assert "its callback is lost" in line["msg"]
        # another receiver's callback is not held up nor refused
        t = submit(d, "echo other", other.url + "/cb")
        finished(d, t)
        wait_until(lambda: other.got, "the other receiver's callback", 5)
        assert other.got[0][1] == t
    finally:
        hang.close()
        other.close()
        d.stop()


def test_past_the_workers_bound_the_largest_receiver_loses_its_oldest():
    """--callback-queue-size: when what waits would pass it, the receiver
    holding the most loses its oldest waiting callback (not its try under
    way), never another receiver's."""
    flood, small_one = Hanging(), Hanging()
    d = Daemon(languages=small(), workers=1,
               args=["--callback-allow-local", "--metrics",
                     "--callback-host-queue-size", "64k", "--callback-queue-size", "96k"])
    try:
        big = "print('x' * 10000)"
        flooded = [submit(d, big, flood.url + "/cb", PY) for _ in range(4)]
        for t in flooded:
            finished(d, t)
        assert not_sent(d) == []
        others = []
        for _ in range(4):
            others.append(submit(d, big, small_one.url + "/cb", PY))
            finished(d, others[-1])
        wait_until(lambda: not_sent(d), "a callback dropped")
        lost = not_sent(d)
        assert set(lost) <= set(flooded[1:]), (lost, flooded, others)
        assert lost[0] == flooded[1], "the oldest waiting, after the one under way"
        assert metric(d, "goboxd_callbacks_refused_total") == len(lost)
        assert metric(d, "goboxd_callbacks_waiting_bytes") <= 96 * 1024
    finally:
        flood.close()
        small_one.close()
        d.stop()
