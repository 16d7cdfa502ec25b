"""Schemathesis over every operation of the service's OpenAPI: the real app under a real uvicorn on loopback, on a
fresh SQLite store holding one upload, fuzzed by schemathesis' CLI in a subprocess.

Every phase runs (examples, coverage, fuzzing, stateful) with every check (``--checks all``: no 5xx, documented
status codes, content types, headers and response schemas, valid data accepted, invalid data rejected, auth not
ignored, ...). The run is bounded (``MAX_EXAMPLES`` per operation, one worker) and reproducible (a fixed seed,
deterministic generation, no example database, no schemathesis cache). Any failure fails the test, and the message
lists each one: operation, checks, status, body and a curl that reproduces it.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import httpx
import pytest

from gate.api.app import create_app
from gate.api.background import serving
from gate.store import db, queries
from tests.gate import gitrepo
from tests.gate.builders import bundle_of

TOKEN = "fg_fuzz-token"
SEED = 20260101
MAX_EXAMPLES = 150  # per operation and phase: the whole test takes about 1.5 minutes on 2 cores
TIMEOUT_S = 240  # the bound of the run: past it the test fails
PHASES = "examples,coverage,fuzzing,stateful"
CHECKS = "all"

# What the run may reasonably expect of this deployment, where the defaults of a check do not fit:
# - the PR bot is not configured here, so the webhook answers its documented 503 to every request;
# - git refs and bundle contents are checked beyond what a JSON schema can say (a ref must resolve, an asv
#   file must parse), and the service answers a well-formed but unusable one with 422 (tests/gate/api/
#   test_service.py holds it to that), so schema-valid data may be rejected with 422 there.
OPERATIONS = """
[[operations]]
include-name = "POST /api/github/webhook"
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "503"]

[[operations]]
include-name = ["POST /api/runs", "POST /api/evaluations", "GET /api/verdicts/{base}/{head}",
                "GET /api/rounds/{base}/{head}"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]
"""


def _toml(value) -> str:
    return json.dumps(value)  # JSON strings, numbers and arrays are TOML too


def _config(*, base: str, head: str, placement: str) -> str:
    """schemathesis.toml: no persistent state; the preloaded data's names offered half the time, so requests reach
    past the 404s of made-up machines and commits; and edge values a store or a subprocess cannot take (integers
    past int64, NUL in strings and refs), which random generation reaches only now and then. (Schemathesis never
    puts a NUL into a path parameter, so refs in paths get it only from other tests.)"""
    dictionaries = {
        "machines": ["runner-1"],
        "refs": [base, head, "main", "HEAD", "main\x00"],
        "tasks": ["g1_motion", "g1_walk"],
        "impls": ["assembled", "handwritten"],
        "placements": [placement],
        "integers": [1, 2, 4096, 32768, 2**63 - 1, 2**63, -(2**63) - 1],
        "strings": ["\x00", "a\x00b"],
    }
    parameters = {
        "path.machine": "machines",
        "query.machine": "machines",
        "path.base": "refs",
        "path.head": "refs",
        "query.base": "refs",
        "query.commit": "refs",
        "body.base": "refs",
        "body.head": "refs",
        "query.task": "tasks",
        "query.impl": "impls",
        "query.placement": "placements",
    }
    lines = ["[cache]", "enabled = false", ""]
    for name, values in dictionaries.items():
        lines += [f"[dictionaries.{name}]", f"values = {_toml(values)}", ""]
    lines += [
        "[generation.dictionaries]",  # every other integer and string parameter
        'integer = { dictionary = "integers", probability = 0.3 }',
        'string = { dictionary = "strings", probability = 0.05 }',
        "",
        "[parameters]",
    ]
    lines += [f'"{key}" = {{ dictionary = "{name}", probability = 0.5 }}' for key, name in parameters.items()]
    return "\n".join(lines) + "\n" + OPERATIONS


def command(url: str, *, config, junit) -> list[str]:
    return [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(config),
        "--no-color",
        "run",
        f"{url}/openapi.json",
        "--header",
        f"Authorization: Bearer {TOKEN}",
        "--phases",
        PHASES,
        "--checks",
        CHECKS,
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        str(SEED),
        "--generation-deterministic",  # derandomized; implies no example database
        "--continue-on-failure",  # every failure of an operation, not only its first
        "--workers",
        "1",
        "--request-timeout",
        "30",
        "--output-sanitize",
        "false",  # a throwaway token: keep the curl reproducers runnable
        "--report",
        "junit",
        "--report-junit-path",
        str(junit),
    ]


def _failures(junit) -> list[str]:
    """One line per failure in the JUnit report: operation, checks, status and body, the reproducing curl(s)."""
    lines = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        for element in [*case.iter("failure"), *case.iter("error")]:
            for text in re.split(r"^\d+\. Test Case ID: \S+$", element.text or "", flags=re.M):
                if not text.strip():
                    continue
                checks = "; ".join(re.findall(r"^- (ST\d+ [^\n]*)$", text, flags=re.M)) or element.get(
                    "message"
                )
                status = re.search(r"^\[(\d+)\] [^\n]*:\n\n\s*`?([^\n]*?)`?$", text, flags=re.M)
                curls = re.findall(r"^\s*(curl [^\n]*)$", text, flags=re.M)
                lines.append(
                    f"{case.get('name')} | {checks} | "
                    + (f"{status[1]} {status[2][:200]}" if status else "no response")
                    + f" | {' ; '.join(curls) if curls else text.strip()[:300]}"
                )
    return lines


def _server_errors(records) -> list[str]:
    """The service's own account of its unhandled errors: each distinct exception per resource once, counted."""
    seen: dict[str, int] = {}
    for record in records:
        if record.levelno >= logging.ERROR and record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            where = re.sub(r"(/api/(?:dashboard/)?[^/\s]+)/\S+", r"\1/...", record.getMessage())[:120]
            key = f"{where}: {type(exc).__name__}: {str(exc)[:200]}"
            seen[key] = seen.get(key, 0) + 1
    return [f"{key} (x{count})" for key, count in seen.items()]


@pytest.mark.slow
def test_schemathesis_finds_nothing_on_any_operation(tmp_path, caplog):
    caplog.set_level(logging.ERROR)
    url = f"sqlite:///{tmp_path / 'gate.db'}"
    db.upgrade(url)
    with db.transaction(url) as session:
        queries.create_token(session, name="operator", secret=TOKEN, role="admin")  # every operation's reach
    repo, base, head = gitrepo.base_and_head(tmp_path / "repo", policy='compare = ["assembled"]\n')
    with serving(create_app(database_url=url, repo=repo)) as base_url:
        with httpx.Client(base_url=base_url, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
            assert c.post("/api/runs", json=bundle_of(tmp_path / "a", base)).status_code == 201
            [run] = c.get("/api/runs").json()
        config, junit = tmp_path / "schemathesis.toml", tmp_path / "junit.xml"
        config.write_text(_config(base=base, head=head, placement=run["placement"]))
        try:
            done = subprocess.run(
                command(base_url, config=config, junit=junit),
                cwd=tmp_path,  # schemathesis' and Hypothesis' working files stay out of the checkout
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired as exc:
            so_far = (
                exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
            )
            pytest.fail(f"schemathesis ran past {TIMEOUT_S} s; its output so far:\n{so_far}")
    output = done.stdout + done.stderr
    (tmp_path / "schemathesis.txt").write_text(output)
    failures = _failures(junit) if junit.exists() else []
    listed = "\n".join(f"  {i}. {line}" for i, line in enumerate(failures, 1))
    crashes = "\n".join(f"  - {line}" for line in _server_errors(caplog.records)) or "  (none logged)"
    details = output[output.find("=== FAILURES ===") - 30 :] if "=== FAILURES ===" in output else output
    assert done.returncode == 0 and not failures, (
        f"schemathesis exited {done.returncode} with {len(failures)} failure(s):\n{listed}\n\n"
        f"unhandled errors the service logged:\n{crashes}\n\n{details}"
    )
