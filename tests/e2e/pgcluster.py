"""A private PostgreSQL cluster for the end-to-end tests of a fleet on a
shared store: tests/pg-cluster's (Debian's server binaries, 127.0.0.1 and
a free port kept across restarts, trust authentication, no fsync; run by
root, the server is nobody's), in a directory of its own under /var/tmp
(every directory above it must let nobody in: a pytest tmp_path under
/tmp/pytest-of-root would not).

    with PgCluster() as pg:           # or pg = PgCluster(); pg.start()
        url = pg.url()                # database "goboxd", made at the first start
        pg.psql("SELECT 1")           # "1"
        pg.createdb("other")
        pg.restart()                  # stopped (fast), then started
        pg.stop(); pg.start()         # down for a while, the same port
    # stopped at once and its files removed; atexit does it too

Skips the test (pytest.skip) only when PostgreSQL's server is not
installed (setup.sh installs it); any other failure raises RuntimeError
with the server's own words.
"""
import atexit
import glob
import os
import re
import shutil
import subprocess
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(TOP, "tests", "pg-cluster")
DEFAULT_DB = "goboxd"
SUPERUSER = "postgres"
SKIP = 77  # tests/pg-cluster: the server is not installed


def available():
    """Whether PostgreSQL's server is installed (for skipif)."""
    return any(os.access(os.path.join(d, "pg_ctl"), os.X_OK)
               for d in glob.glob("/usr/lib/postgresql/*/bin"))


class PgCluster:
    """One private cluster, made at its first start()."""

    def __init__(self):
        if not available():
            import pytest
            pytest.skip("PostgreSQL's server is not installed "
                        "(Debian: apt-get install postgresql; setup.sh installs it)")
        self.parent = tempfile.mkdtemp(prefix="goboxd-pg-", dir="/var/tmp")
        os.chmod(self.parent, 0o711)  # the server's user passes through
        self.dir = os.path.join(self.parent, "c")
        self.port = None
        self.running = False
        self._cleaned = False
        atexit.register(self.cleanup)

    def _script(self, cmd, check=True):
        r = subprocess.run([SCRIPT, cmd, self.dir], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=150)
        out = r.stdout.decode(errors="replace")
        if check and r.returncode != 0:
            raise RuntimeError("tests/pg-cluster %s failed (exit %d):\n%s"
                               % (cmd, r.returncode, out))
        return out

    def start(self):
        """Start the server (the first time: made, on a free port, with the
        database "goboxd"); waits until it takes connections."""
        url = self._script("start").strip().splitlines()[-1]
        self.port = int(re.search(r":(\d+)/", url).group(1))
        self.running = True
        return self

    def stop(self):
        """Stop the server (fast: clients disconnected, no crash recovery at
        the next start); its files stay."""
        self._script("stop")
        self.running = False

    def restart(self):
        self._script("restart")
        self.running = True

    def url(self, db=DEFAULT_DB, user=SUPERUSER):
        assert self.port is not None, "PgCluster: start() it first"
        return "postgresql://%s@127.0.0.1:%d/%s" % (user, self.port, db)

    def psql(self, sql, db=DEFAULT_DB, timeout=60):
        """Run sql (psql -At, stopping at the first error); its output,
        stripped (rows by lines, columns by |). Raises RuntimeError on an
        error."""
        r = subprocess.run([shutil.which("psql") or "psql", "-X", "-q", "-At",
                            "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port),
                            "-U", SUPERUSER, "-d", db, "-c", sql],
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

    def cleanup(self):
        """Stop the server at once and remove its files. Safe to call twice."""
        if self._cleaned:
            return
        self._cleaned = True
        self.running = False
        if os.environ.get("GOBOXD_KEEP_TEST_DIRS"):
            self._script("stop", check=False)
            return
        self._script("remove", check=False)
        shutil.rmtree(self.parent, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()
        return False


if __name__ == "__main__":
    # A smoke test: start, SELECT 1, restart, a database, stop, start.
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
