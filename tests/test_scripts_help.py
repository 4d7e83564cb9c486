"""Every script's ``--help``: exit status 0, the script's own usage, plain text (no reStructuredText roles or
literals from the docstrings)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "scripts").rglob("*.sh") if not p.name.startswith("_"))
MARKUP = re.compile(r"``|:(class|func|meth|mod|data|attr|exc):`")


@pytest.mark.parametrize("script", SCRIPTS, ids=[str(p.relative_to(ROOT / "scripts")) for p in SCRIPTS])
def test_every_script_prints_its_own_help_as_plain_text(script):
    done = subprocess.run(["bash", str(script), "--help"], capture_output=True, text=True, timeout=300)
    text = done.stdout + done.stderr
    assert done.returncode == 0, text[-2000:]
    assert f"scripts/{script.relative_to(ROOT / 'scripts')}" in text or "usage" in text.lower(), text[:500]
    assert len(text.splitlines()) >= 3 and not MARKUP.search(text), MARKUP.search(text)


def test_a_scripts_own_test_help_is_its_usage_not_pytests():
    done = subprocess.run(["bash", str(ROOT / "scripts/test.sh"), "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "bash scripts/test.sh" in done.stdout and len(done.stdout.splitlines()) < 20
