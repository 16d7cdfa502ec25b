"""The deployment templates name only commands, options and settings that exist."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml
from asv.commands import make_argparser

from gate.cli import build_parser
from gate.meter.placement import ENV_KEYS
from gate.settings import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
WORKFLOW = DEPLOY / "github" / "fusegate-benchmarks.yml"


def _commands(tool: str) -> list[list[str]]:
    """Every ``.venv/bin/<tool> ...`` invocation in the workflow's run steps, as argv (shell fallbacks cut)."""
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["bench"]["steps"]
    found = []
    for step in steps:
        for line in step.get("run", "").splitlines():
            if f".venv/bin/{tool} " in line:
                command = line.split(f".venv/bin/{tool} ", 1)[1].split("||")[0]
                found.append(shlex.split(command))
    return found


def test_the_workflow_runs_on_pull_request_pushes_one_job_per_machine_label():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on["pull_request"]["types"] == ["opened", "synchronize", "reopened"]
    assert on["push"]["branches"] == [
        "main"
    ]  # each commit of main measured once, reused by its pull requests
    job = workflow["jobs"]["bench"]
    assert job["runs-on"] == ["self-hosted", "fusegate-${{ matrix.machine }}"]
    assert job["concurrency"]["group"].endswith(
        "${{ github.event.pull_request.number || github.sha }}-${{ matrix.machine }}"
    )
    # no forks: their code never runs on a machine with an upload token
    assert job["if"] == (
        "github.event_name == 'push' || github.event.pull_request.head.repo.full_name == github.repository"
    )
    assert job["env"]["BASE"] == "${{ github.event.pull_request.base.sha || github.sha }}"
    assert (
        job["env"]["HEAD"] == "${{ github.event.pull_request.head.sha || github.sha }}"
    )  # a push: one commit
    rounds = next(s for s in job["steps"] if s.get("name", "").startswith("More rounds"))
    assert rounds["if"] == "github.event_name == 'pull_request'"


@pytest.mark.parametrize("tool", ["fusegate", "asv"])
def test_every_command_in_the_workflow_parses(tool):
    commands = _commands(tool)
    assert commands, f"the workflow runs no {tool} command"
    parser = build_parser() if tool == "fusegate" else make_argparser()[0]
    for argv in commands:
        parser.parse_args(argv)  # an unknown command or option exits (SystemExit fails the test)
    if tool == "fusegate":
        assert {argv[0] for argv in commands} == {"measure", "upload"}


def test_the_workflow_measures_with_the_bases_fusegate():
    """The job checks out the base (its meter and policy measure both commits) and measures with fusegate
    measure: never asv on the head's own tree, never the head's own suites."""
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["bench"]["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.base.sha || github.sha }}"
    measures = [argv for argv in _commands("fusegate") if argv[0] == "measure"]
    assert measures[0] == ["measure", "--base", "$BASE", "--head", "$HEAD"]
    assert measures[1][-1] == "--open-cells"
    assert not [argv for argv in _commands("asv") if argv[0] in ("run", "continuous")]


def _keys(path: Path) -> set[str]:
    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    return {line.split("=", 1)[0] for line in lines if line}


def test_env_examples_name_real_settings():
    fields = {f"FUSEGATE_{name.upper()}" for name in Settings.model_fields}
    assert _keys(DEPLOY / "service.env.example") <= fields
    runner = {"FUSEGATE_URL", "FUSEGATE_TOKEN", *ENV_KEYS.values()}
    assert _keys(DEPLOY / "runner.env.example") <= runner


def test_the_service_example_starts_the_bot(tmp_path):
    settings = Settings(_env_file=DEPLOY / "service.env.example")
    assert settings.bot_enabled()  # the commented-out App settings and blank values are unset, not errors
    assert settings.github_app_id is None and settings.github_token.get_secret_value() == "change-me"


def test_the_readme_deploys_with_the_commands_this_test_runs():
    """The README's deploy block is deploy/stack.sh images and up, as tests/deploy/test_container.py runs them."""
    text = (DEPLOY.parent / "README.md").read_text()
    block = text.split("## Deploy", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    steps = [part.strip() for line in block.splitlines() for part in line.split("&&") if part.strip()]
    assert steps == [
        "export POSTGRES_PASSWORD=change-me FUSEGATE_REPO_DIR=/srv/fusegate/repo",
        "cp deploy/service.env.example deploy/service.env",
        "deploy/stack.sh images",
        "deploy/stack.sh up",
    ]
