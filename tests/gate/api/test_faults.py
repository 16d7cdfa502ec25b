"""Faults during uploads: the service killed (SIGKILL) and restarted, PostgreSQL restarted under the service.

Several runners spool distinct bundles and deliver them (``gate.runner.upload``) to a ``fusegate serve`` process
while the fault happens. Whatever the runners saw meanwhile (refused connections, 5xx), every ``deliver`` must
return, every spool must end empty, and the store must hold each bundle's run exactly once and whole: none lost,
none doubled, no run without its results.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import ClassVar

import httpx
import pytest
from sqlalchemy import func, select

from gate.api.background import free_port
from gate.ingest import asv_dir
from gate.ingest import bundle as bundles
from gate.runner import upload as runner
from gate.store import db, queries
from gate.store.models import CellSummary, Commit, Machine, Result, Run
from tests.gate import gitrepo
from tests.gate.builders import measure_results

FUSEGATE = Path(sys.executable).with_name("fusegate")
TOKEN = "fg_fault-token"
UPLOADERS = 6
BUNDLES_EACH = 4
FAULT_AFTER = 4  # runs stored before the fault: the rest is sent while and after it happens
RETRY_FOR = 40.0  # each deliver's patience; the faults last a few seconds


# --- the runners' bundles and what the store must hold afterwards -------------------------------------------


def _bundles(root: Path, base: str, head: str) -> list[list]:
    """Per uploader, its distinct bundles: a machine of its own each, on base or head, its own seed."""
    return [
        [
            asv_dir.read(
                measure_results(
                    root / f"u{u}-{i}",
                    base if i % 2 == 0 else head,
                    machine=f"fault-runner-{u}-{i}",
                    seed=1000 + 10 * u + i,
                )
            )[0]
            for i in range(BUNDLES_EACH)
        ]
        for u in range(UPLOADERS)
    ]


def _expected(per_uploader: list[list]) -> Counter:
    """(machine, commit, asv environment) -> result rows, for every run the bundles hold."""
    expected: Counter = Counter()
    for b in (b for bs in per_uploader for b in bs):
        for run in bundles.runs(b):
            key = (run.machine, run.commit, run.env_name)
            assert key not in expected, f"the test's bundles are not distinct: {key}"
            expected[key] = len(run.results)
    return expected


def _runs_stored(url: str) -> int:
    with db.transaction(url, write=False) as session:
        return session.scalar(select(func.count()).select_from(Run))


def _stored(url: str) -> tuple[list, int, list]:
    """([(machine, commit, asv environment, run id, result rows)] per stored run, all result rows, ids of the runs
    without cell summaries)."""
    with db.transaction(url, write=False) as session:
        per_run = session.execute(
            select(Machine.name, Commit.sha, Run.env_name, Run.id, func.count(Result.id))
            .select_from(Run)
            .join(Machine, Machine.id == Run.machine_id)
            .join(Commit, Commit.id == Run.commit_id)
            .outerjoin(Result, Result.run_id == Run.id)
            .group_by(Machine.name, Commit.sha, Run.env_name, Run.id)
        ).all()
        total = session.scalar(select(func.count()).select_from(Result))
        summarized = select(CellSummary.id).where(
            CellSummary.machine_id == Run.machine_id,
            CellSummary.commit_id == Run.commit_id,
            CellSummary.placement_id == Run.placement_id,
        )
        unsummarized = session.scalars(select(Run.id).where(~summarized.exists())).all()
    return [tuple(row) for row in per_run], total, list(unsummarized)


# --- the service as a process of its own ----------------------------------------------------------------------


class _Service:
    """``fusegate serve`` in a subprocess on a fixed port; every start logs to a file of its own."""

    def __init__(self, *, store: str, repo: Path, port: int, logs: Path):
        self.store, self.repo, self.port, self.logs = store, repo, port, logs
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        logs.mkdir(parents=True, exist_ok=True)

    def start(self, timeout: float = 45.0) -> None:
        self.starts += 1
        env = {k: v for k, v in os.environ.items() if not k.startswith("FUSEGATE_")}  # no bot, no other store
        env["FUSEGATE_REPO"] = str(self.repo)
        with open(self.logs / f"serve-{self.starts}.log", "wb") as log:
            self.proc = subprocess.Popen(
                [str(FUSEGATE), "serve", "--db", self.store, "--port", str(self.port)],
                cwd=self.repo,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"fusegate serve exited with {self.proc.returncode}:\n{self.log_text()}")
            try:
                if httpx.get(f"{self.url}/api/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"fusegate serve did not answer within {timeout} s:\n{self.log_text()}")
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no rollback, requests cut mid-way."""
        assert self.proc is not None and self.proc.poll() is None, "the service died before the fault"
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def log_text(self, tail: int = 6000) -> str:
        parts = []
        for n in range(1, self.starts + 1):
            path = self.logs / f"serve-{n}.log"
            text = path.read_text(errors="replace") if path.exists() else ""
            parts.append(f"--- serve start {n} ---\n{text[-tail:]}")
        return "\n".join(parts)

    def tracebacks(self) -> list[str]:
        """The last line of every traceback the service logged (``ExcType: message``)."""
        found = []
        for n in range(1, self.starts + 1):
            path = self.logs / f"serve-{n}.log"
            if not path.exists():
                continue
            for block in path.read_text(errors="replace").split("Traceback (most recent call last):")[1:]:
                lines = [ln for ln in block.splitlines() if ln and not ln.startswith((" ", "\t"))]
                if lines:
                    found.append(lines[0][:300])
        return found


@contextmanager
def _service(*, store: str, repo: Path, logs: Path) -> Iterator[_Service]:
    service = _Service(store=store, repo=repo, port=free_port(), logs=logs)
    try:
        service.start()
        yield service
    finally:
        service.stop()


def _runner_token(store: str) -> None:
    with db.transaction(store) as session:
        queries.create_token(session, name="fault-runner", secret=TOKEN)


# --- the runners ------------------------------------------------------------------------------------------


class _Seen(httpx.Client):
    """``deliver``'s HTTP client, noting every answer (status code) or transport error it got."""

    lock: ClassVar[threading.Lock] = threading.Lock()
    log: ClassVar[list] = []

    def send(self, request, **kwargs):
        try:
            response = super().send(request, **kwargs)
        except httpx.TransportError as exc:
            with self.lock:
                self.log.append(type(exc).__name__)
            raise
        with self.lock:
            self.log.append(response.status_code)
        return response


def _upload_through(
    fault: Callable[[], None], *, service: _Service, per_uploader: list[list], root: Path, monkeypatch
) -> dict:
    """Spool and deliver every uploader's bundles concurrently; run ``fault`` once FAULT_AFTER runs are stored."""
    monkeypatch.setattr(_Seen, "log", [])
    monkeypatch.setattr(runner.httpx, "Client", _Seen)  # deliver's client; the module is httpx itself
    spools = [root / f"spool-{u}" for u in range(len(per_uploader))]
    for spool, bs in zip(spools, per_uploader, strict=True):
        assert len(runner.spool(bs, spool)) == len(bs)
    outcomes: dict[int, list[runner.Sent]] = {}
    errors: dict[int, BaseException] = {}

    def deliver(u: int) -> None:
        try:
            outcomes[u] = runner.deliver(
                spools[u], url=service.url, token=TOKEN, retry_for=RETRY_FOR, backoff=0.1, max_backoff=0.5
            )
        except BaseException as exc:
            errors[u] = exc

    total = sum(len(bs) for bs in per_uploader)
    threads = [threading.Thread(target=deliver, args=(u,), daemon=True) for u in range(len(per_uploader))]
    started = time.monotonic()
    for t in threads:
        t.start()
    while (landed := _runs_stored(service.store)) < FAULT_AFTER:
        assert any(t.is_alive() for t in threads), "every uploader stopped before the fault"
        assert time.monotonic() - started < 30, f"only {landed} runs stored in 30 s:\n{service.log_text()}"
        time.sleep(0.02)
    fault_at = time.monotonic() - started
    fault()
    recovered_at = time.monotonic() - started
    for t in threads:
        t.join(RETRY_FOR + 20)
    hung = [u for u, t in enumerate(threads) if t.is_alive()]
    seen = list(_Seen.log)
    return {
        "spools": spools,
        "outcomes": outcomes,
        "errors": errors,
        "hung": hung,
        "landed_before_fault": landed,
        "total": total,
        "seen": Counter(seen),
        "times": (fault_at, recovered_at, time.monotonic() - started),
    }


def _assert_exactly_once(run: dict, *, service: _Service, expected: Counter, felt: bool) -> None:
    seen, (fault_at, recovered_at, done_at) = run["seen"], run["times"]
    got = Counter(s.outcome for sent in run["outcomes"].values() for s in sent)
    summary = (
        f"uploaders saw {dict(seen)}, got {dict(got)}; "
        f"fault at {fault_at:.1f} s with {run['landed_before_fault']}/{run['total']} "
        f"runs stored, recovered at {recovered_at:.1f} s, done at {done_at:.1f} s; "
        f"service tracebacks: {dict(Counter(service.tracebacks()))}"
    )
    print(summary)  # shown by pytest -rP / -s
    context = f"\n{summary}\n{service.log_text()}"
    # The fault happened while uploads were under way (and, for a dead service, the runners felt it).
    assert run["landed_before_fault"] < run["total"], "every upload landed before the fault" + context
    if felt:
        assert any(not isinstance(k, int) or k >= 500 for k in seen), "no uploader saw the fault" + context
    # Every deliver returned, each of its bundles acknowledged (stored, or unchanged when sent again after an
    # acknowledgement the fault swallowed), and nothing is left in a spool.
    assert not run["hung"], f"deliver still running for uploaders {run['hung']}" + context
    assert not run["errors"], f"deliver raised: {run['errors']}" + context
    for u, spool in enumerate(run["spools"]):
        sent = run["outcomes"][u]
        assert len(sent) == BUNDLES_EACH and {s.outcome for s in sent} <= {"stored", "unchanged"}, (
            f"uploader {u}: {sent}" + context
        )
        left = sorted(p.name for p in spool.rglob("*") if p.is_file())
        assert not left, f"uploader {u}'s spool still holds {left}" + context
    # The store: every bundle's run once, with all of its results; nothing else.
    per_run, total, unsummarized = _stored(service.store)
    doubled = sorted(k for k, n in Counter((m, c, e) for m, c, e, _, _ in per_run).items() if n > 1)
    assert not doubled, f"runs stored twice: {doubled}" + context
    empty = [(m, c[:8], e, run_id) for m, c, e, run_id, n in per_run if n == 0]
    assert not empty, f"partial runs (no results): {empty}" + context
    assert not unsummarized, f"runs without cell summaries: {unsummarized}" + context
    stored = {(m, c, e): n for m, c, e, _, n in per_run}
    missing, extra = sorted(set(expected) - set(stored)), sorted(set(stored) - set(expected))
    assert not missing and not extra, f"runs lost: {missing}; runs not uploaded: {extra}" + context
    wrong = {k: (stored[k], n) for k, n in expected.items() if stored[k] != n}
    assert not wrong, f"runs with (stored, expected) result rows: {wrong}" + context
    assert total == sum(expected.values()), (
        f"{total} result rows, expected {sum(expected.values())}" + context
    )


# --- (a) the service killed and restarted -------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path):
    return gitrepo.base_and_head(tmp_path / "repo", policy='compare = ["assembled"]\n')


def _through_a_fault(
    tmp_path, repo, monkeypatch, *, store: str, fault, felt: bool, context=lambda: ""
) -> None:
    """Migrate ``store``, serve it, upload every bundle while ``fault(service)`` happens, check exactly once."""
    path, base, head = repo
    db.upgrade(store)
    _runner_token(store)
    per_uploader = _bundles(tmp_path / "asv", base, head)
    expected = _expected(per_uploader)
    with _service(store=store, repo=path, logs=tmp_path / "logs") as service:
        run = _upload_through(
            lambda: fault(service),
            service=service,
            per_uploader=per_uploader,
            root=tmp_path,
            monkeypatch=monkeypatch,
        )
        try:
            _assert_exactly_once(run, service=service, expected=expected, felt=felt)
        except AssertionError as exc:
            raise AssertionError(f"{exc}{context()}") from None


@pytest.mark.slow
def test_uploads_survive_the_service_killed_and_restarted(tmp_path, repo, monkeypatch):
    def kill_and_restart(service: _Service) -> None:
        service.kill()
        time.sleep(1.5)  # uploaders meet a closed port
        service.start()

    store = f"sqlite:///{tmp_path / 'gate.db'}"
    _through_a_fault(tmp_path, repo, monkeypatch, store=store, fault=kill_and_restart, felt=True)


# --- (b) PostgreSQL restarted under the service ---------------------------------------------------------------


def _postgres_bin() -> Path | None:
    found = [Path(p) for p in glob.glob("/usr/lib/postgresql/*/bin") if Path(p, "initdb").exists()]
    if not found:
        return None
    return max(found, key=lambda p: [int(n) for n in re.findall(r"\d+", p.parent.name)] or [0])


class _Cluster:
    """A throwaway PostgreSQL cluster on a loopback port (the pattern of .ci/run)."""

    def __init__(self, pgbin: Path):
        self.pgbin = pgbin
        # Not under pytest's tmp_path: as root the server runs as postgres, which cannot enter root's 0700 dirs.
        self.data = Path(tempfile.mkdtemp(prefix="fusegate-pgfault."))
        self.port = free_port()
        self.options = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off"
        if os.geteuid() == 0:
            shutil.chown(self.data, "postgres")

    def _pg(self, tool: str, *args: str, timeout: float = 60) -> None:
        cmd = [str(self.pgbin / tool), *args]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"{tool} {' '.join(args)}: {done.returncode}\n{done.stdout}{done.stderr}"

    def init(self) -> None:
        self._pg("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres")

    def start(self) -> None:
        self._pg(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.data / "server.log"),
            "-w",
            "-o",
            self.options,
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._pg("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def createdb(self, name: str) -> str:
        self._pg("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def log_text(self, tail: int = 4000) -> str:
        path = self.data / "server.log"
        return path.read_text(errors="replace")[-tail:] if path.exists() else ""

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            with suppress(AssertionError, subprocess.TimeoutExpired):
                self.stop("immediate")
        shutil.rmtree(self.data, ignore_errors=True)


@pytest.fixture
def postgres_cluster() -> Iterator[_Cluster]:
    pgbin = _postgres_bin()
    if pgbin is None:
        if os.environ.get("CI"):
            pytest.fail("CI must test PostgreSQL restarts: no /usr/lib/postgresql/*/bin/initdb (see .ci/run)")
        pytest.skip("no PostgreSQL binaries (/usr/lib/postgresql/*/bin/initdb; apt-get install postgresql)")
    cluster = _Cluster(pgbin)
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


@pytest.mark.postgres
def test_uploads_survive_a_postgresql_restart(tmp_path, repo, postgres_cluster, monkeypatch):
    def restart_postgres(_service: _Service) -> None:
        postgres_cluster.stop("fast")  # sessions cut, transactions in flight rolled back
        time.sleep(2)  # the service meets a refused database
        postgres_cluster.start()

    store = postgres_cluster.createdb("fusegate_faults")
    try:
        _through_a_fault(
            tmp_path,
            repo,
            monkeypatch,
            store=store,
            fault=restart_postgres,
            felt=False,
            context=lambda: f"\n--- postgresql log ---\n{postgres_cluster.log_text()}",
        )
    finally:
        db.engine(store).dispose()  # this process's pooled connections to a cluster about to go


# --- a flood: 50 MiB without a token ----------------------------------------------------------------------------


def _rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmRSS:\s+(\d+) kB", status, flags=re.M)[1]) / 1024


@pytest.mark.slow
def test_fifty_mib_without_a_token_is_refused_without_growing_the_service(tmp_path, repo):
    """Declared (Content-Length) and chunked: 413 or 401 without the body being held, RSS grows < 50 MiB, and the
    service answers its health check right after."""
    path, _, _ = repo
    store = f"sqlite:///{tmp_path / 'gate.db'}"
    db.upgrade(store)
    with _service(store=store, repo=path, logs=tmp_path / "logs") as service:
        for _ in range(20):  # warm: imports, the first requests' allocations
            httpx.get(f"{service.url}/api/runs", timeout=30)
        before = _rss_mib(service.proc.pid)
        peak = before
        size = 50 * 2**20

        def chunks():
            nonlocal peak
            for _ in range(50):
                peak = max(peak, _rss_mib(service.proc.pid))
                yield b"[" * 2**20

        headers = {"Content-Type": "application/json"}
        declared = httpx.post(f"{service.url}/api/runs", content=b"[" * size, headers=headers, timeout=60)
        assert declared.status_code == 413 and "FUSEGATE_MAX_UPLOAD_BYTES" in declared.json()["detail"]
        try:
            chunked = httpx.post(f"{service.url}/api/runs", content=chunks(), headers=headers, timeout=60)
        except httpx.TransportError:
            chunked = None  # the service answered and closed while the client was still sending: also refused
        assert chunked is None or chunked.status_code == 401, chunked.text
        peak = max(peak, _rss_mib(service.proc.pid))
        assert httpx.get(f"{service.url}/api/health", timeout=10).status_code == 200
        assert peak - before < 50, f"RSS grew from {before:.0f} to {peak:.0f} MiB"
        print(f"RSS {before:.0f} MiB before, {peak:.0f} MiB at most while 2 x 50 MiB arrived")
