"""Judging what was measured: ingest every side's results and evaluate (base, head), as often as rounds are
added."""

from __future__ import annotations

from pathlib import Path

from gate.runner.sides import Side


class Judge:
    """Ingest every side's results and evaluate (base, head) again, as often as rounds are added. With
    ``fallback``, a base without results yet is judged as the head (the head's kernels only)."""

    def __init__(
        self, url: str, repo: Path, base: str, head: str, sides: list[Side], console, *, fallback: bool
    ):
        self.url, self.repo, self.base, self.head, self.console = url, repo, base, head, console
        self.policy_sha = base  # the policy always comes from the requested base, even without results
        self.sides, self.fallback = sides, fallback
        self.machines: list[str] = []

    def __call__(self, *, quiet: bool = False, extra_impls=()):
        from gate.services import results, verdicts
        from gate.store import db, queries

        self.machines = []
        for side in self.sides:
            if not side.results.is_dir():
                continue
            arrival = results.arrived_from_directory(self.url, repo=self.repo, results=side.results)
            for machine, report in arrival.reports.items():
                if not quiet:
                    self.console.print(
                        f"  {side.name} {machine}: {report.stored} run(s) stored, {report.unchanged} unchanged"
                    )
                self.machines.append(machine)
        with db.transaction(self.url, write=False) as session:
            base_unmeasured = not queries.summaries(session, commit_sha=self.base)
        if self.fallback and self.base != self.head and base_unmeasured:
            if not quiet:
                self.console.print(
                    f"  base {self.base[:12]} has no results yet: judging HEAD's kernels only "
                    f"(fusegate gate --base {self.base[:12]} --measure measures both)"
                )
            self.base = self.head
        return verdicts.evaluate(
            self.url,
            repo=self.repo,
            base_sha=self.base,
            head_sha=self.head,
            policy_sha=self.policy_sha,
            extra_impls=extra_impls,
        )
