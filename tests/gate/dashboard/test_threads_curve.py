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
