"""A private PostgreSQL cluster for the end-to-end tests of a fleet on a
shared store: Debian's server binaries (/usr/lib/postgresql/N/bin, the
newest N), a data directory of its own, 127.0.0.1 and a free port (the
same one across restarts), its unix socket in its own directory, trust
authentication, no fsync. tests/pg-cluster is the same for the C unit
tests.

PostgreSQL refuses to run as root: run by root, the cluster's files and
its server belong to nobody (setpriv), so every directory above the
cluster's must let nobody in; the default parent, /var/tmp, does (a
pytest tmp_path under /tmp/pytest-of-root does not, and is not used
when given: the cluster goes to /var/tmp then).

    with PgCluster() as pg:           # or pg = PgCluster(); pg.start()
        url = pg.url()                # database "goboxd", made by start()
        pg.psql("SELECT 1")           # "1"
        pg.createdb("other")
        pg.restart()                  # pg_ctl stop -m fast, then start
        pg.stop(); pg.start()         # down for a while, the same port
    # stopped (immediate) and its files removed; atexit does it too

Skips the test (pytest.skip) only when PostgreSQL's server binaries are
not installed (setup.sh installs them); any other failure (initdb,
pg_ctl) raises RuntimeError with the server's own words.
"""
import atexit
import glob
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

DEFAULT_DB = "goboxd"
SUPERUSER = "postgres"


def server_bin():
    """The newest installed server's bin directory (initdb, pg_ctl,
    postgres, psql), or None."""
    def version(path):
        return [int(x) for x in re.findall(r"\d+", path)] or [0]
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True):
        if all(os.access(os.path.join(d, b), os.X_OK) for b in ("initdb", "pg_ctl", "postgres")):
            return d
    return None


def available():
    """Whether PostgreSQL's server is installed (for skipif)."""
    return server_bin() is not None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path, n=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError as e:
        return "(%s)" % e


class PgCluster:
    """One private cluster. tmpdir: the directory to make it in (a new
    directory of its own there; /var/tmp when None, or when the server's
    user could not reach tmpdir)."""

    def __init__(self, tmpdir=None, start_timeout=60):
        self.bin = server_bin()
        if self.bin is None:
            import pytest
            pytest.skip("PostgreSQL's server is not installed "
                        "(Debian: apt-get install postgresql; setup.sh installs it)")
        self.root = os.geteuid() == 0
        self.start_timeout = start_timeout
        self.port = None
        self.running = False
        self._cleaned = False
        parent = tmpdir if tmpdir and self._reachable(str(tmpdir)) else "/var/tmp"
        self.dir = tempfile.mkdtemp(prefix="goboxd-pg-", dir=str(parent))
        os.chmod(self.dir, 0o700)
        if self.root:
            os.chown(self.dir, *self._owner_ids())
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "server.log")
        atexit.register(self.cleanup)
        self._initdb()

    # ---- running as the server's user --------------------------------

    @staticmethod
    def _owner_ids():
        import pwd
        import grp
        uid = pwd.getpwnam("nobody").pw_uid
        try:
            gid = grp.getgrnam("nogroup").gr_gid
        except KeyError:
            gid = pwd.getpwnam("nobody").pw_gid
        return uid, gid

    def _as_owner(self, argv):
        if not self.root:
            return list(argv)
        setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
        uid, gid = self._owner_ids()
        return [setpriv, "--reuid=%d" % uid, "--regid=%d" % gid, "--clear-groups",
                "--"] + list(argv)

    def _reachable(self, path):
        """Whether the server's user may make a directory's way to path
        (every directory above it searchable)."""
        if not os.path.isdir(path):
            return False
        if not self.root:
            return os.access(path, os.W_OK | os.X_OK)
        uid, gid = self._owner_ids()
        p = os.path.abspath(path)
        while True:
            st = os.stat(p)
            if not (st.st_mode & 0o001 or (st.st_uid == uid and st.st_mode & 0o100) or
                    (st.st_gid == gid and st.st_mode & 0o010)):
                return False
            if p == "/":
                return True
            p = os.path.dirname(p)

    def _run(self, argv, what, timeout=None, check=True):
        env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "LANG": "C", "TZ": "UTC"}
        try:
            r = subprocess.run(self._as_owner(argv), cwd=self.dir, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=timeout or self.start_timeout + 30)
        except subprocess.TimeoutExpired as e:
            raise RuntimeError("%s: no answer in %s s\n%s\nserver log:\n%s"
                               % (what, e.timeout, (e.output or b"").decode(errors="replace"),
                                  _tail(self.log)))
        out = r.stdout.decode(errors="replace")
        if check and r.returncode != 0:
            raise RuntimeError("%s failed (exit %d):\n%s\nserver log:\n%s"
                               % (what, r.returncode, out, _tail(self.log)))
        return r.returncode, out

    def _initdb(self):
        initdb = os.path.join(self.bin, "initdb")
        self._run([initdb, "-D", self.data, "-A", "trust", "-U", SUPERUSER, "-E", "UTF8",
                   "--locale=C", "--no-sync"], "initdb (%s)" % initdb)

    # ---- the server ----------------------------------------------------

    def start(self):
        """Start the server (the first time: on a free port, then the
        database "goboxd"); waits until it takes connections."""
        if self.running:
            return self
        first = self.port is None
        if first:
            self.port = _free_port()
        opts = ("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c full_page_writes=off -c synchronous_commit=off -c max_connections=200 "
                "-c log_min_messages=warning" % (self.port, self.dir))
        self._run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l", self.log, "-w",
                   "-t", str(self.start_timeout), "-o", opts, "start"],
                  "pg_ctl start (port %d)" % self.port)
        self.running = True
        if first:
            self.createdb(DEFAULT_DB)
        return self

    def stop(self, mode="fast"):
        """Stop the server (pg_ctl -m fast: clients disconnected, no
        crash recovery at the next start; "immediate" is a crash)."""
        if not self.running and not os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self.running = False
            return
        self._run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", mode, "-w",
                   "-t", "60", "stop"], "pg_ctl stop -m %s" % mode)
        self.running = False

    def restart(self):
        """pg_ctl stop -m fast, then start on the same port."""
        self.stop("fast")
        self.start()

    def url(self, db=DEFAULT_DB, user=SUPERUSER):
        assert self.port is not None, "PgCluster: start() it first"
        return "postgresql://%s@127.0.0.1:%d/%s" % (user, self.port, db)

    def psql(self, sql, db=DEFAULT_DB, timeout=60):
        """Run sql (psql -At, stopping at the first error); its output,
        stripped (rows by lines, columns by |). Raises RuntimeError on an
        error."""
        psql = os.path.join(self.bin, "psql")
        if not os.access(psql, os.X_OK):
            psql = shutil.which("psql") or psql
        r = subprocess.run([psql, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
                            "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER,
                            "-d", db, "-c", sql],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           env={"PATH": "/usr/bin:/bin", "PGCONNECT_TIMEOUT": "10",
                                "LC_ALL": "C"})
        if r.returncode != 0:
            raise RuntimeError("psql %r on %s: %s" % (sql, db, r.stderr.decode(errors="replace")))
        return r.stdout.decode().strip()

    def createdb(self, name):
        """A new database (empty; goboxd makes its schema); its URL."""
        assert re.fullmatch(r"[a-z_][a-z0-9_]*", name), name
        self.psql("CREATE DATABASE %s" % name, db="postgres")
        return self.url(name)

    def server_log(self, lines=40):
        return _tail(self.log, lines)

    def cleanup(self):
        """Stop the server however it is (immediate) and remove its files.
        Safe to call twice."""
        if self._cleaned:
            return
        self._cleaned = True
        try:
            if os.path.exists(os.path.join(self.data, "postmaster.pid")):
                self._run([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m",
                           "immediate", "-w", "-t", "30", "stop"], "pg_ctl stop",
                          timeout=60, check=False)
        finally:
            self.running = False
            if not os.environ.get("GOBOXD_KEEP_TEST_DIRS"):
                shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()
        return False


if __name__ == "__main__":
    # A smoke test: start, SELECT 1, restart, a database, stop.
    t0 = time.time()
    with PgCluster() as pg:
        print("up at", pg.url(), "in %.1f s" % (time.time() - t0))
        assert pg.psql("SELECT 1") == "1"
        pg.restart()
        assert pg.psql("SELECT 2") == "2"
        print("other:", pg.createdb("other"))
        pg.stop()
        pg.start()
        assert pg.psql("SELECT 3", db="other") == "3"
    print("ok in %.1f s" % (time.time() - t0))
