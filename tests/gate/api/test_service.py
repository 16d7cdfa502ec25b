"""The gate service over HTTP: uploads (auth, validation, idempotency, concurrency), evaluations, reads."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from gate.ingest import asv_dir
from gate.store import db, queries
from tests.gate.builders import bundle_of, counts, measure_results


def test_health_and_openapi(client):
    from gate.cli import version

    health = client.get("/api/health").json()
    assert health == {"status": "ok", "store": "writable", "repo": "ok", "version": version(), "detail": ""}
    head = client.head("/api/health")  # uptime probes ask with HEAD
    assert head.status_code == 200 and head.content == b""
    assert client.head("/machines").status_code == 200
    spec = client.get("/openapi.json").json()
    assert spec["info"]["version"] == version()
    assert {"/api/runs", "/api/evaluations", "/api/verdicts/{base}/{head}", "/api/machines"} <= set(
        spec["paths"]
    )
    assert client.get("/docs").status_code == 200


def test_upload_then_evaluate_then_read(client, stack, tmp_path):
    _, _, (_, base, head) = stack
    assert client.post("/api/runs", json=bundle_of(tmp_path / "a", base)).status_code == 201
    r = client.post("/api/runs", json=bundle_of(tmp_path / "b", head))
    assert r.status_code == 201 and r.json()["stored"] == 1
    e = client.post("/api/evaluations", json={"base": base, "head": "HEAD"})
    assert e.status_code == 201, e.text
    body = e.json()
    assert body["verdict"] == "approve" and body["head_sha"] == head and "at base" in body["policy_source"]
    read = client.get(f"/api/verdicts/{base}/{head}").json()
    assert read["id"] == body["id"] and read["comparisons"] == body["comparisons"]
    assert read["stale"] is False
    assert client.get(f"/api/evaluations/{body['id']}").json()["verdict"] == "approve"
    assert [m["name"] for m in client.get("/api/machines").json()] == ["runner-1"]
    assert {r["commit"] for r in client.get("/api/runs").json()} == {base, head}


def test_results_arriving_recompute_stored_verdicts(client, stack, tmp_path):
    """An evaluation that waited for a machine is recomputed when that machine's results arrive."""
    _, _, (_, base, head) = stack
    client.post("/api/runs", json=bundle_of(tmp_path / "a", base))
    assert client.post("/api/evaluations", json={"base": base, "head": head}).json()["verdict"] == "error"
    r = client.post(
        "/api/runs",
        json=bundle_of(
            tmp_path / "b", head, paired_effect=lambda c: 1.4 if c["impl"] == "assembled" else 1.0
        ),
    )
    [recomputed] = r.json()["evaluations"]
    assert recomputed["verdict"] == "reject"
    assert client.get(f"/api/verdicts/{base}/{head}").json()["verdict"] == "reject"


def test_bad_or_missing_token_is_401_and_stores_nothing(service, tmp_path):
    base_url, url, (_, base, _) = service
    bundle = bundle_of(tmp_path, base)
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"}):
        r = httpx.post(f"{base_url}/api/runs", json=bundle, headers=headers, timeout=30)
        assert r.status_code == 401 and "token" in r.json()["detail"]
    assert counts(url) == (0, 0)


def test_malformed_uploads_are_4xx_with_a_message_and_change_nothing(client, stack, tmp_path):
    _, url, (_, base, head) = stack
    client.post("/api/runs", json=bundle_of(tmp_path / "a", base))
    before = counts(url)
    bad = bundle_of(tmp_path / "b", head)
    data = json.loads(bad["results"][0]["text"])
    data["results"]["hot_slice.HotSlice.time_update_state"] = "oops"
    bad["results"][0]["text"] = json.dumps(data)
    r = client.post("/api/runs", json=bad)
    assert r.status_code == 422 and "expected a list of columns" in r.json()["detail"]
    assert bad["results"][0]["path"] in r.json()["detail"]
    r = client.post("/api/runs", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"]
    r = client.post(
        "/api/runs", json={"format": 2, "machine": {}, "benchmarks": {}, "results": [], "sidecar": []}
    )
    assert r.status_code == 422
    assert counts(url) == before


def test_a_duplicate_upload_is_stored_once(client, stack, tmp_path):
    _, url, (_, base, _) = stack
    bundle = bundle_of(tmp_path, base)
    first, second = (client.post("/api/runs", json=bundle).json() for _ in range(2))
    assert (first["stored"], second["stored"], second["unchanged"]) == (1, 0, 1)
    assert counts(url)[0] == 1


@pytest.mark.slow
def test_twenty_concurrent_uploads_all_land_once(service, tmp_path):
    """20 distinct runs (plus a duplicate of each) posted concurrently: 20 runs stored, none lost or doubled."""
    base_url, url, (_, base, _) = service
    bundles = [bundle_of(tmp_path / f"m{i}", base, machine=f"runner-{i:02d}", seed=i) for i in range(20)]
    payloads = [json.dumps(b) for b in bundles] * 2
    headers = {"Authorization": "Bearer fg_test-token", "Content-Type": "application/json"}

    def post(body: str) -> int:
        return httpx.post(f"{base_url}/api/runs", content=body, headers=headers, timeout=120).status_code

    with ThreadPoolExecutor(max_workers=20) as pool:
        codes = list(pool.map(post, payloads))
    assert codes == [201] * 40
    runs, results = counts(url)
    assert runs == 20 and results == 20 * 44


def test_unknown_refs_and_ids_are_clear_4xx(client, service):
    r = client.post("/api/evaluations", json={"base": "no-such-branch", "head": "HEAD"})
    assert r.status_code == 422 and "cannot resolve 'no-such-branch'" in r.json()["detail"]
    assert client.get("/api/evaluations/999").status_code == 404
    _, _, (_, base, head) = service
    r = client.get(f"/api/verdicts/{base}/{head}")
    assert r.status_code == 404 and "POST /api/evaluations" in r.json()["detail"]


def test_a_machine_bound_token_uploads_for_its_machine_only(service, tmp_path):
    base_url, url, (_, base, _) = service
    with db.transaction(url) as session:
        queries.create_token(session, name="bound", secret="fg_bound", machine="runner-7")
    headers = {"Authorization": "Bearer fg_bound"}
    r = httpx.post(f"{base_url}/api/runs", json=bundle_of(tmp_path / "x", base), headers=headers, timeout=60)
    assert r.status_code == 403 and "runner-7" in r.json()["detail"]
    ok = bundle_of(tmp_path / "y", base, machine="runner-7")
    assert httpx.post(f"{base_url}/api/runs", json=ok, headers=headers, timeout=60).status_code == 201
    # and for its placements (a two-node machine measures node 0 and interleaved under their own names)
    placed = bundle_of(tmp_path / "z", base, machine="runner-7__interleaved")
    assert httpx.post(f"{base_url}/api/runs", json=placed, headers=headers, timeout=60).status_code == 201
    for other in ("runner-70", "runner-7-socket1", "runner-8__node0"):
        r = httpx.post(
            f"{base_url}/api/runs",
            json=bundle_of(tmp_path / other, base, machine=other),
            headers=headers,
            timeout=60,
        )
        assert r.status_code == 403 and other in r.json()["detail"]


def test_triggering_an_evaluation_needs_a_token(service):
    base_url, _, (_, base, head) = service
    r = httpx.post(f"{base_url}/api/evaluations", json={"base": base, "head": head}, timeout=30)
    assert r.status_code == 401


def test_a_verdict_older_than_its_results_is_marked_stale(client, stack, tmp_path):
    """Results that arrive without a recomputation (a failed or racing one) must not leave an old verdict current."""
    from gate.ingest import bundle as bundles

    _, url, (_, base, head) = stack
    client.post("/api/runs", json=bundle_of(tmp_path / "a", base))
    client.post("/api/runs", json=bundle_of(tmp_path / "b", head))
    client.post("/api/evaluations", json={"base": base, "head": head})
    assert client.get(f"/api/verdicts/{base}/{head}").json()["stale"] is False
    [b] = asv_dir.read(measure_results(tmp_path / "c", head, seed=7))
    with db.transaction(url) as session:  # stored behind the stack's back: no recomputation
        assert queries.ingest_runs(session, runs=bundles.runs(b)).stored == 1
    assert client.get(f"/api/verdicts/{base}/{head}").json()["stale"] is True


def test_health_says_when_the_repository_is_no_git_clone(store_url, tmp_path):
    """Without a clone the first verdict could not read its policy: the service says so before it is asked."""
    from fastapi.testclient import TestClient

    from gate.api.app import create_app

    with TestClient(create_app(database_url=store_url, repo=tmp_path / "not-a-clone")) as c:
        r = c.get("/api/health")
        assert r.status_code == 503 and r.json()["repo"] == "unavailable" and r.json()["store"] == "writable"
        assert "FUSEGATE_REPO is not a git repository" in r.json()["detail"]
        empty = c.get("/machines").text  # an empty store: the page says how to make results
        assert "No machine has uploaded results yet" in empty and "fusegate run" in empty
        assert "fusegate upload" in empty
