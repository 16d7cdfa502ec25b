"""Lint and format are part of the test command (ruff, configured in pyproject.toml)."""

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
