"""The page to try live sessions (--try-page): off by default, its files
served with their types and its security headers, xterm.js read from
--try-page-xterm-dir, open without a token while a session's WebSocket
takes one in ?token=, and a real browser (headless Chromium driven by
Selenium) running an echo program through it."""
import os
import re
import shutil
import tempfile
import time
import urllib.request

import pytest

from conftest import Daemon, small, wait_until
from test_sessions import WS, start, text

TOKEN = "page-token-0123456789abcdef"
# where ./setup.sh puts npm's @xterm/xterm (--try-page-xterm-dir's default)
DEFAULT_XTERM = "/opt/goboxd/xterm"
ECHO_PY = ("import os, sys\nprint('tty:', os.isatty(0), flush=True)\nfor line in sys.stdin:\n"
           "    print(line.strip().upper(), flush=True)\n"
           "    print('err:' + line.strip(), file=sys.stderr, flush=True)\n")
PAGE = {"/try": "text/html", "/try/": "text/html", "/try/try.js": "text/javascript",
        "/try/try.css": "text/css", "/try/xterm.js": "text/javascript",
        "/try/xterm.css": "text/css"}
WAIT = 60


def fetch(d, path, headers=None):
    """Status, headers and raw body of a GET."""
    req = urllib.request.Request(d.url + path, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


@pytest.fixture(scope="module")
def xterm_dir():
    path = tempfile.mkdtemp(prefix="goboxd-xterm-")
    with open(os.path.join(path, "xterm.js"), "w") as f:
        f.write("/* a stand-in xterm.js */\nwindow.NotATerminal = 1;\n")
    with open(os.path.join(path, "xterm.css"), "w") as f:
        f.write(".xterm { color: white; }\n")
    yield path
    shutil.rmtree(path, True)


@pytest.fixture(scope="module")
def d(xterm_dir):
    dm = Daemon(args=["--try-page", "--try-page-xterm-dir", xterm_dir], languages=small())
    yield dm
    dm.stop()


def test_without_the_option_the_page_is_404():
    dm = Daemon(languages=small())
    try:
        for path in PAGE:
            status, _, body = fetch(dm, path)
            assert status == 404, (path, body)
            assert b"no such endpoint" in body
    finally:
        dm.stop()


def test_files_with_their_types_and_headers(d, xterm_dir):
    for path, kind in PAGE.items():
        status, headers, body = fetch(d, path)
        assert status == 200, (path, body)
        assert headers["Content-Type"].split(";")[0] == kind, path
        assert headers["X-Content-Type-Options"] == "nosniff"
        csp = headers["Content-Security-Policy"]
        assert "script-src 'self';" in csp and "default-src 'none'" in csp
        assert "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    _, _, html = fetch(d, "/try")
    scripts = re.findall(rb"<script([^>]*)>(.*?)</script>", html, re.S)
    assert [s[0] for s in scripts] == [b' src="/try/xterm.js"', b' src="/try/try.js"']
    assert all(not s[1].strip() for s in scripts), "no inline script"
    assert b'id="language"' in html and b'id="run"' in html
    assert b"new WebSocket" in fetch(d, "/try/try.js")[2]
    with open(os.path.join(xterm_dir, "xterm.js"), "rb") as f:
        assert fetch(d, "/try/xterm.js")[2] == f.read()
    with open(os.path.join(xterm_dir, "xterm.css"), "rb") as f:
        assert fetch(d, "/try/xterm.css")[2] == f.read()
    status, headers, _ = fetch(d, "/try/other.js")
    assert status == 404
    req = urllib.request.Request(d.url + "/try", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=30)
    assert e.value.code == 405 and e.value.headers["Allow"] == "GET"


@pytest.mark.skipif(not os.path.exists(os.path.join(DEFAULT_XTERM, "xterm.js")),
                    reason="xterm.js is not installed (./setup.sh langs)")
def test_xterm_from_its_install_by_default():
    dm = Daemon(args=["--try-page"], languages=small())
    try:
        for name in ("xterm.js", "xterm.css"):
            with open(os.path.join(DEFAULT_XTERM, name), "rb") as f:
                assert fetch(dm, "/try/" + name)[2] == f.read()
    finally:
        dm.stop()


def test_missing_xterm_said_at_start_and_answered_404(tmp_path):
    dm = Daemon(args=["--try-page", "--try-page-xterm-dir", str(tmp_path)],
                languages=small())
    try:
        line = dm.wait_log(lambda l: "--try-page: %s/xterm.js" % tmp_path in l.get("msg", ""),
                           "the warning about xterm.js")
        assert "No such file" in line["msg"] and line["level"] == "warn", line
        status, headers, body = fetch(dm, "/try/xterm.js")
        assert status == 404 and headers["X-Content-Type-Options"] == "nosniff"
        assert b"@xterm/xterm" in body and str(tmp_path).encode() in body
        assert fetch(dm, "/try")[0] == 200
    finally:
        dm.stop()


def test_with_tokens_the_page_is_open_and_the_socket_takes_token_in_its_query(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKEN + "\n")
    dm = Daemon(args=["--try-page", "--auth-tokens", str(tokens)], languages=small())
    try:
        assert fetch(dm, "/try")[0] == 200
        assert fetch(dm, "/try/try.js")[0] == 200
        assert fetch(dm, "/info")[0] == 401
        # ?token= is for a session's WebSocket upgrade only
        assert fetch(dm, "/info?token=" + TOKEN)[0] == 401
        assert fetch(dm, "/sessions?token=" + TOKEN)[0] == 401
        assert WS(dm.port, "/sessions?token=wrong-token-0123456789").status == 401
        ws = WS(dm.port, "/sessions?token=" + TOKEN)
        assert ws.status == 101, ws.head
        start(ws, "py3", "print(2)\n")
        assert text(ws.until_close(), "stdout") == "2\n"
        # nor does the token reach the log
        assert TOKEN not in dm.read_log()
    finally:
        dm.stop()


def chrome(tmp_path):
    """Headless Chromium under Selenium, or a skip saying what is missing."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("python3-selenium is not installed")
    binary = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if not binary or not driver:
        pytest.skip("chromium or chromedriver (Debian's chromium-driver) is not installed")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--user-data-dir=" + str(tmp_path / "chromium")):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(executable_path=driver), options=opts)


def terminal_text(drv):
    return drv.execute_script(
        "const t = document.querySelector('.xterm-rows') || document.getElementById('plain');"
        "return t ? t.textContent : '';")


def wait_for(drv, cond, what):
    deadline = time.time() + WAIT
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError("no %s within %d s; the terminal shows:\n%s"
                         % (what, WAIT, terminal_text(drv)))


def type_line(drv, line):
    """A line typed into whichever terminal the page has: xterm's hidden
    textarea, or the plain terminal's input line."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    if drv.find_elements(By.CSS_SELECTOR, ".xterm-helper-textarea"):
        drv.find_element(By.ID, "terminal").click()
        ActionChains(drv).send_keys(line + Keys.ENTER).perform()
    else:
        drv.find_element(By.ID, "plain-line").send_keys(line + Keys.ENTER)


def run_echo(drv, d, token=None):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    drv.get(d.url + "/try")
    if token:
        wait_for(drv, lambda: "needs a token" in drv.find_element(By.ID, "notice").text,
                 "the page asking for a token")
        drv.find_element(By.ID, "token").send_keys(token + Keys.TAB)
    wait_for(drv, lambda: drv.find_elements(By.CSS_SELECTOR, "#language option[value=py3]"),
             "language list")
    Select(drv.find_element(By.ID, "language")).select_by_value("py3")
    src = drv.find_element(By.ID, "source")
    src.clear()
    src.send_keys(ECHO_PY)
    drv.find_element(By.ID, "run").click()
    wait_for(drv, lambda: drv.find_element(By.ID, "state").text == "run", "run stage")
    type_line(drv, "hello")
    wait_for(drv, lambda: "HELLO" in terminal_text(drv), "HELLO")


@pytest.mark.parametrize("xterm", ["installed", "absent"])
def test_a_browser_runs_an_echo_program(tmp_path, xterm):
    """installed: the default directory, where ./setup.sh put xterm.js's
    browser build (npm's @xterm/xterm): xterm itself, and the program has
    a terminal (the session's tty), which echoes what is typed and takes
    stderr too; absent: none, the plain terminal, which edits the line
    itself and shows stderr apart."""
    from selenium.webdriver.common.by import By

    args = ["--try-page"]
    if xterm == "absent":
        args += ["--try-page-xterm-dir", str(tmp_path)]
    elif not os.path.exists(os.path.join(DEFAULT_XTERM, "xterm.js")):
        pytest.skip("xterm.js is not installed (./setup.sh langs)")
    drv = chrome(tmp_path)
    dm = Daemon(args=args, languages=small())
    try:
        run_echo(drv, dm)
        if xterm == "installed":
            assert drv.find_elements(By.CSS_SELECTOR, ".xterm-helper-textarea")
        shown = terminal_text(drv)
        assert "hello" in shown, "the line typed is echoed"
        if xterm == "installed":
            assert "tty: True" in shown and "err:hello" in shown, shown
        else:
            assert "tty: False" in shown, shown
            # stderr in another colour: the plain terminal's class
            assert "err:hello" in drv.execute_script(
                "return Array.from(document.querySelectorAll('#plain .stderr'))"
                ".map(e => e.textContent).join('')")
        drv.find_element(By.ID, "eof").click()
        wait_for(drv, lambda: "[exit: accepted, exit code 0," in terminal_text(drv),
                 "exit line")
        assert re.search(r"\[exit: accepted, exit code 0, \d+ ms, \d+ KiB\]",
                         terminal_text(drv))
        wait_for(drv, lambda: drv.find_element(By.ID, "state").text == "exited: accepted",
                 "exited state")
        if xterm == "absent":
            assert "xterm.js did not load" in drv.find_element(By.ID, "notice").text

        # Stop closes the socket, and the program ends with it
        run_echo(drv, dm)
        drv.find_element(By.ID, "stop").click()
        wait_for(drv, lambda: "[closed" in terminal_text(drv), "closed line")
        wait_until(lambda: dm.stats()["in_flight_jobs"] == 0, "the session's end", WAIT)
    finally:
        drv.quit()
        dm.stop()


def test_a_browser_with_a_token(tmp_path):
    """With --auth-tokens the page asks for a token, reads /info with it
    and gives it to the session's WebSocket."""
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKEN + "\n")
    drv = chrome(tmp_path)
    dm = Daemon(args=["--try-page", "--auth-tokens", str(tokens)], languages=small())
    try:
        run_echo(drv, dm, TOKEN)
    finally:
        drv.quit()
        dm.stop()
