"""What an operator relies on besides the API: the man page."""
import os
import re
import shutil
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAN = os.path.join(TOP, "docs", "goboxd.8")


def help_options():
    out = subprocess.run([os.environ.get("GOBOXD_BIN"), "--help"], capture_output=True,
                         text=True, check=True).stdout
    return sorted(set(re.findall(r"^\s+--([a-z][a-z0-9-]*)", out, re.M)))


def test_man_page_documents_every_option():
    with open(MAN) as f:
        text = f.read().replace("\\-", "-")
    options = help_options()
    assert "log-file" in options and "check" in options
    missing = [o for o in options if not re.search(r"^\.B[IR]? --%s\b" % re.escape(o), text,
                                                   re.M)]
    assert not missing, "goboxd.8 lacks: %s" % ", ".join(missing)


@pytest.mark.skipif(not shutil.which("groff"), reason="groff missing (apt-get install groff-base)")
def test_man_page_renders_without_warnings():
    p = subprocess.run(["groff", "-man", "-ww", "-z", MAN], capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr
