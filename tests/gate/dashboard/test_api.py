"""The dashboard's JSON endpoints on SQLite and PostgreSQL: the numbers the pages and charts show."""

from __future__ import annotations

import datetime
import html
from urllib.parse import quote

import httpx
import pytest

from gate.api.app import create_app
from gate.api.background import serving
from tests.gate import gitrepo
from tests.gate.builders import ingest, measure_results
from tests.gate.dashboard import history

pytestmark = pytest.mark.slow

CELL = {"metric": "paired", "task": "g1_walk", "impl": "assembled", "num_envs": 4096, "threads": 2}


@pytest.fixture
def site(store_url, tmp_path):
    filled = history.fill(store_url, tmp_path)
    with (
        serving(create_app(database_url=store_url, repo=filled["repo"])) as base,
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        yield client, filled["shas"]


def test_dashboard_endpoints_and_their_404s(site):
    client, shas = site
    machines = client.get("/api/dashboard/machines").json()
    assert [m["name"] for m in machines] == ["runner-1", "runner-2"]
    assert all(m["last_commit"] == shas[-1] and m["placements"] for m in machines)
    newest = history.START + datetime.timedelta(
        hours=history.COMMITS - 1
    )  # shown in UTC, whatever the store's zone
    assert {datetime.datetime.fromisoformat(m["last_run"].replace("Z", "+00:00")) for m in machines} == {
        newest
    }
    assert all(m["last_run"].endswith(("Z", "+00:00")) for m in machines)

    matrix = client.get("/api/dashboard/matrix/runner-1").json()
    assert matrix["commit"] == shas[-1] and matrix["evaluation_id"] is not None
    assert len(matrix["cells"]) == 8  # 2 tasks x 2 scales x 2 thread counts
    [failed] = [c for c in matrix["cells"] if c["decision"] == "fail"]
    assert {k: failed[k] for k in ("task", "num_envs", "threads")} == {
        "task": "g1_walk",
        "num_envs": 4096,
        "threads": 2,
    }
    verdict = client.get(f"/api/verdicts/{shas[-2]}/{shas[-1]}").json()
    same = next(
        c
        for c in verdict["comparisons"]
        if c["kind"] == "impl_vs_baseline"
        and c["task"] == "g1_walk"
        and c["num_envs"] == 4096
        and c["threads"] == 2
        and c["machine"] == "runner-1"
    )
    assert (failed["ratio"], failed["low"], failed["high"]) == (same["ratio"], same["low"], same["high"])

    h = client.get("/api/dashboard/history/runner-1", params=CELL).json()
    assert [p["commit"] for p in h["points"]] == shas and h["total"] == len(shas)
    [step] = h["change_points"]
    assert step["commit"] == shas[history.STEP_AT] and step["index"] == history.STEP_AT
    assert 0.25 < step["change"] < 0.35
    flat = client.get("/api/dashboard/history/runner-2", params=CELL).json()
    assert flat["change_points"] == []
    newest = client.get("/api/dashboard/history/runner-1", params=CELL | {"limit": 3}).json()
    assert [p["commit"] for p in newest["points"]] == shas[-3:]

    compare = client.get("/api/dashboard/compare", params=CELL).json()
    by = {r["machine"]: r["point"]["value"] for r in compare["machines"]}
    assert by["runner-1"] > 1.2 > 1.05 > by["runner-2"]
    _unknown_things_are_404_with_what(client)  # one filled store per backend: the checks share it
    _the_endpoints_are_in_openapi(client)


def test_histories_follow_main_and_names_are_links(site, store_url, tmp_path):
    """A PR commit (not on main) measured on runner-1 stays out of the history, and a machine whose name needs
    URL encoding gets working links."""
    client, shas = site
    repo = tmp_path / "repo"
    gitrepo.git(repo, "checkout", "-q", "-b", "pr")
    pr = gitrepo.commit(repo, message="a PR commit")
    gitrepo.git(repo, "checkout", "-q", "main")
    ingest(
        store_url,
        measure_results(
            tmp_path / "pr",
            pr,
            paired_effect=lambda c: 2.0,
            seed=99,
            date=history.START + datetime.timedelta(days=30),
        ),
    )
    h = client.get("/api/dashboard/history/runner-1", params=CELL).json()
    assert [p["commit"] for p in h["points"]] == shas and h["along"].startswith("main, first parents")
    name = "lab.a_b-1"  # every character of the machine-name alphabet that is not a letter or digit
    ingest(store_url, measure_results(tmp_path / "odd", shas[-1], machine=name, seed=7))
    page = client.get("/machines").text
    link = f"/machines/{quote(name, safe='')}"
    assert f'href="{link}"' in page
    matrix = client.get(link)
    assert matrix.status_code == 200 and f"/history/{name}?" in matrix.text


NOT_FOUND = [
    ("/api/dashboard/matrix/nope", {}, "no machine named 'nope'"),
    ("/api/dashboard/history/runner-1", CELL | {"task": "g1_run"}, "no paired results for g1_run"),
    ("/api/dashboard/compare", CELL | {"num_envs": 7}, "no machine measured paired"),
]


def _unknown_things_are_404_with_what(client):
    for path, params, says in NOT_FOUND:
        r = client.get(path, params=params)
        assert r.status_code == 404 and says in r.json()["detail"], (path, params, r.text)
    for bad in ({"limit": 1}, {"metric": "speed"}):  # invalid parameters: the API's problem naming the field
        r = client.get("/api/dashboard/history/runner-1", params=CELL | bad)
        assert r.status_code == 422 and f"query.{next(iter(bad))}:" in r.json()["detail"], r.text


def _the_endpoints_are_in_openapi(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {
        "/api/dashboard/machines",
        "/api/dashboard/matrix/{machine}",
        "/api/dashboard/history/{machine}",
        "/api/dashboard/compare",
        "/api/verdicts/{base}/{head}",
    } <= set(paths)
    assert "/machines" not in paths  # pages are not API


def test_the_pr_page_leads_with_the_verdicts_summary(site):
    client, shas = site
    verdict = client.get(f"/api/verdicts/{shas[-2]}/{shas[-1]}").json()
    page = client.get(f"/pr/{shas[-2]}/{shas[-1]}").text
    lead = page.index('id="headline"')
    assert html.escape(verdict["headline"], quote=False) in page[lead : lead + 2000]
    assert lead < page.index('id="policy"') < page.index('class="verdict-table"')  # before any table
    findings = page[page.index('id="findings"') : page.index("</ul>", page.index('id="findings"'))]
    assert 'data-decision="fail"' in findings and '<a href="/history/runner-' in findings  # its cell
    assert '<td class="num"><a href="/history/runner-' in page  # the table's ratios link the same cells
