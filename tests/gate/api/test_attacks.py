"""The service under attack: every input that once answered 5xx, grew memory or reached past its role, each as
a test of the answer it must give now (a 4xx that says what and what to do), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import socket

import httpx
import pytest
from sqlalchemy import func, select

from gate.api.app import create_app
from gate.api.background import serving
from gate.ingest import asv_dir
from gate.store import db, queries
from gate.store.models import Evaluation, Run
from tests.gate.api.conftest import RUNNER_TOKEN
from tests.gate.builders import bundle_of, collector_results, counts


def _problem(r: httpx.Response, status: int, *words: str) -> str:
    """The response is ``status`` in the API's one problem shape, its detail naming every word."""
    assert r.status_code == status, (r.status_code, r.text[:500])
    body = r.json()
    assert set(body) == {"detail"} and isinstance(body["detail"], str), body
    for word in words:
        assert word in body["detail"], (word, body["detail"])
    return body["detail"]


def _with_text(bundle: dict, edit) -> dict:
    data = json.loads(bundle["results"][0]["text"])
    edit(data)
    bundle["results"][0]["text"] = json.dumps(data)
    return bundle


# --- refs, integers, query strings ------------------------------------------------------------------------


def test_a_nul_or_a_control_character_in_a_ref_is_422(client, service):
    _, _, (repo, _, _) = service
    _problem(client.post("/api/evaluations", json={"base": "a\u0000", "head": "HEAD"}), 422, "not a ref")
    _problem(client.post("/api/evaluations", json={"base": "HEAD", "head": "\u202emain"}), 422, "not a ref")
    _problem(client.get("/api/verdicts/a%00/HEAD"), 422, "control character")
    _problem(client.get("/api/rounds/a%01/HEAD?machine=m1"), 422, "control character")
    assert client.get("/pr/a%00/HEAD").status_code == 422
    detail = _problem(client.post("/api/evaluations", json={"base": "nope", "head": "HEAD"}), 422, "nope")
    assert str(repo) not in detail  # the service's paths are its own


def test_integers_past_the_stores_range_are_422(client):
    _problem(client.get("/api/evaluations/9223372036854775808"), 422, "evaluation_id")
    _problem(client.get("/api/evaluations/-1"), 422, "evaluation_id")
    _problem(client.get("/api/pulls/o/n/99999999999999999999"), 422, "number")
    _problem(client.get("/api/runs?limit=100000000000000000000"), 422, "limit")
    _problem(client.get("/api/evaluations?limit=0"), 422, "limit")
    cell = "task=g1_walk&impl=assembled&num_envs=4096"
    _problem(
        client.get(f"/api/dashboard/history/runner-1?{cell}&threads=9223372036854775808"), 422, "threads"
    )


def test_a_method_not_served_is_405_naming_every_method_the_path_has(client):
    for path, methods in (("/api/evaluations", {"GET", "POST"}), ("/api/runs", {"GET", "POST"})):
        r = client.request("OPTIONS", path)
        assert r.status_code == 405 and set(r.headers["allow"].split(", ")) == methods, (path, r.headers)


def test_a_control_character_in_a_query_is_422_on_every_store(client):
    _problem(client.get("/api/runs?machine=%00"), 422, "control character")
    _problem(client.get("/api/dashboard/matrix/m1?impl=%00"), 422, "control character")
    _problem(client.get("/api/runs?machine=a%2Fb"), 422, "machine")


# --- uploads ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["", " ", "a b", "a\u0000b", "\u202eevil", "x" * 10_000, "a/b", "../../etc/passwd", ".hidden", "-rf"],
)
def test_a_machine_name_outside_the_alphabet_is_refused_and_nothing_stored(client, stack, tmp_path, name):
    _, url, (_, base, _) = stack
    bundle = bundle_of(tmp_path, base)
    bundle["machine"]["machine"] = name
    _with_text(bundle, lambda d: d["params"].update(machine=name))
    _problem(client.post("/api/runs", json=bundle), 422, "machine.json", "not a machine name")
    assert counts(url) == (0, 0)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_in_the_body_are_refused(client, stack, tmp_path, number):
    _, url, (_, base, _) = stack
    text = json.dumps(bundle_of(tmp_path, base)).replace(
        '"machine": {', f'"machine": {{"bogomips": {number}, ', 1
    )
    r = client.post("/api/runs", content=text, headers={"Content-Type": "application/json"})
    _problem(r, 422)
    assert counts(url) == (0, 0)


def test_a_result_nested_100k_deep_is_422_not_a_recursion_error(client, stack, tmp_path):
    _, url, (_, base, _) = stack
    bundle = bundle_of(tmp_path, base)
    bundle["results"][0]["text"] = "[" * 100_000 + "]" * 100_000
    _problem(client.post("/api/runs", json=bundle), 422, "not JSON")
    deep = b'{"format": 1, "machine": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    _problem(client.post("/api/runs", content=deep, headers={"Content-Type": "application/json"}), 422)
    assert counts(url) == (0, 0)


def test_a_100k_character_parameter_and_a_huge_grid_are_refused_before_they_are_built(
    client, stack, tmp_path
):
    _, url, (_, base, _) = stack
    name = "hot_slice.HotSlice.time_update_state"

    def long_param(d):
        d["results"][name][d["result_columns"].index("params")][0] = ["'" + "x" * 100_000 + "'"]

    _problem(client.post("/api/runs", json=_with_text(bundle_of(tmp_path / "a", base), long_param)), 422)

    def grid(d):  # 4 lists x 30 values: 810,000 combinations from ~800 bytes
        d["results"][name][d["result_columns"].index("params")] = [[repr(str(i)) for i in range(30)]] * 4

    _problem(
        client.post("/api/runs", json=_with_text(bundle_of(tmp_path / "b", base), grid)),
        422,
        "810000",
        "combinations",
    )
    assert counts(url) == (0, 0)


def test_the_token_is_checked_before_the_body_is_read(service):
    base_url = service[0]
    r = httpx.post(f"{base_url}/api/runs", content=b"{not json", headers={"Content-Type": "application/json"})
    _problem(r, 401, "bearer token")


def test_a_body_over_the_limit_is_413_declared_or_chunked(client, service):
    base_url = service[0]
    big = b"x" * (33 * 2**20)
    _problem(httpx.post(f"{base_url}/api/runs", content=big, timeout=60), 413, "limit")
    _problem(
        httpx.post(f"{base_url}/api/github/webhook", content=big, timeout=60), 413, "limit"
    )  # before its HMAC

    def chunks():
        for _ in range(40):
            yield b" " * 2**20

    _problem(client.post("/api/runs", content=chunks(), headers={"Content-Type": "application/json"}), 413)
    _problem(client.post("/api/evaluations", content=b" " * 100_000), 413, "FUSEGATE_MAX_BODY_BYTES")
    assert client.get("/api/health").status_code == 200


# --- roles ------------------------------------------------------------------------------------------------


def test_a_runner_token_cannot_replace_the_official_verdict(client, service, tmp_path):
    base_url, url, (_, base, head) = service
    client.post("/api/runs", json=bundle_of(tmp_path / "a", base))
    client.post("/api/runs", json=bundle_of(tmp_path / "b", head))
    official = client.post("/api/evaluations", json={"base": base, "head": head}).json()
    assert official["official"] is True and official["verdict"] == "approve"
    runner = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {RUNNER_TOKEN}"}, timeout=60)
    adhoc = runner.post("/api/evaluations", json={"base": base, "head": head, "impl": ["numpy"]})
    assert adhoc.status_code == 201, adhoc.text
    assert adhoc.json()["official"] is False and adhoc.json()["requested_by"] == "runner-1"
    served = client.get(f"/api/verdicts/{base}/{head}").json()
    assert served["id"] == official["id"]  # the API, the dashboard and the bot read this one
    assert "numpy" not in client.get(f"/pr/{base}/{head}").text.split("Verdict")[0]
    assert client.get(f"/api/evaluations/{adhoc.json()['id']}").json()["official"] is False
    _problem(
        runner.post("/api/evaluations", json={"base": base, "head": head, "impl": ["nosuch"]}), 422, "nosuch"
    )
    # Results arriving re-evaluate the official pair only; the ad-hoc one stays as it was.
    client.post("/api/runs", json=bundle_of(tmp_path / "c", head, machine="runner-2", seed=5))
    with db.transaction(url) as session:
        official_count = session.scalar(
            select(func.count()).select_from(Evaluation).where(Evaluation.official)
        )
        adhoc_count = session.scalar(select(func.count()).select_from(Evaluation).where(~Evaluation.official))
    assert (official_count, adhoc_count) == (2, 1)


def test_a_revoked_tokens_name_can_be_given_again(store_url):
    with db.transaction(store_url) as session:
        queries.create_token(session, name="runner-9", secret="fg_old", machine="runner-9")
    with db.transaction(store_url) as session:
        assert queries.revoke_token(session, name="runner-9")
    with db.transaction(store_url) as session:
        queries.create_token(session, name="runner-9", secret="fg_new", machine="runner-9")
        with pytest.raises(ValueError, match="exists"):
            queries.create_token(session, name="runner-9", secret="fg_third")
    with db.transaction(store_url, write=False) as session:
        assert queries.token_by_secret(session, secret="fg_old") is None
        assert queries.token_by_secret(session, secret="fg_new").name == "runner-9"


# --- the store, start-up, health --------------------------------------------------------------------------


def test_health_says_unavailable_and_writes_are_503_when_the_store_is_read_only(repo, tmp_path):
    repo, base, _ = repo
    path = tmp_path / "gate.db"
    db.upgrade(f"sqlite:///{path}")
    with db.transaction(f"sqlite:///{path}") as session:
        queries.create_token(session, name="r", secret="fg_r", machine="runner-1")
    read_only = f"sqlite:///file:{path}?mode=ro&uri=true"
    with serving(create_app(database_url=read_only, repo=repo)) as ro:
        r = httpx.get(f"{ro}/api/health", timeout=60)
        assert (
            r.status_code == 503 and r.json()["status"] == "unavailable" and "readonly" in r.json()["detail"]
        )
        token = {"Authorization": "Bearer fg_r"}
        up = httpx.post(f"{ro}/api/runs", json=bundle_of(tmp_path, base), headers=token, timeout=60)
        _problem(up, 503, "store is unavailable")
        assert up.headers["retry-after"] == "5"
        assert httpx.get(f"{ro}/api/machines", timeout=60).status_code == 200  # reads still served


@pytest.mark.postgres
def test_health_on_a_read_only_postgres_database(repo, request):
    url = request.getfixturevalue("_postgres_migrated")
    name = db.engine(url).url.database

    def read_only(on: bool) -> None:
        with db.engine(url).connect() as connection:
            connection.exec_driver_sql("SET TRANSACTION READ WRITE")
            connection.exec_driver_sql(
                f'ALTER DATABASE "{name}" SET default_transaction_read_only = {"on" if on else "off"}'
            )
            connection.commit()
        db.engine(url).dispose()  # new connections take the database's setting

    with serving(create_app(database_url=url, repo=repo[0])) as base_url:
        read_only(True)
        try:
            r = httpx.get(f"{base_url}/api/health", timeout=60)
            assert r.status_code == 503 and "read-only" in r.json()["detail"], r.text
        finally:
            read_only(False)
        assert httpx.get(f"{base_url}/api/health", timeout=60).status_code == 200


def test_start_up_errors_name_the_path_and_what_to_do(tmp_path, capsys):
    from gate import cli

    missing_dir = tmp_path / "no" / "such" / "dir" / "gate.db"
    assert cli.main(["serve", "--db", f"sqlite:///{missing_dir}"]) == 78  # a configuration error
    err = capsys.readouterr().err
    assert str(missing_dir) in err and "fusegate db upgrade" in err and "Traceback" not in err
    assert not missing_dir.parent.exists()  # not silently created
    assert cli.main(["serve", "--no-upgrade", "--db", f"sqlite:///{tmp_path / 'gone.db'}"]) == 78
    assert "no store at" in capsys.readouterr().err
    (tmp_path / "a-directory.db").mkdir()
    assert cli.main(["db", "upgrade", "--db", f"sqlite:///{tmp_path / 'a-directory.db'}"]) == 78
    err = capsys.readouterr().err
    assert "a-directory.db" in err and "cannot use the store" in err and "Traceback" not in err


# --- the HTTP surface -------------------------------------------------------------------------------------


def test_times_carry_their_offset(client, stack, tmp_path):
    _, _, (_, base, _) = stack
    client.post("/api/runs", json=bundle_of(tmp_path, base))
    [run] = client.get("/api/runs").json()
    assert run["uploaded_at"].endswith(("+00:00", "Z")) and run["started_at"].endswith(("+00:00", "Z"))
    [machine] = client.get("/api/machines").json()
    assert machine["last_seen"].endswith(("+00:00", "Z"))


def test_the_connection_stays_open_after_a_server_error(service):
    _, url, (repo, _, _) = service
    app = create_app(database_url=url, repo=repo)

    @app.get("/api/boom")
    def boom() -> dict:
        raise RuntimeError("boom")

    with serving(app) as base_url:
        port = int(base_url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(b"GET /api/boom HTTP/1.1\r\nHost: x\r\n\r\n")
            first = _response(s)
            assert first.startswith(b"HTTP/1.1 500") and b"internal error: RuntimeError" in first
            s.sendall(b"GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")  # the same connection
            assert _response(s).startswith(b"HTTP/1.1 200")


def _response(s: socket.socket) -> bytes:
    """One whole HTTP/1.1 response read off a socket (headers and Content-Length bytes of body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536) or b"(closed)"
        assert not data.endswith(b"(closed)"), data
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(
        next(h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
    )
    while len(body) < length:
        body += s.recv(65536)
    return head + b"\r\n\r\n" + body


def test_pages_and_answers_carry_security_headers_and_docs_load_nothing_remote(client):
    for path in ("/machines", "/api/health", "/docs"):
        headers = client.get(path).headers
        assert "script-src 'self'" in headers["content-security-policy"], path
        assert headers["x-content-type-options"] == "nosniff" and headers["x-frame-options"] == "DENY"
    page = client.get("/docs").text
    assert "http://" not in page and "https://" not in page and "<script>" not in page
    for asset in ("/swagger/swagger-ui-bundle.js", "/swagger/swagger-ui.css", "/docs.js"):
        assert client.get(asset).status_code == 200, asset


def test_reading_a_verdict_by_sha_asks_git_once(client, stack, tmp_path, monkeypatch):
    from gate import git

    _, _, (_, base, head) = stack
    client.post("/api/runs", json=bundle_of(tmp_path / "a", base))
    client.post("/api/runs", json=bundle_of(tmp_path / "b", head))
    client.post("/api/evaluations", json={"base": base, "head": head})
    client.get(f"/api/verdicts/{base}/{head}")
    calls = []
    real = git.run
    monkeypatch.setattr(git, "run", lambda *a: calls.append(a) or real(*a))
    for _ in range(3):
        assert client.get(f"/api/verdicts/{base}/{head}").status_code == 200
    assert calls == []


def test_the_store_keeps_what_was_stored_when_bad_input_arrives(client, stack, tmp_path):
    _, url, (_, base, _) = stack
    assert client.post("/api/runs", json=bundle_of(tmp_path / "a", base)).status_code == 201
    for attack in (b"\x00" * 100, b'{"format": 1}', b"[" * 5000):
        client.post("/api/runs", content=attack, headers={"Content-Type": "application/json"})
    with db.transaction(url, write=False) as session:
        assert session.scalar(select(func.count()).select_from(Run)) == 1


@pytest.mark.postgres
def test_a_postgres_database_not_in_utf8_is_refused_with_the_line_that_makes_one(request, capsys):
    from gate import cli

    url = request.getfixturevalue("_postgres_migrated")
    server = db.engine(url).url.set(database="postgres")
    admin = db.engine(server.render_as_string(hide_password=False)).execution_options(
        isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as connection:
        connection.exec_driver_sql("DROP DATABASE IF EXISTS fusegate_ascii")
        connection.exec_driver_sql("CREATE DATABASE fusegate_ascii ENCODING 'SQL_ASCII' TEMPLATE template0")
    ascii_url = db.engine(url).url.set(database="fusegate_ascii").render_as_string(hide_password=False)
    try:
        assert cli.main(["db", "upgrade", "--db", ascii_url]) == 78
        err = capsys.readouterr().err
        assert "SQL_ASCII" in err and "createdb -E UTF8" in err and "Traceback" not in err
    finally:
        db.engine(ascii_url).dispose()
        with admin.connect() as connection:
            connection.exec_driver_sql("DROP DATABASE IF EXISTS fusegate_ascii")


def _unit(b):
    b["benchmarks"]["hot_slice.HotSlice.time_update_state"]["unit"] = {}


def _huge_threads(b):
    for r in b["sidecar"]:
        if "threads" in r:
            r["threads"] = 2**40


def _infinite_ratio(b):
    for r in b["sidecar"]:
        for p in r.get("pairs", []):
            p["base_s"], p["impl_s"] = 5e-324, 1e308


def _nul_baseline(b):
    for r in b["sidecar"]:
        if r.get("kind") == "collector_paired":
            r["baseline"] = "hand\u0000written"


@pytest.mark.parametrize(
    "edit", [_unit, _huge_threads, _infinite_ratio, _nul_baseline], ids=lambda f: f.__name__
)
def test_what_the_store_cannot_hold_is_422_on_every_store(client, stack, tmp_path, edit):
    """Found in review after the first round: each of these was a 500 on SQLite or PostgreSQL."""
    _, url, (_, base, _) = stack
    if edit is _nul_baseline:
        [b] = asv_dir.read(collector_results(tmp_path, base))
        bundle = b.model_dump()
    else:
        bundle = bundle_of(tmp_path, base)
    edit(bundle)
    _problem(client.post("/api/runs", json=bundle), 422)
    assert counts(url) == (0, 0)


def test_a_long_placement_is_stored_with_its_label_cut_to_the_column(client, stack, tmp_path):
    _, _, (_, base, _) = stack
    bundle = bundle_of(tmp_path, base)
    for r in bundle["sidecar"]:
        r["placement"]["granted"]["cpus"] = list(range(500))
    assert client.post("/api/runs", json=bundle).status_code == 201
    [run] = client.get("/api/runs").json()
    assert len(run["placement"]) == 200 and run["placement"].endswith("...")


def test_health_while_writers_hold_sqlites_lock_says_busy_not_unavailable(repo, tmp_path):
    import threading

    url = f"sqlite:///{tmp_path / 'gate.db'}"
    db.upgrade(url)
    holding, done = threading.Event(), threading.Event()

    def writer() -> None:  # a long write, as 20 uploaders make
        with db.transaction(url):
            holding.set()
            done.wait(30)

    with serving(create_app(database_url=url, repo=repo[0])) as base_url:
        thread = threading.Thread(target=writer)
        thread.start()
        holding.wait(10)
        try:
            r = httpx.get(f"{base_url}/api/health", timeout=30)
            assert r.status_code == 200 and r.json()["store"] == "busy", r.text
        finally:
            done.set()
            thread.join(30)
        assert httpx.get(f"{base_url}/api/health", timeout=30).json()["store"] == "writable"
