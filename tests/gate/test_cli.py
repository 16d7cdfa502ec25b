"""The fusegate command line: exit codes, JSON shape, errors at the boundary."""

import argparse
import json
import re
import shutil
from pathlib import Path

import pytest

import kernels
from gate import cli
from gate.cli import exits

ROOT = Path(__file__).resolve().parents[2]


def test_parity_json_passes(capsys):
    code = cli.main(
        [
            "kernels",
            "parity",
            "--task",
            "g1_walk",
            "--impl",
            "handwritten",
            "--num-envs",
            "5,300",
            "--seeds",
            "1",
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["ok"] is True
    assert len(report["cases"]) == 2 * 2 * 2  # N x threads x noise levels
    assert {a["name"] for a in report["cases"][0]["arrays"]} >= {"reward", "done", "obs", "privileged_obs"}


@pytest.mark.compile
def test_parity_fails_with_exit_1(capsys, monkeypatch):
    from kernels.tasks.g1_walk import reference as g1_walk

    monkeypatch.setitem(g1_walk.REWARD_TERMS, "orientation", lambda s, p: s.upvector_torso[:, 0] * 0)
    code = cli.main(
        ["kernels", "parity", "--task", "g1_walk", "--num-envs", "50", "--seeds", "0", "--threads", "1"]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "parity FAILED" in out


@pytest.mark.slow
def test_bench_json_has_every_cell_and_the_copy(capsys):
    code = cli.main(
        [
            "kernels",
            "bench",
            "--task",
            "g1_walk",
            "--num-envs",
            "20",
            "--threads",
            "1,2",
            "--repeats",
            "3",
            "--json",
            "--no-jit",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["machine"]["threading_layer"]
    assert [(c["num_envs"], c["threads"]) for c in data["cells"]] == [
        (20, 1),
        (20, 1),
    ]  # capped: 20 envs, 1 thread
    row_impls = [r["impl"] for r in data["cells"][0]["rows"]]
    assert row_impls == [*kernels.registry.available("g1_walk"), "copy"]
    assert data["jit"] == []
    for row in data["cells"][0]["rows"]:
        assert row["samples"] == 3
        assert row["ms_median"] > 0
        assert row["gb_per_s"] > 0
    by_impl = {r["impl"]: r for r in data["cells"][0]["rows"]}
    assert by_impl["assembled"]["vs_baseline"] > 0  # paired per round against the baseline


def test_bench_table_is_printed(capsys):
    code = cli.main(
        [
            "kernels",
            "bench",
            "--task",
            "g1_walk",
            "--impl",
            "handwritten",
            "--num-envs",
            "64",
            "--threads",
            "1",
            "--repeats",
            "2",
            "--no-jit",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "handwritten" in out and "% copy" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["kernels", "bench", "--task", "g9"], "unknown value(s) g9; choose from"),
        (["kernels", "bench", "--impl", "numpy,turbo"], "unknown value(s) turbo"),
        (["kernels", "bench", "--num-envs", "0"], "expected a positive integer, got 0"),
        (["kernels", "parity", "--threads", "x"], "expected a positive integer, got 'x'"),
        (["kernels", "parity", "--noise-level", "-1"], "noise level must be >= 0"),
    ],
)
def test_bad_arguments_exit_64_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == exits.USAGE
    assert message in capsys.readouterr().err


def test_show_source_prints_the_generated_kernel(capsys, tmp_path):
    assert cli.main(["kernels", "show-source", "--task", "g1_walk"]) == 0
    source = capsys.readouterr().out
    assert "def update_state_kernel(" in source and "@njit(parallel=True, cache=True" in source
    plan = kernels.registry.default_plan("g1_walk").to_dict()
    plan["rewards"] = plan["rewards"][:2]
    path = tmp_path / "plan.json"
    path.write_text(__import__("json").dumps(plan))
    assert cli.main(["kernels", "show-source", "--task", "g1_walk", "--plan", str(path)]) == 0
    assert "f2 =" not in capsys.readouterr().out
    path.write_text('{"format": 1, "task": "g1_walk", "rewards": [{"name": "jump", "weight": 1}]}')
    assert cli.main(["kernels", "show-source", "--task", "g1_walk", "--plan", str(path)]) == exits.USAGE
    assert "unknown reward term 'jump'" in capsys.readouterr().err
    # an implementation that generates no source is named as such, with what to do
    assert cli.main(["kernels", "show-source", "--task", "g1_walk", "--impl", "numpy"]) == exits.USAGE
    assert "numpy generates no source" in capsys.readouterr().err


def test_collect_json_is_one_object_with_the_documented_fields(capsys):
    argv = ["collect", "--task", "g1_walk", "--impl", "handwritten", "--num-envs", "8", "--steps", "3"]
    assert cli.main([*argv, "--warmup", "1", "--threads", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["task"] == "g1_walk" and report["num_envs"] == 8 and report["steps"] == 3
    assert report["env_steps_per_s"] > 0 and set(report["step_ms"]) >= {"median", "p95"}
    phases = {"physics", "getters", "update_state", "reset", "action", "replay", "other"}
    assert set(report["us_per_env_step"]) == phases


@pytest.mark.slow
def test_collect_tables_with_the_physics_baseline_and_the_calls(capsys):
    argv = ["collect", "--task", "g1_motion", "--impl", "numpy,assembled", "--num-envs", "4", "--steps", "3"]
    assert cli.main([*argv, "--warmup", "0", "--physics-baseline", "--calls"]) == 0
    out = capsys.readouterr().out
    assert "End-to-end collector" in out and out.count("g1_motion") >= 4
    assert "collector/batch" in out and "rollout/batch" in out
    assert "Collector calls" in out and out.count("kernel._run │") == 2  # one row per implementation


def test_collect_check_compares_each_rollout_with_the_reference(capsys, monkeypatch):
    argv = ["collect", "--check", "--task", "g1_walk", "--impl", "handwritten,assembled", "--num-envs", "16"]
    argv += ["--steps", "16", "--threads", "1"]
    assert cli.main([*argv, "--json"]) == 0
    checks = json.loads(capsys.readouterr().out)["checks"]
    assert [(c["impl"], c["ok"], c["num_envs"], c["steps"]) for c in checks] == [
        ("handwritten", True, 16, 16),
        ("assembled", True, 16, 16),
    ]
    from kernels.tasks.g1_walk.assembled import AssembledWalk

    real = AssembledWalk._run

    def late(self, snap, out):  # the assembled kernel ends no episode: done is never set
        real(self, snap, out)
        out["done"][:] = 0

    monkeypatch.setattr(AssembledWalk, "_run", late)
    assert cli.main(argv) == 1
    out = capsys.readouterr().out
    assert "End-to-end collector against the NumPy reference" in out and "open loop, step" in out


def test_collect_refuses_a_negative_warmup(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["collect", "--task", "g1_walk", "--num-envs", "4", "--warmup", "-1"])
    assert exit_info.value.code == exits.USAGE
    assert "expected a count (0 or more), got -1" in capsys.readouterr().err


def test_kernels_cost_without_valgrind_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setenv("FUSEGATE_VALGRIND", "/nonexistent/valgrind")
    monkeypatch.setattr("os.geteuid", lambda: 1000)  # no install attempt from a test
    assert (
        cli.main(["kernels", "cost", "--task", "g1_walk", "--impl", "handwritten", "--install"])
        == exits.CONFIG
    )
    assert "apt-get install valgrind" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["measure", "--base", "HEAD", "--head", "HEAD"],
        ["gate", "--base", "HEAD", "--head", "HEAD", "--measure"],
    ],
)
def test_a_bad_benchmark_setting_stops_a_measuring_command_before_anything_runs(argv, monkeypatch, capsys):
    monkeypatch.setenv("FUSEGATE_BENCH_THREADS", "1,x")
    monkeypatch.setattr("gate.runner.sides.side_of", lambda *a, **k: pytest.fail("measured anyway"))
    assert cli.main(argv) == exits.CONFIG
    assert "FUSEGATE_BENCH_THREADS='1,x'" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed (apt-get install valgrind)"
)
def test_kernels_cost_prints_each_cell_and_the_difference_between_processes(capsys):
    argv = [
        "kernels",
        "cost",
        "--task",
        "g1_walk",
        "--impl",
        "numpy,assembled",
        "--num-envs",
        "512",
        "--jobs",
        "2",
    ]
    assert cli.main([*argv, "--processes", "2"]) == 0
    out = capsys.readouterr().out
    assert "x86-64-v3" in out and "differ" in out and out.count("g1_walk") == 2
    assert cli.main([*argv, "--json", "--collector-envs", "16"]) == 0
    [run] = json.loads(capsys.readouterr().out)["runs"]
    assert {c["impl"] for c in run["cells"]} == {"numpy", "assembled"} and run["jobs"] == 2
    calls = {"update_state": {"numpy": 1, "assembled": 3}, "collector": {"numpy": 2, "assembled": 2}}
    assert sorted((c["kind"], c["impl"]) for c in run["cells"]) == [
        ("collector", "assembled"),
        ("collector", "numpy"),
        ("update_state", "assembled"),
        ("update_state", "numpy"),
    ]
    assert all(c["instructions"] > 0 and c["calls"] == calls[c["kind"]][c["impl"]] for c in run["cells"])


def _leaves(parser, prefix=()):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _leaves(sub, (*prefix, name))
            return
    yield prefix


@pytest.mark.parametrize("command", list(_leaves(cli.build_parser())), ids=" ".join)
def test_every_command_exits_64_on_a_bad_option_and_prints_its_own_usage(command, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([*command, "--no-such-option"])
    assert exc.value.code == exits.USAGE not in (0, 1, 2, 3)
    err = capsys.readouterr().err
    assert (
        f"usage: fusegate {' '.join(command)}" in err
    )  # its own usage (a missing required argument may come first)
    assert "--no-such-option" in err or "are required" in err


def test_version_and_the_exit_codes_in_the_help(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("fusegate 0.")
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "0 approve, 1 reject, 2 inconclusive, 3 error, 64 usage, 75 upload" in text
    # the help, docs/cli.md's table and the README name the same codes, each one the commands return
    helped = {int(c) for c in re.findall(r"(?:codes:|,) (\d+) ", text)}
    table = {int(c) for c in re.findall(r"^\| (\d+) \|", (ROOT / "docs" / "cli.md").read_text(), re.M)}
    readme = (ROOT / "README.md").read_text()
    sentence = readme[readme.index("The exit code is the verdict") :].split("\n\n")[0]
    said = {int(c) for c in re.findall(r"\b(\d+) (?:approve|reject|inconclusive|error|is|an|a)\b", sentence)}
    assert helped == table == said == set(exits.CODES), (helped, table, said)


def _subcommands(parser: argparse.ArgumentParser) -> dict:
    return next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})


def _unknown_in(text: str) -> list[tuple[str, str]]:
    """(command, option) pairs of the ``fusegate ...`` lines of a doc's sh blocks that the parser does not have."""
    unknown = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = line.split("  #")[0].strip()
            if not line.startswith("fusegate "):
                continue
            words, parser, path = line.split()[1:], cli.build_parser(), []
            while words and words[0] in (subs := _subcommands(parser)):
                path.append(words[0])
                parser = subs[words.pop(0)]
            known = {o for a in parser._actions for o in a.option_strings}
            options = re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", line)
            unknown += [(" ".join(path) or line, o) for o in options if not path or o not in known]
            if not path:
                unknown.append((line, "no such command"))
    return unknown


def test_every_command_and_option_the_docs_name_exists():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert {doc.name: u for doc in docs if (u := _unknown_in(doc.read_text()))} == {}
    assert _unknown_in("```sh\nfusegate gate --no-such-option\nfusegate nothing\n```\n") == [
        ("gate", "--no-such-option"),
        ("fusegate nothing", "no such command"),
    ]
