"""``fusegate upload``: results kept on disk until the service acknowledges them, delivered exactly once."""

from __future__ import annotations

import threading
import time

import pytest
from fastapi.responses import JSONResponse
from sqlalchemy import func, select

from gate import cli
from gate.api.app import create_app
from gate.api.background import free_port, serving
from gate.ingest import asv_dir
from gate.runner import upload as runner
from gate.store import db, queries
from gate.store.models import Result, Run
from tests.gate import gitrepo
from tests.gate.builders import measure_results

TOKEN = "fg_test-token"


@pytest.fixture
def setup(store_url, tmp_path):
    repo = tmp_path / "repo"
    sha = gitrepo.commit(repo, policy="", message="base")
    with db.transaction(store_url) as session:
        queries.create_token(session, name="runner-1", secret=TOKEN)
    return store_url, repo, measure_results(tmp_path / "m", sha)


def _counts(url) -> tuple[int, int]:
    with db.transaction(url, write=False) as session:
        return (
            session.scalar(select(func.count()).select_from(Run)),
            session.scalar(select(func.count()).select_from(Result)),
        )


@pytest.mark.slow
def test_a_service_down_for_the_first_attempts_gets_the_results_exactly_once(setup, tmp_path):
    store, repo, results = setup
    spool = tmp_path / "spool"
    runner.spool(asv_dir.read(results), spool)
    port = free_port()
    outcome = {}

    def upload():
        outcome["sent"] = runner.deliver(
            spool, url=f"http://127.0.0.1:{port}", token=TOKEN, retry_for=60, backoff=0.1, max_backoff=0.3
        )

    thread = threading.Thread(target=upload)
    thread.start()
    time.sleep(1.5)  # several attempts hit a closed port
    assert thread.is_alive() and list(spool.glob("*.json"))
    with serving(create_app(database_url=store, repo=repo), port=port):
        thread.join(60)
    [sent] = outcome["sent"]
    assert sent.outcome == "stored" and not list(spool.glob("*.json"))
    runs, results_ = _counts(store)
    assert runs == 1 and results_ > 0
    # The acknowledgement lost and the bundle sent again: stored once.
    runner.spool(asv_dir.read(results), spool)
    with serving(create_app(database_url=store, repo=repo)) as url:
        [again] = runner.deliver(spool, url=url, token=TOKEN, retry_for=10)
    assert again.outcome == "unchanged" and _counts(store) == (runs, results_)


def test_upload_command_keeps_results_when_the_service_stays_down(setup, tmp_path, monkeypatch, capsys):
    store, repo, results = setup
    spool = tmp_path / "spool"
    monkeypatch.setenv("FUSEGATE_TOKEN", TOKEN)
    port = free_port()
    args = ["upload", "--results", str(results), "--spool", str(spool), "--retry-for", "1"]
    assert cli.main([*args, "--url", f"http://127.0.0.1:{port}"]) == 75
    assert "run `fusegate upload` again" in capsys.readouterr().err
    [kept] = spool.glob("*.json")
    monkeypatch.chdir(tmp_path)  # no .asv/results here: the spool alone is sent
    with serving(create_app(database_url=store, repo=repo), port=port) as url:
        assert cli.main(["upload", "--spool", str(spool), "--url", url]) == 0
    assert not kept.exists() and _counts(store)[0] == 1


def test_a_refused_bundle_is_moved_aside_with_the_reason(setup, tmp_path, monkeypatch):
    store, repo, results = setup
    spool = tmp_path / "spool"
    [b] = asv_dir.read(results)
    b.machine["machine"] = "runner-9"  # the token below is bound to runner-1
    runner.spool([b], spool)
    with db.transaction(store) as session:
        queries.create_token(session, name="bound", secret="fg_bound", machine="runner-1")
    with serving(create_app(database_url=store, repo=repo)) as url:
        with pytest.raises(runner.UploadError, match="refused the token"):
            runner.deliver(spool, url=url, token="fg_bound", retry_for=5)
        assert list(spool.glob("*.json"))  # kept for a fixed token
        bad = b.model_copy(update={"results": [b.results[0].model_copy(update={"text": "{]"})]})
        runner.spool([bad], spool / "other")
        [sent] = runner.deliver(spool / "other", url=url, token=TOKEN, retry_for=5)
    assert sent.outcome == "rejected" and "not JSON" in sent.detail
    assert "not JSON" in next((spool / "other" / "rejected").glob("*.error.txt")).read_text()
    assert _counts(store) == (0, 0)


def test_upload_validates_before_spooling_and_needs_a_token(setup, tmp_path, monkeypatch, capsys):
    _, _, results = setup
    monkeypatch.delenv("FUSEGATE_TOKEN", raising=False)
    assert cli.main(["upload", "--results", str(results), "--url", "http://127.0.0.1:1"]) == 78  # a setting
    assert "FUSEGATE_TOKEN is not set" in capsys.readouterr().err
    monkeypatch.setenv("FUSEGATE_TOKEN", TOKEN)
    [f] = results.glob("*/*-*.json")
    f.write_text("{]")
    spool = tmp_path / "spool"
    code = cli.main(
        ["upload", "--results", str(results), "--spool", str(spool), "--url", "http://127.0.0.1:1"]
    )
    assert code == 64 and "not JSON" in capsys.readouterr().err
    assert not spool.exists()


def test_an_acknowledgement_lost_after_the_results_were_stored_is_sent_again_and_stored_once(setup, tmp_path):
    store, repo, results = setup
    spool = tmp_path / "spool"
    runner.spool(asv_dir.read(results), spool)
    app = create_app(database_url=store, repo=repo)
    answered = []

    @app.middleware("http")
    async def lose_first_answer(request, call_next):
        response = await call_next(request)  # the upload is stored ...
        answered.append(response.status_code)
        if len(answered) == 1:
            return JSONResponse({"detail": "bad gateway"}, status_code=502)  # ... and its 201 never arrives
        return response

    with serving(app) as url:
        [sent] = runner.deliver(spool, url=url, token=TOKEN, retry_for=30, backoff=0.05)
    assert answered == [201, 201] and sent.outcome == "unchanged"
    assert _counts(store)[0] == 1 and not list(spool.glob("*.json"))
