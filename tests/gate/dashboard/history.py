"""A store with a history along main for the dashboard's tests: two machines, a step on one cell."""

from __future__ import annotations

import datetime

from gate.services.verdicts import evaluate_and_store
from gate.store import db
from tests.gate import gitrepo
from tests.gate.builders import ingest, measure_results

COMMITS = 10
STEP_AT = 6  # commits from this index on make the regressed cell 30% slower
REGRESSED = {"task": "g1_walk", "impl": "assembled", "num_envs": 4096, "threads": 2}
START = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)


def regressed(cell: dict) -> bool:
    return all(cell[k] == v for k, v in REGRESSED.items())


def fill(url: str, root) -> dict:
    """Main commits measured on runner-1 and runner-2 (runner-2 without the step); the newest commit evaluated
    against the one before it. Returns the commits and the repository."""
    repo = root / "repo"
    # the strict headline: the newest commit's verdict shows the step it inherits as a fail
    shas = [gitrepo.commit(repo, policy='compare = ["assembled"]\ninherited_pass = false\n', message="c0")]
    shas += [gitrepo.commit(repo, message=f"c{i}") for i in range(1, COMMITS)]
    for i, sha in enumerate(shas):
        date = START + datetime.timedelta(hours=i)
        for machine in ("runner-1", "runner-2"):
            step = machine == "runner-1" and i >= STEP_AT

            def effect(cell, step=step):
                return 1.3 if step and regressed(cell) else 1.0

            ingest(
                url,
                measure_results(
                    root / f"{machine}-{i}", sha, machine=machine, paired_effect=effect, seed=i, date=date
                ),
            )
    with db.transaction(url) as session:
        evaluate_and_store(session, repo=repo, base_sha=shas[-2], head_sha=shas[-1])
    return {"repo": repo, "shas": shas}
