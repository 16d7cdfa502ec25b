"""The thread curve of a machine (endpoint and page): throughput per implementation and thread count, and each
implementation's fastest count, from the stored timings."""

from __future__ import annotations

import random

import pytest
from fastapi.testclient import TestClient

from gate.api.app import create_app
from tests.gate import gitrepo
from tests.gate.builders import ingest, measure_results


@pytest.fixture
def measured(store_url, tmp_path):
    """One commit whose assembled kernel is fastest at 1 thread at 4096 envs and every other at 2."""
    repo = tmp_path / "repo"
    sha = gitrepo.commit(repo, policy='compare = ["assembled"]\n')
    slower = random.uniform(1.5, 3.0)  # fresh every run

    def slow(cell):
        if cell["threads"] == 1:
            return 1.0
        return slower if (cell["impl"], cell["num_envs"]) == ("assembled", 4096) else 0.55

    ingest(store_url, measure_results(tmp_path / "m", sha, slow=slow, seed=random.randrange(1000)))
    app = create_app(database_url=store_url, repo=repo)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, sha, slower


def test_the_curve_has_a_line_per_implementation_and_its_fastest_count(measured):
    client, sha, slower = measured
    r = client.get("/api/dashboard/threads/runner-1", params={"task": "g1_walk", "num_envs": 4096})
    assert r.status_code == 200, r.text
    c = r.json()
    assert c["commit"] == sha and c["placement"]
    lines = {line["impl"]: line for line in c["lines"]}
    assert set(lines) == {"numpy", "handwritten", "assembled", "assembled_generic"}
    assert lines["assembled"]["best_threads"] == 1 and lines["handwritten"]["best_threads"] == 2
    assert [p["threads"] for p in lines["numpy"]["points"]] == [1]  # the reference is timed at 1 thread only
    one, two = lines["assembled"]["points"]
    assert two["seconds"] / one["seconds"] == pytest.approx(slower, rel=0.05)
    for p in (one, two):
        assert p["low"] <= p["seconds"] <= p["high"]
        assert p["throughput"] == pytest.approx(4096 / p["seconds"])


def test_the_page_draws_it_and_the_matrix_links_to_it(measured):
    client, _, _ = measured
    page = client.get("/threads/runner-1", params={"task": "g1_walk", "num_envs": 4096})
    assert page.status_code == 200
    assert 'data-chart="threads"' in page.text and 'data-impl="assembled" data-best-threads="1"' in page.text
    assert 'href="/api/dashboard/threads/runner-1?task=g1_walk&amp;num_envs=4096"' in page.text
    matrix = client.get("/machines/runner-1")
    assert "/threads/runner-1?task=g1_walk&amp;num_envs=4096" in matrix.text


@pytest.mark.parametrize(
    ("params", "status", "says"),
    [
        ({"task": "g1_run", "num_envs": 4096}, 404, "no g1_run timings at 4096 envs"),
        ({"task": "g1_walk", "num_envs": 4096, "placement": "elsewhere"}, 404, "not 'elsewhere'"),
        ({"task": "g1_walk", "num_envs": 0}, 422, "num_envs"),
    ],
)
def test_what_it_does_not_have_is_a_404_saying_what(measured, params, status, says):
    client, _, _ = measured
    r = client.get("/api/dashboard/threads/runner-1", params=params)
    assert r.status_code == status and says in r.text, r.text
    assert client.get("/api/dashboard/threads/nope", params=params | {"num_envs": 4096}).status_code == 404


def test_a_machine_measured_at_two_placements_is_compared_side_by_side(store_url, tmp_path):
    """``xeon__node0`` and ``xeon__interleaved``, one host's two placements: the curve of either shows each
    implementation's fastest count at both, with links between them; a machine of one placement shows none."""
    repo = tmp_path / "repo"
    sha = gitrepo.commit(repo, policy='compare = ["assembled"]\n')
    interleaved_slower = random.uniform(1.5, 3.0)
    for name, at_two in (("xeon__node0", 0.5), ("xeon__interleaved", interleaved_slower)):
        slow = lambda cell, at_two=at_two: 1.0 if cell["threads"] == 1 else at_two  # noqa: E731
        ingest(
            store_url,
            measure_results(tmp_path / name, sha, machine=name, slow=slow, seed=random.randrange(99)),
        )
    ingest(store_url, measure_results(tmp_path / "other", sha, machine="ryzen", seed=1))
    app = create_app(database_url=store_url, repo=repo)
    with TestClient(app, raise_server_exceptions=False) as client:
        params = {"task": "g1_walk", "num_envs": 4096}
        c = client.get("/api/dashboard/threads/xeon__node0", params=params).json()
        best = {(b["machine"], b["impl"]): b for b in c["side_by_side"]}
        assert {m for m, _ in best} == {"xeon__node0", "xeon__interleaved"}
        assert best["xeon__node0", "handwritten"]["best_threads"] == 2
        assert best["xeon__interleaved", "handwritten"]["best_threads"] == 1
        ratio = (
            best["xeon__node0", "assembled"]["throughput"]
            / best["xeon__interleaved", "assembled"]["throughput"]
        )
        assert ratio == pytest.approx(2.0, rel=0.1)  # node0 at 2 threads vs interleaved at 1
        page = client.get("/threads/xeon__interleaved", params=params).text
        assert 'id="placements"' in page and 'data-machine="xeon__node0"' in page
        assert 'href="/threads/xeon__node0?task=g1_walk' in page
        assert client.get("/api/dashboard/threads/ryzen", params=params).json()["side_by_side"] == []
        assert 'id="placements"' not in client.get("/threads/ryzen", params=params).text
