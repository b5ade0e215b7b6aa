"""Another machine for a job's network to reach: a network namespace of
its own on this host, joined to it by a veth pair, with an HTTP server
and a DNS server in it. Its address is private (10.213.N.2/30), so a job
reaches it only where --network-allow lets it through; this host's end of
the pair (10.213.N.1) is one of this host's addresses, which nothing lets
through. Each pytest-xdist worker has its own N.

Needs root, iproute2 (`ip netns`) and python3; start() says why not
when it cannot be made."""

import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

HTTP_PORT = 8080
# what the HTTP server serves: /hello, and /big (BIG bytes)
BIG = 3 * 1024 * 1024
DNS_SUFFIX = ".goboxd.test"


def run(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class Peer:
    def __init__(self, index):
        self.index = index
        self.ns = "gbxpeer%d" % index
        self.host_if, self.peer_if = "gbxh%d" % index, "gbxp%d" % index
        self.host_ip = "10.213.%d.1" % index
        self.ip = "10.213.%d.2" % index
        self.net = "10.213.%d.0/30" % index
        self.tmp = tempfile.mkdtemp(prefix="goboxd-netpeer-")
        self.procs = []

    def start(self):
        self.stop_namespace()
        run("ip", "netns", "add", self.ns)
        run("ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.peer_if)
        run("ip", "link", "set", self.peer_if, "netns", self.ns)
        run("ip", "addr", "add", self.host_ip + "/30", "dev", self.host_if)
        run("ip", "link", "set", self.host_if, "up")
        run("ip", "netns", "exec", self.ns, "ip", "addr", "add", self.ip + "/30", "dev",
            self.peer_if)
        run("ip", "netns", "exec", self.ns, "ip", "link", "set", self.peer_if, "up")
        run("ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up")
        www = os.path.join(self.tmp, "www")
        os.makedirs(www)
        with open(os.path.join(www, "hello"), "w") as f:
            f.write("hello from the peer\n")
        with open(os.path.join(www, "big"), "wb") as f:
            f.write(os.urandom(BIG))
        self.procs.append(subprocess.Popen(
            ["ip", "netns", "exec", self.ns, sys.executable, "-m", "http.server",
             str(HTTP_PORT), "--bind", self.ip, "--directory", www],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.procs.append(subprocess.Popen(
            ["ip", "netns", "exec", self.ns, sys.executable, os.path.abspath(__file__), "dns",
             self.ip], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.resolv_conf = os.path.join(self.tmp, "resolv.conf")
        with open(self.resolv_conf, "w") as f:
            f.write("nameserver %s\n" % self.ip)
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                socket.create_connection((self.ip, HTTP_PORT), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the peer's HTTP server did not start")

    def wrapper(self):
        """A command prefix that runs goboxd in a mount namespace of its own
        where /etc/resolv.conf names the peer's DNS server: what
        slirp4netns's resolver asks."""
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                'mount --bind "$0" /etc/resolv.conf && exec "$@"', self.resolv_conf]

    def stop_namespace(self):
        subprocess.run(["ip", "link", "del", self.host_if], stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "netns", "del", self.ns], stderr=subprocess.DEVNULL)

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()
        self.stop_namespace()
        shutil.rmtree(self.tmp, ignore_errors=True)


def unavailable():
    """Why no peer can be made here, or None."""
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("ip", "unshare", "slirp4netns"):
        if not shutil.which(tool):
            return "needs %s" % tool
    try:
        if os.stat("/dev/net/tun").st_mode & 0o666 != 0o666:
            return "needs /dev/net/tun open to every uid"
    except OSError:
        return "needs /dev/net/tun"
    return None


# ---- the DNS server: A records for *.goboxd.test, the peer's address ----

def dns_answer(query, address):
    """The answer to one query: an A record of address for a name under
    DNS_SUFFIX, else NXDOMAIN; None for what is not a query."""
    if len(query) < 12:
        return None
    qid, flags, qdcount = struct.unpack("!HHH", query[:6])
    if flags & 0x8000 or qdcount != 1:
        return None
    labels, i = [], 12
    while i < len(query) and query[i]:
        n = query[i]
        labels.append(query[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    question = query[12:i + 5]
    if i + 5 > len(query):
        return None
    qtype = struct.unpack("!H", query[i + 1:i + 3])[0]
    name = ".".join(labels).lower()
    found = ("." + name).endswith(DNS_SUFFIX)
    answers = found and qtype == 1
    head = struct.pack("!HHHHHH", qid, 0x8180 if found else 0x8183, 1, 1 if answers else 0,
                       0, 0)
    body = question
    if answers:
        body += struct.pack("!HHHIH", 0xc00c, 1, 1, 60, 4) + socket.inet_aton(address)
    return head + body


def serve_dns(address):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((address, 53))
    while True:
        query, peer = s.recvfrom(512)
        answer = dns_answer(query, address)
        if answer:
            s.sendto(answer, peer)


if __name__ == "__main__" and sys.argv[1:2] == ["dns"]:
    serve_dns(sys.argv[2])
