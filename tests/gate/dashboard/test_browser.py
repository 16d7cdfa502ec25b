"""The dashboard in a real browser: Playwright driving the OS's Chromium (Debian's ``chromium``) headless.

Without Chromium the tests are skipped locally and fail under CI (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest

from gate.api.app import create_app
from gate.api.background import serving
from gate.domain.benchmarks import PAIRED
from gate.store import db, queries
from tests.gate.dashboard import history

CHROMIUM = os.environ.get("FUSEGATE_TEST_CHROMIUM") or shutil.which("chromium")
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DOCS = Path(__file__).resolve().parents[3] / "docs"
CELL = "metric=paired&task=g1_walk&impl=assembled&num_envs=4096&threads=2"
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("dashboard")
    url = f"sqlite:///{root / 'store.db'}"
    db.upgrade(url)
    filled = history.fill(url, root)
    with serving(create_app(database_url=url, repo=filled["repo"])) as base:
        yield base, url, filled["shas"]


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM:
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser tests: no chromium on PATH (see .ci/run)")
        pytest.skip("no chromium (apt-get install chromium, or set FUSEGATE_TEST_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.errors = []
    page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    yield page
    context.close()


def _pages(shas):
    return {
        "machines": "/machines",
        "matrix": "/machines/runner-1",
        "history": f"/history/runner-1?{CELL}",
        "pr": f"/pr/{shas[-2]}/{shas[-1]}",
        "compare": f"/compare?{CELL}",
    }


@pytest.mark.parametrize("name", ["machines", "matrix", "history", "pr", "compare"])
def test_every_page_renders_without_console_errors(site, page, name):
    base, _, shas = site
    response = page.goto(base + _pages(shas)[name])
    assert response.status == 200
    if name in ("history", "compare"):
        page.wait_for_selector("#chart[data-ready='1']", timeout=20000)  # plotly drew the endpoint's data
        assert page.locator("#chart .main-svg").count() > 0
    assert page.locator("h1").inner_text()
    assert page.errors == []


def test_the_matrix_has_one_cell_per_stored_cell(site, page):
    base, url, shas = site
    with db.transaction(url, write=False) as session:
        stored = {
            (c.task, c.num_envs, c.threads)
            for _, _, _, c in queries.summaries(session, commit_sha=shas[-1], machines=["runner-1"])
            if c.benchmark == PAIRED and c.impl == "assembled"
        }
    page.goto(f"{base}/machines/runner-1")
    assert page.locator("[data-cell]").count() == len(stored) == 8
    api = httpx.get(f"{base}/api/dashboard/matrix/runner-1").json()
    shown = page.locator("[data-cell]").evaluate_all(
        """cells => cells.map(c => [c.dataset.task, +c.dataset.numEnvs, +c.dataset.threads, c.dataset.decision,
                                    c.querySelector('.ratio').innerText, c.querySelector('.ci').innerText,
                                    c.querySelector('.decision').innerText])"""
    )
    expected = [
        [
            c["task"],
            c["num_envs"],
            c["threads"],
            c["decision"],
            f"{c['ratio']:.3f}",
            f"[{c['low']:.3f}, {c['high']:.3f}]",
        ]
        for c in api["cells"]
    ]
    assert sorted(x[:6] for x in shown) == sorted(expected)  # the API's numbers, cell by cell
    assert all(row[3] in row[6] for row in shown)  # the decision is written, not only coloured


def test_clicking_a_regressed_cell_opens_its_history_with_the_change_point(site, page):
    base, _, shas = site
    page.goto(f"{base}/machines/runner-1")
    [regressed] = page.locator("[data-cell][data-decision='fail'] a").all()
    regressed.click()
    page.wait_for_url("**/history/runner-1?*")
    page.wait_for_selector("#chart[data-ready='1']", timeout=20000)
    marked = page.locator("[data-change-point]")
    assert marked.count() == 1 and marked.get_attribute("data-change-point") == shas[history.STEP_AT]
    assert "+30" in marked.inner_text() or "+29" in marked.inner_text()
    shapes = page.evaluate("document.getElementById('chart').layout.shapes.length")
    assert shapes == 1  # the step is drawn on the chart too
    if os.environ.get("FUSEGATE_SCREENSHOTS"):
        page.screenshot(path=DOCS / "dashboard-history.png", full_page=True)
        page.goto(f"{base}/machines/runner-1")
        page.screenshot(path=DOCS / "dashboard-matrix.png", full_page=True)


def test_the_pr_page_shows_the_verdict_the_api_returns(site, page):
    base, _, shas = site
    api = httpx.get(f"{base}/api/verdicts/{shas[-2]}/{shas[-1]}").json()
    page.goto(f"{base}/pr/{shas[-2]}/{shas[-1]}")
    assert page.locator("#verdict").get_attribute("data-verdict") == api["verdict"] == "reject"
    problems = page.locator("#verdict-table tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.decision)"
    )
    passes = page.locator("#passes tbody tr").evaluate_all("rows => rows.map(r => r.dataset.decision)")
    order = {"fail": 0, "error": 1, "inconclusive": 2}
    # what keeps it from approving first, worst first; the passes folded below it
    assert problems == sorted(
        (c["decision"] for c in api["comparisons"] if c["decision"] != "pass"), key=order.get
    )
    assert problems[0] == "fail" and passes == ["pass"] * (len(api["comparisons"]) - len(problems))
    assert page.locator("#passes").get_attribute("open") is None
    assert api["policy_source"] in page.locator("#policy").inner_text()


def test_a_ref_that_names_no_commit_is_422_on_the_page_as_in_the_api(site, page):
    base, _, _ = site
    response = page.goto(base + "/pr/no-such-branch/HEAD")
    assert response.status == 422 == httpx.get(f"{base}/api/verdicts/no-such-branch/HEAD").status_code
    assert "cannot resolve 'no-such-branch'" in page.content()


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/machines/nope", "no machine named 'nope'"),
        ("/machines/runner-1?commit=" + "0" * 40, "no results for commit"),
        (
            "/history/runner-1?metric=paired&task=g1_run&impl=assembled&num_envs=4096&threads=2",
            "no paired results",
        ),
        ("/pr/" + "a" * 40 + "/" + "b" * 40, "no evaluation of base aaaaaaaaaaaa"),
        ("/machines/runner-1?placement=nowhere", "not 'nowhere'"),
        ("/no/such/page", "Not Found"),
    ],
)
def test_unknown_things_get_a_404_page_that_says_what(site, page, path, says):
    base, _, _ = site
    response = page.goto(base + path)
    assert response.status == 404
    assert says in page.locator("#error-detail").inner_text()
    assert "Traceback" not in page.content()


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/history/runner-1?metric=speed&task=g1_walk&impl=assembled&num_envs=4096&threads=2", "metric"),
        ("/history/runner-1?task=g1_walk", "impl: Field required"),
        ("/history/runner-1?" + CELL + "&limit=1", "limit"),
    ],
)
def test_bad_query_parameters_get_a_400_page_naming_them(site, page, path, says):
    base, _, _ = site
    response = page.goto(base + path)
    assert response.status == 400
    assert says in page.locator("#error-detail").inner_text()
