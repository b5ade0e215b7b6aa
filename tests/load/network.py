#!/usr/bin/env python3
"""What a job's network costs: prints numbers, asserts nothing.

  stacks  the two user-mode stacks Debian has, slirp4netns and pasta
          (passt), each attached to a fresh user and network namespace
          made by an unprivileged uid, as goboxd attaches slirp4netns to
          a jail's: the time from its start to a namespace that can
          connect (slirp4netns: its ready fd; pasta: its return, which it
          makes once the namespace is configured), median of --count;
          then the download of --mbytes MiB from a server in another
          network namespace on this host (tests/e2e/netpeer.py), through
          each, MiB/s, median of 3;
  job     goboxd with --network: a hello-world py3 job with and without
          "network": true, one at a time, interleaved, p50 and p99.

Needs root, iproute2, slirp4netns and pasta (the passt package); a stack
that is missing is left out.

  tests/load/network.py build/goboxd [--count 20] [--mbytes 64] [--jail bwrap]
                        [--phases stacks,job]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import engine  # noqa: E402  (the daemon, percentiles)
import netpeer  # noqa: E402  (the other machine)
from engine import pct  # noqa: E402

UID = 61234  # an unprivileged uid of no one's, for the namespaces


def as_uid(argv):
    return ["setpriv", "--reuid", str(UID), "--regid", str(UID), "--clear-groups"] + argv


class Namespace:
    """A user and network namespace held by a sleeping process of UID."""

    def __init__(self):
        self.proc = subprocess.Popen(as_uid(["unshare", "--user", "--map-root-user", "--net",
                                             "sleep", "600"]))
        deadline = time.time() + 10
        while time.time() < deadline:
            # unshare's own process, once it has made the namespace
            if self.ns("net") != os.readlink("/proc/self/ns/net"):
                return
            time.sleep(0.01)
        raise SystemExit("unshare did not make a namespace")

    def ns(self, kind):
        return os.readlink("/proc/%d/ns/%s" % (self.proc.pid, kind))

    def path(self, kind):
        return "/proc/%d/ns/%s" % (self.proc.pid, kind)

    def run(self, argv, **kw):
        """argv as root in the namespace's network alone."""
        return subprocess.run(["nsenter", "--target", str(self.proc.pid), "--net"] + argv, **kw)

    def close(self):
        self.proc.kill()
        self.proc.wait()


def start_slirp(ns):
    r, w = os.pipe()
    t = time.perf_counter()
    p = subprocess.Popen(as_uid(["slirp4netns", "--configure", "--mtu=65520",
                                 "--disable-host-loopback", "--ready-fd=%d" % w,
                                 "--userns-path=" + ns.path("user"), "--netns-type=path",
                                 ns.path("net"), "tap0"]), pass_fds=(w,),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    ok = os.read(r, 1) == b"1"
    ms = (time.perf_counter() - t) * 1000
    os.close(r)
    if not ok:
        p.kill()
        raise SystemExit("slirp4netns did not become ready")
    return ms, lambda: (p.kill(), p.wait())


def start_pasta(ns):
    pidfile = tempfile.mktemp(prefix="goboxd-pasta-")
    t = time.perf_counter()
    subprocess.run(as_uid(["pasta", "--quiet", "--config-net", "--no-map-gw", "--pid", pidfile,
                           "--userns", ns.path("user"), "--netns", ns.path("net")]), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ms = (time.perf_counter() - t) * 1000

    def stop():
        # pasta went to the background (as passt.avx2, say): the pid it wrote
        with open(pidfile) as f:
            os.kill(int(f.read()), 9)
        os.unlink(pidfile)
    return ms, stop


STACKS = [("slirp4netns", "slirp4netns", start_slirp), ("pasta", "pasta", start_pasta)]


def download(ns, url):
    src = ("import time, urllib.request\n"
           "t = time.perf_counter(); n = len(urllib.request.urlopen(%r, timeout=60).read())\n"
           "print(n / (time.perf_counter() - t) / 1048576)\n" % url)
    out = ns.run(["/usr/bin/python3", "-c", src], capture_output=True, text=True, check=True)
    return float(out.stdout)


def phase_stacks(count, mbytes, peer):
    print("stacks: start to a namespace that connects, median of %d; download of %d MiB from"
          " another namespace, median of 3" % (count, mbytes))
    big = os.path.join(peer.tmp, "www", "mbytes")
    with open(big, "wb") as f:
        f.write(os.urandom(mbytes << 20))
    url = "http://%s:%d/mbytes" % (peer.ip, netpeer.HTTP_PORT)
    print("| stack | start p50 ms | start p99 ms | download MiB/s |")
    print("|---|---|---|---|")
    for name, binary, start in STACKS:
        if not shutil.which(binary):
            print("| %s | (not installed) | | |" % name)
            continue
        starts, rates = [], []
        for i in range(count):
            ns = Namespace()
            stop = None
            try:
                ms, stop = start(ns)
                starts.append(ms)
                if i < 3:
                    rates.append(download(ns, url))
            finally:
                if stop:
                    stop()
                ns.close()
        print("| %s | %.1f | %.1f | %.0f |" % (name, pct(starts, 50), pct(starts, 99),
                                               pct(rates, 50)))
        sys.stdout.flush()


def phase_job(binary, jail, tmp, count):
    d = engine.Daemon(binary, jail, tmp, ["--workers", "1", "--network"], languages=("py3",))
    lat = {False: [], True: []}
    try:
        for r in range(count):
            for net in (False, True) if r % 2 else (True, False):
                body = {"language": "py3", "source": engine.HELLO, "tests": [{"stdin": ""}]}
                if net:
                    body["network"] = True
                t = time.perf_counter()
                status, res = d.request("POST", "/run", body)
                if status != 200 or res.get("status") != "accepted":
                    raise SystemExit("a job failed: %s" % res)
                lat[net].append((time.perf_counter() - t) * 1000)
    finally:
        d.stop()
    print("job: hello-world py3 one at a time, %d each, interleaved (%s, one worker)"
          % (count, jail))
    print("| | p50 ms | p99 ms |")
    print("|---|---|---|")
    for net in (False, True):
        print("| %s | %.1f | %.1f |" % ("with a network" if net else "without", pct(lat[net], 50),
                                        pct(lat[net], 99)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("goboxd")
    ap.add_argument("--jail", default="bwrap", choices=["bwrap", "nsjail"])
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--mbytes", type=int, default=64)
    ap.add_argument("--phases", default="stacks,job",
                    help="which phases, comma-separated: stacks, job")
    a = ap.parse_args()
    phases = a.phases.split(",")
    if not phases or set(phases) - {"stacks", "job"}:
        raise SystemExit("--phases: stacks, job, or both")
    why = netpeer.unavailable()
    if why:
        raise SystemExit(why)
    print("kernel %s, %s CPUs" % (os.uname().release, os.cpu_count()))
    peer = netpeer.Peer(99).start()
    tmp = tempfile.mkdtemp(prefix="goboxd-network-")
    os.chmod(tmp, 0o711)
    try:
        if "stacks" in phases:
            phase_stacks(a.count, a.mbytes, peer)
        if "job" in phases:
            phase_job(os.path.abspath(a.goboxd), a.jail, tmp, a.count * 5)
    finally:
        peer.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
