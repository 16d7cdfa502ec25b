"""The dashboard's PR page and the verdict API with a regression accepted on record: the accepted rows apart from
the ones that keep a verdict from approving, with who accepted them, why and from which comment."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi.testclient import TestClient

from gate import acceptance
from gate.api.app import create_app
from gate.services import verdicts
from gate.store import acceptances, db
from tests.gate import gitrepo
from tests.gate.builders import ingest, measure_results

CELL = ("assembled", "g1_walk", 4096, 2)
URL = "https://github.test/acme/robots/pull/7#issuecomment-1"


def test_the_pr_page_shows_the_accepted_rows_who_and_why(store_url, tmp_path):
    path, base, head = gitrepo.base_and_head(tmp_path / "repo", policy='compare = ["assembled"]\n')
    ingest(store_url, measure_results(tmp_path / "a", base))
    slow = lambda c: 1.4 if (c["impl"], c["task"], c["num_envs"], c["threads"]) == CELL else 1.0  # noqa: E731
    ingest(store_url, measure_results(tmp_path / "b", head, paired_effect=slow))
    before = verdicts.evaluate(store_url, repo=path, base_sha=base, head_sha=head)
    comment = acceptance.Comment(
        id=1,
        login="alice",
        body="/fusegate accept g1_walk assembled -- <a new reward term> costs time",
        url=URL,
        at=datetime(2026, 12, 6, tzinfo=UTC),
        head_sha=head,
    )
    [answer] = acceptance.handle(
        comment,
        repo="acme/robots",
        number=7,
        head_sha=head,
        rows=before.comparisons,
        permission=lambda u: "write",
    )
    with db.transaction(store_url) as session:
        acceptances.record(session, acceptances=answer.acceptances)
    with TestClient(create_app(database_url=store_url, repo=path)) as client:
        stale = client.get(f"/api/verdicts/{base}/{head}").json()
        assert stale["verdict"] == "reject" and stale["stale"] is True  # the acceptance came after it
        after = verdicts.current(store_url, repo=path, base_sha=base, head_sha=head)
        assert after.verdict == "approve" and after.id != before.id
        page = client.get(f"/pr/{base}/{head}").text
        api = client.get(f"/api/evaluations/{after.id}").json()
    assert 'id="problems"' not in page  # nothing keeps it from approving
    listed = page[page.index('id="acceptances"') : page.index("</ul>", page.index('id="acceptances"'))]
    assert listed.count("<li ") == 3 and "@alice" in listed and f'<a href="{URL}">comment</a>' in listed
    assert "&lt;a new reward term&gt; costs time" in listed and "<a new reward" not in page  # escaped
    table = page[page.index('id="accepted-table"') :]
    assert table.count('<tr data-decision="accepted">') == 3
    assert 'data-decision="accepted"' in page[page.index('id="findings"') : page.index('id="acceptances"')]
    assert [a["accepted"] for a in api["acceptances"]] == [1, 1, 1] and api["acceptances"][0][
        "login"
    ] == "alice"
