"""A job's network (--network): a request that asks gets slirp4netns in
its jail's namespace, reaches what the policy lets through (by name, too)
and nothing else of this host or its private networks, and loses the
network past a cap; jobs that do not ask, and the next job in the same
jail, have none: they may make no internet socket, and the next job gets
a new namespace. The other machine is a network namespace
of its own on this host (netpeer.py)."""

import json
import os
import shutil
import subprocess

import pytest

import netpeer
from conftest import (LEAVE_A_FLOW_LABEL, Daemon, budget, dump, lang_dir, needs_jail_reuse,
                      run_ok, wait_until, xdist_worker)

UNAVAILABLE = netpeer.unavailable()
pytestmark = pytest.mark.skipif(UNAVAILABLE is not None, reason=str(UNAVAILABLE))

CAP_BYTES = 256 * 1024
CAP_CONNECTIONS = 4


@pytest.fixture(scope="module")
def peer():
    p = netpeer.Peer(10 + xdist_worker())
    try:
        p.start()
    except subprocess.CalledProcessError as e:
        p.stop()
        pytest.skip("no network namespace with a veth pair here: %s"
                    % e.stderr.decode(errors="replace").strip())
    yield p
    p.stop()


# A language whose tests have a network unless a request says otherwise.
PYNET = """id: pynet
name: Python with a network
source_filename: solution.py
network: true
run:
  cmd: /usr/bin/python3
  args: ["{{box}}/{{source}}"]
  env:
    PYTHONDONTWRITEBYTECODE: "1"
probe: [/usr/bin/python3, --version]
"""


@pytest.fixture(scope="module")
def net(peer):
    langs = lang_dir(("pynet.yaml", PYNET))
    d = Daemon(["--network", "--network-allow", peer.net,
                "--network-max-bytes", str(CAP_BYTES),
                "--network-max-connections", str(CAP_CONNECTIONS)],
               languages=langs, workers=1, wrapper=peer.wrapper())
    yield d
    d.stop()
    shutil.rmtree(langs)


def job(source, network=True, language="py3"):
    req = {"language": language, "source": source, "tests": [{"stdin": ""}]}
    if network is not None:
        req["network"] = network
    return req


# Prints, for each "address port" line of its stdin, what a TCP connect
# did: "connected", or the errno's name (EPERM: no socket could be made).
CONNECT = """
import errno, socket, sys
for line in sys.stdin.read().splitlines():
    a, p = line.split()
    try:
        s = socket.socket(); s.settimeout(TIMEOUT)
        s.connect((a, int(p))); print(line, "connected")
    except OSError as e:
        print(line, errno.errorcode.get(e.errno, e.errno) if e.errno else "timeout")
"""


def connect_all(d, targets, network=True, language="py3"):
    req = job(CONNECT.replace("TIMEOUT", "%g" % budget(3)), network, language)
    req["tests"][0]["stdin"] = "".join("%s %d\n" % t for t in targets)
    body = run_ok(d, req)
    assert body["status"] == "accepted", dump(body)
    out = body["tests"][0]["stdout"].splitlines()
    return dict(line.rsplit(" ", 1) for line in out), body


def test_a_job_reaches_an_allowed_server_by_name(net, peer):
    src = ("import urllib.request\n"
           "print(urllib.request.urlopen('http://hello%s:%d/hello', timeout=%g).read()"
           ".decode(), end='')\n" % (netpeer.DNS_SUFFIX, netpeer.HTTP_PORT, budget(10)))
    body = run_ok(net, job(src))
    t = body["tests"][0]
    assert body["status"] == "accepted" and t["stdout"] == "hello from the peer\n", dump(body)
    n = body["network"]
    assert n["cut"] is None and n["bytes_sent"] > 0 and n["bytes_received"] > 0, dump(body)


def test_nothing_of_this_host_nor_a_private_range_is_reached(net, peer):
    got, _ = connect_all(net, [
        (peer.ip, netpeer.HTTP_PORT),      # allowed
        (peer.host_ip, netpeer.HTTP_PORT),  # this host's, inside the allowed network
        ("127.0.0.1", net.port),           # goboxd itself
        ("10.0.2.2", net.port),            # slirp4netns's way to this host's loopback
        ("169.254.169.254", 80),           # the clouds' metadata
        ("192.168.77.1", 80),              # a private range not allowed
        ("10.213.250.1", 80),              # outside the allowed /30
    ])
    assert got.pop("%s %d" % (peer.ip, netpeer.HTTP_PORT)) == "connected", got
    assert got.pop("%s %d" % (peer.host_ip, netpeer.HTTP_PORT)) == "EACCES", got
    for target in ("169.254.169.254 80", "192.168.77.1 80", "10.213.250.1 80"):
        assert got.pop(target) == "EACCES", (target, got)
    assert all(v != "connected" for v in got.values()), got


def test_a_job_that_does_not_ask_has_no_network(net, peer):
    got, body = connect_all(net, [(peer.ip, netpeer.HTTP_PORT)], network=None)
    assert got == {"%s %d" % (peer.ip, netpeer.HTTP_PORT): "EPERM"}, dump(body)
    assert "network" not in body


def test_a_language_may_give_its_tests_a_network_by_default(net, peer):
    target = [(peer.ip, netpeer.HTTP_PORT)]
    key = "%s %d" % target[0]
    got, body = connect_all(net, target, network=None, language="pynet")
    assert got == {key: "connected"} and "network" in body, dump(body)
    got, body = connect_all(net, target, network=False, language="pynet")
    assert got == {key: "EPERM"} and "network" not in body, dump(body)
    got, body = connect_all(net, target, network=None)
    assert got == {key: "EPERM"}, dump(body)


def test_the_next_job_in_the_same_jail_finds_no_network(net, peer):
    # one worker: both jobs run in its jails, the second after a reset
    for _ in range(3):
        got, _ = connect_all(net, [(peer.ip, netpeer.HTTP_PORT)])
        assert got == {"%s %d" % (peer.ip, netpeer.HTTP_PORT): "connected"}
        got, body = connect_all(net, [(peer.ip, netpeer.HTTP_PORT)], network=False)
        assert got == {"%s %d" % (peer.ip, netpeer.HTTP_PORT): "EPERM"}, dump(body)


# The jail and the network namespace a job ran in, and the IPv6 flow
# labels there; with "leave" on stdin, it first leaves one.
NAMESPACE = LEAVE_A_FLOW_LABEL + """
import json, os, sys
IPV6 = os.path.exists("/proc/net/ip6_flowlabel")
if sys.stdin.read().strip() == "leave" and IPV6:
    leave_a_flow_label()
labels = open("/proc/net/ip6_flowlabel").read().splitlines()[1:] if IPV6 else []
print(json.dumps({"jail": os.readlink("/proc/self/ns/mnt"),
                  "net": os.readlink("/proc/self/ns/net"), "labels": labels}))
"""


@needs_jail_reuse
def test_after_a_job_with_a_network_the_next_gets_a_new_namespace(peer):
    # A job without a network leaves the namespace to the next
    # (test_jail_reuse.py); one with a network had internet sockets and
    # the stack's interface there, and nothing of it may reach the next.
    # One jail, so that the jobs share it.
    d = Daemon(["--network", "--network-allow", peer.net, "--jails-per-worker", "1"],
               workers=1, wrapper=peer.wrapper())
    try:
        seen = []
        for network, stdin in ((True, "leave"), (False, ""), (False, "")):
            req = job(NAMESPACE, network)
            req["tests"][0]["stdin"] = stdin
            body = run_ok(d, req)
            assert body["status"] == "accepted", dump(body)
            seen.append(json.loads(body["tests"][0]["stdout"]))
    finally:
        d.stop()
    with_network, after, later = seen
    assert with_network["jail"] == after["jail"] == later["jail"], "the jobs ran in other jails"
    if os.path.exists("/proc/net/ip6_flowlabel"):
        assert with_network["labels"], with_network
    assert after["net"] != with_network["net"], "the namespace of a job with a network was kept"
    assert after["labels"] == [], after
    assert later["net"] == after["net"], "a job without a network did not leave its namespace"


def test_traffic_past_the_cap_ends_the_network(net, peer):
    # twice the cap, in pieces: on a slow host (an emulated guest) the
    # stack moves little a second, and the rest of the file is not needed
    src = ("import time, urllib.request\n"
           "url = 'http://%s:%d/big'\n"
           "got = 0\n"
           "try:\n"
           "    r = urllib.request.urlopen(url, timeout=%g)\n"
           "    while got < %d:\n"
           "        piece = r.read(65536)\n"
           "        if not piece:\n"
           "            break\n"
           "        got += len(piece)\n"
           "    print('read', got)\n"
           "except OSError as e:\n"
           "    print('first', type(e).__name__, got)\n"
           "time.sleep(%g)\n"
           "try:\n"
           "    urllib.request.urlopen(url, timeout=%g).read(1); print('again')\n"
           "except OSError as e:\n"
           "    print('gone', type(e).__name__)\n"
           % (peer.ip, netpeer.HTTP_PORT, budget(10), 2 * CAP_BYTES, budget(0.5), budget(2)))
    body = run_ok(net, job(src))
    out = body["tests"][0]["stdout"]
    assert body["network"]["cut"] == "bytes", dump(body)
    assert body["status"] == "accepted", dump(body)
    assert "gone" in out and "again" not in out, dump(body)
    # the cap is on both ways together: the program's own packets (its
    # request, its acknowledgements) count, so what it received alone may
    # stay a little under the cap
    used = body["network"]["bytes_sent"] + body["network"]["bytes_received"]
    assert used > CAP_BYTES, dump(body)


def test_a_cut_aborts_the_connections_the_program_holds(net, peer):
    # One connection waits on a server that says nothing (the peer's HTTP
    # server waits for a request that never comes) while another carries
    # the network past a cap: its bytes, or its sockets (the listener and
    # the loopback pair count), whichever the check sees first. The
    # waiting read ends when the network does, with ECONNABORTED, not at
    # its own timeout; a connection on the namespace's own loopback is
    # left alone.
    src = ("import socket, threading, urllib.request\n"
           "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen()\n"
           "local = socket.create_connection(srv.getsockname()); there = srv.accept()[0]\n"
           "held = socket.create_connection(('%s', %d), timeout=%g)\n"
           "def carry():\n"
           "    try:\n"
           "        urllib.request.urlopen('http://%s:%d/big', timeout=%g).read()\n"
           "    except OSError:\n"
           "        pass\n"
           "threading.Thread(target=carry, daemon=True).start()\n"
           "try:\n"
           "    held.recv(1); print('answered')\n"
           "except socket.timeout:\n"
           "    print('timed out')\n"
           "except OSError as e:\n"
           "    print(type(e).__name__)\n"
           "local.sendall(b'x'); print(there.recv(1).decode())\n"
           % (peer.ip, netpeer.HTTP_PORT, budget(5), peer.ip, netpeer.HTTP_PORT, budget(5)))
    body = run_ok(net, job(src))
    assert body["network"]["cut"] in ("bytes", "connections"), dump(body)
    assert body["tests"][0]["stdout"] == "ConnectionAbortedError\nx\n", dump(body)


def test_connections_past_the_cap_end_the_network(net, peer):
    # on a slow host the cut may come while the last ones still connect:
    # those fail at once, aborted (or finding no route)
    src = ("import socket, time\n"
           "held = []\n"
           "try:\n"
           "    for _ in range(%d):\n"
           "        held.append(socket.create_connection(('%s', %d), timeout=%g))\n"
           "except OSError as e:\n"
           "    print('cut', type(e).__name__, len(held))\n"
           "time.sleep(%g)\n"
           "try:\n"
           "    socket.create_connection(('%s', %d), timeout=%g); print('again')\n"
           "except OSError as e:\n"
           "    print('gone', type(e).__name__)\n"
           % (CAP_CONNECTIONS + 2, peer.ip, netpeer.HTTP_PORT, budget(3), budget(0.5), peer.ip,
              netpeer.HTTP_PORT, budget(2)))
    body = run_ok(net, job(src))
    out = body["tests"][0]["stdout"]
    assert body["network"]["cut"] == "connections", dump(body)
    assert body["status"] == "accepted", dump(body)
    assert "gone" in out and "again" not in out, dump(body)
    # a connect the cut caught was aborted (or found no route, had the
    # cut come first), not left to its time-out
    assert "TimeoutError" not in out, dump(body)


def test_judge0_enable_network_where_the_operator_allows_it(net, peer):
    src = ("import urllib.request\n"
           "print(urllib.request.urlopen('http://%s:%d/hello', timeout=%g).read().decode(),"
           " end='')\n" % (peer.ip, netpeer.HTTP_PORT, budget(10)))
    status, body = net.post("/submissions?wait=true",
                            {"language_id": 71, "source_code": src, "enable_network": True})
    assert status == 201 and body["stdout"] == "hello from the peer\n", dump(body)
    # stored, and run later by whichever worker takes it
    status, body = net.post("/submissions", {"language_id": 71, "source_code": src,
                                             "enable_network": True})
    assert status == 201, dump(body)
    done = wait_until(lambda: done_submission(net, body["token"]), "the submission's run")
    assert done["stdout"] == "hello from the peer\n", dump(done)
    status, info = net.get("/config_info")
    assert status == 200 and info["allow_enable_network"] is True, info


def done_submission(d, token):
    status, body = d.get("/submissions/%s" % token)
    return body if status == 200 and body["status"]["id"] >= 3 else None


def test_a_network_beside_an_interactor_is_refused(net):
    req = job("print(input())\n")
    req["interactor"] = {"language": "py3", "source": "print(1)\n"}
    code, body = net.post("/run", req)
    assert code == 400 and body["error"]["code"] == "invalid_network", dump(body)


def test_without_the_operator_no_request_gets_a_network(daemon):
    code, body = daemon.post("/run", job("print(1)\n"))
    assert code == 400 and body["error"]["code"] == "network_not_allowed", dump(body)
    status, body = daemon.post("/submissions?wait=true",
                               {"language_id": 71, "source_code": "print(1)\n",
                                "enable_network": True})
    assert status == 422 and "enable_network" in body, dump(body)
    status, info = daemon.get("/config_info")
    assert status == 200 and info["allow_enable_network"] is False, info
