"""Accepting a regression on record (``gate.acceptance``): the command's truth table, the answers to a comment,
what becomes of a row, and the verdict of stored results with an acceptance."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from gate import acceptance
from gate.acceptance import Command, CommandError, Comment, Spec
from gate.domain.evaluations import Acceptance, ComparisonRecord
from gate.domain.vocabulary import Decision, Kind, Signal
from gate.evaluate import accepted, summary, tally
from gate.evaluate.row import Row
from gate.store import acceptances as stored
from gate.store import db
from tests.gate import gitrepo
from tests.gate.builders import evaluate_pair, ingest, measure_results

HEAD = "c0ffee" + "0" * 34
AT = datetime(2026, 12, 6, 12, tzinfo=UTC)
W = Spec(task="g1_walk", impl="assembled")

PARSED = [  # (the line, its spec, its reason, the head it names)
    ("/fusegate accept g1_walk assembled -- a new reward term", W, "a new reward term", None),
    (
        "/fusegate accept g1_walk assembled N=4096 threads=2 -- why",
        replace(W, num_envs=4096, threads=2),
        "why",
        None,
    ),
    (
        "/fusegate accept runner-1 head_vs_base g1_walk assembled N=4096 2 thr @C0FFEE0 -- why",
        replace(W, machine="runner-1", kind=Kind.HEAD_VS_BASE, num_envs=4096, threads=2),
        "why",
        "c0ffee0",
    ),
    (
        "/fusegate accept g1_walk assembled 2thr vs handwritten -- why",
        replace(W, threads=2, baseline="handwritten"),
        "why",
        None,
    ),
    ("/FUSEGATE Accept task=g1_walk impl=assembled num_envs=64 -- ok", replace(W, num_envs=64), "ok", None),
    (
        "/fusegate accept machine=runner-1 g1_walk assembled --   two   words ",
        replace(W, machine="runner-1"),
        "two words",
        None,
    ),
    (
        "/fusegate accept kind=best_threads `g1_walk assembled` -- x",
        replace(W, kind=Kind.BEST_THREADS),
        "x",
        None,
    ),
    ("/fusegate accept runner-1 g1_walk assembled -- a -- b", replace(W, machine="runner-1"), "a -- b", None),
]

REFUSED = [  # (the line, what its error says)
    ("/fusegate", "says nothing"),
    ("/fusegate reject g1_walk assembled -- x", "unknown command 'reject'"),
    ("/fusegate accept g1_walk assembled", "a reason is required"),
    ("/fusegate accept g1_walk assembled --", "a reason is required"),
    ("/fusegate accept g1_walk assembled --why", "a reason is required"),
    ("/fusegate accept g1_walk -- x", "name the cell"),
    ("/fusegate accept -- x", "name the cell"),
    ("/fusegate accept a b c d -- x", "name the cell"),
    ("/fusegate accept g1_walk assembled N=0 -- x", "N must be a positive whole number"),
    ("/fusegate accept g1_walk assembled N=x -- x", "N must be a positive whole number"),
    ("/fusegate accept g1_walk assembled threads=1 2thr -- x", "threads is named twice"),
    ("/fusegate accept g1_walk assembled @xyz -- x", "is not a head commit"),
    ("/fusegate accept g1_walk assembled @abc -- x", "is not a head commit"),
    ("/fusegate accept g1_walk assembled colour=red -- x", "unknown field 'colour'"),
    ("/fusegate accept kind=fast g1_walk assembled -- x", "unknown kind 'fast'"),
    ("/fusegate accept g1_walk assembled vs -- x", "'vs' needs the baseline"),
    ("/fusegate accept g1/walk assembled -- x", "is not a name"),
    ("/fusegate accept g1_walk assembled -- " + "x" * 501, "at most 500"),
]


@pytest.mark.parametrize(("line", "spec", "reason", "head"), PARSED)
def test_a_command_names_a_cell_a_reason_and_maybe_a_head(line, spec, reason, head):
    [cmd] = acceptance.commands(line)
    assert isinstance(cmd, Command), cmd
    assert (cmd.spec, cmd.reason, cmd.head) == (spec, reason, head)


@pytest.mark.parametrize(("line", "says"), REFUSED)
def test_a_malformed_command_says_what_is_wrong(line, says):
    [error] = acceptance.commands(line)
    assert isinstance(error, CommandError) and says in str(error), error


def test_only_command_lines_outside_code_and_quotes_are_commands():
    body = "\n".join(
        [
            "I think we should",
            "/fusegateaccept g1_walk assembled -- not a command",
            "> /fusegate accept g1_walk assembled -- quoted",
            "```",
            "/fusegate accept g1_walk assembled -- in a code block",
            "```",
            "  /fusegate accept g1_walk handwritten -- indented is fine",
            "`/fusegate accept g1_walk assembled -- inline code`",
        ]
    )
    [cmd] = acceptance.commands(body)
    assert cmd.spec == Spec(task="g1_walk", impl="handwritten")


def test_the_suggested_command_parses_back_to_the_rows_cell():
    r = rec(kind=Kind.IMPL_VS_BASELINE, decision=Decision.FAIL)
    [cmd] = acceptance.commands(acceptance.suggestion(r, HEAD).replace("<why>", "ok"))
    assert cmd.head == HEAD[:12] and cmd.spec.fits(r) and not cmd.spec.fits(replace(r, threads=1))


# --- answers ----------------------------------------------------------------------------------------------------


def rec(**kw) -> ComparisonRecord:
    values = dict(
        machine="runner-1",
        kind=Kind.HEAD_VS_BASE,
        task="g1_walk",
        num_envs=4096,
        threads=2,
        impl="assembled",
        baseline="base",
        detail="cpus=0-1",
        ratio=1.0,
        low=0.99,
        high=1.01,
        margin=0.05,
        p_value=0.5,
        q_value=0.5,
        samples=60,
        groups=5,
        decision=Decision.PASS,
        signal=Signal.TIME,
        cost_ratio=None,
        reason="why",
    )
    return ComparisonRecord(**{**values, **kw})


SLOW = dict(decision=Decision.FAIL, ratio=1.4, low=1.38, high=1.42)
ROWS = [
    rec(kind=Kind.IMPL_VS_BASELINE, baseline="handwritten", **SLOW),
    rec(kind=Kind.PAIRED_HEAD_VS_BASE, baseline="handwritten", **SLOW),
    rec(kind=Kind.PAIRED_HEAD_VS_BASE, baseline="handwritten", detail="cpus=2-3", **{**SLOW, "high": 1.45}),
    rec(threads=1),
    rec(num_envs=32768, **SLOW),
    rec(task="g1_motion", num_envs=64, **SLOW),
    rec(kind=Kind.CORRECTNESS, task="g1_motion", impl="handwritten", decision=Decision.FAIL),
    rec(task="g1_motion", impl="assembled_generic", decision=Decision.INCONCLUSIVE),
]
LEVELS = {
    "alice": "admin",
    "maya": "maintain",
    "wes": "write",
    "tri": "triage",
    "rita": "read",
    "nobody": "none",
}


def answer(body: str, *, login="alice", rows=ROWS, head=HEAD, accepted=()):
    asked = []

    def permission(user):
        asked.append(user)
        return LEVELS[user]

    c = Comment(id=5, login=login, body=body, url="https://github.test/c/5", at=AT, head_sha=head)
    answers = acceptance.handle(
        c, repo="acme/robots", number=7, head_sha=HEAD, rows=rows, permission=permission, accepted=accepted
    )
    return answers, asked


def test_an_accept_records_the_cells_failing_rows_with_their_figures():
    [a], asked = answer("/fusegate accept g1_walk assembled N=4096 threads=2 -- a new reward term")
    assert asked == ["alice"] and a.ok
    assert "accepted on record: `g1_walk assembled N=4096 threads=2`" in a.text and "@alice" in a.text
    by = {x.kind: x for x in a.acceptances}
    assert set(by) == {Kind.IMPL_VS_BASELINE, Kind.PAIRED_HEAD_VS_BASE}  # every kind, placements merged
    paired = by[Kind.PAIRED_HEAD_VS_BASE]
    assert (paired.ratio, paired.high, paired.head_sha, paired.login) == (1.4, 1.45, HEAD, "alice")
    assert (paired.reason, paired.comment_id, paired.accepted_at) == ("a new reward term", 5, AT)


@pytest.mark.parametrize(("login", "ok"), [(u, u in ("alice", "maya", "wes")) for u in LEVELS])
def test_only_write_maintain_or_admin_may_accept(login, ok):
    [a], _ = answer("/fusegate accept g1_walk assembled N=4096 threads=2 -- why", login=login)
    assert a.ok == ok
    if not ok:
        assert f"@{login} has {LEVELS[login]} permission on acme/robots" in a.text


CASES = [  # (the command's cell, what the answer says): none of them accepts anything
    ("g1_walk assembled threads=1", "does not fail (pass)"),
    ("g1_motion assembled_generic", "does not fail (inconclusive)"),
    ("g1_motion handwritten", "correctness row that is fail"),
    ("g1_walk handwritten", "no row is the cell `g1_walk handwritten`; the failing cells are"),
    ("assembled g1_walk", "no row is the cell"),
    ("g1_walk assembled threads=2", "names 2 failing cells"),
    ("g1_walk assembled", "names 2 failing cells"),
]


@pytest.mark.parametrize(("cell", "says"), CASES)
def test_what_cannot_be_accepted_is_answered(cell, says):
    [a], _ = answer(f"/fusegate accept {cell} -- why")
    assert not a.ok and says in a.text, a.text


def test_a_malformed_command_is_answered_without_asking_github():
    answers, asked = answer("/fusegate accept g1_walk -- why\n/fusegate frobnicate")
    assert asked == [] and [a.ok for a in answers] == [False, False]
    assert answers[0].text.startswith("not read: name the cell") and "unknown command" in answers[1].text


def test_a_command_for_another_head_or_before_a_verdict_accepts_nothing():
    [a], asked = answer("/fusegate accept g1_walk assembled N=4096 threads=2 @deadbee -- why")
    assert a.other_head and not a.ok and "names head deadbee" in a.text and asked == []
    [a], _ = answer("/fusegate accept g1_walk assembled N=4096 threads=2 -- why", head=None)
    assert a.other_head and "names no head" in a.text
    [a], _ = answer("/fusegate accept g1_walk assembled N=4096 threads=2 -- why", rows=None)
    assert not a.ok and "has no verdict yet" in a.text


def test_accepting_twice_says_who_accepted_it():
    [first], _ = answer("/fusegate accept g1_walk assembled N=4096 threads=2 -- why")
    [again], _ = answer(
        "/fusegate accept g1_walk assembled N=4096 threads=2 -- me too", accepted=first.acceptances
    )
    assert not again.ok and "already accepted by @alice" in again.text
    # one comment, two commands: the second sees the first
    answers, _ = answer(
        "/fusegate accept g1_motion assembled -- one\n/fusegate accept g1_motion assembled -- two"
    )
    assert [a.ok for a in answers] == [True, False]


def test_from_comments_reads_a_pull_requests_comments_as_the_api_lists_them():
    def c(i, login, body, at, kind="User"):
        return {
            "id": i,
            "body": body,
            "user": {"login": login, "type": kind},
            "html_url": f"u/{i}",
            "created_at": at,
        }

    comments = [
        c(1, "alice", "/fusegate accept g1_motion assembled -- before this head", "2026-12-06T10:00:00Z"),
        c(2, "alice", f"/fusegate accept g1_motion assembled @{HEAD[:7]} -- named", "2026-12-06T10:30:00Z"),
        c(
            3,
            "fusegate[bot]",
            "/fusegate accept g1_walk assembled N=4096 threads=2 -- bot",
            "2026-12-06T12:00:00Z",
            "Bot",
        ),
        c(4, "gate-bot", "/fusegate accept g1_walk assembled N=4096 threads=2 -- me", "2026-12-06T12:00:00Z"),
        c(5, "rita", "/fusegate accept g1_walk assembled N=4096 threads=2 -- please", "2026-12-06T12:01:00Z"),
        c(
            6,
            "wes",
            "/fusegate accept g1_walk assembled N=4096 threads=2 -- traded for speed",
            "2026-12-06T12:02:00Z",
        ),
        c(7, "wes", "lgtm", "2026-12-06T12:03:00Z"),
    ]
    asked = []
    out = acceptance.from_comments(
        comments,
        repo="acme/robots",
        number=7,
        head_sha=HEAD,
        rows=ROWS,
        permission=lambda u: asked.append(u) or LEVELS[u],
        since=datetime(2026, 12, 6, 11, tzinfo=UTC),
        ignore=["gate-bot"],
    )
    assert asked == ["alice", "rita", "wes"]  # once each, and never the bots
    assert [(a.login, a.ok) for a in out.answers] == [("alice", True), ("rita", False), ("wes", True)]
    assert {(a.task, a.login, a.comment_url) for a in out.acceptances} == {
        ("g1_motion", "alice", "u/2"),
        ("g1_walk", "wes", "u/6"),
    }
    without = acceptance.from_comments(
        comments, repo="acme/robots", number=7, head_sha=HEAD, rows=ROWS, permission=LEVELS.get
    )
    assert [a.task for a in without.acceptances] == ["g1_motion"]  # only the command that names the head


# --- what becomes of a row ------------------------------------------------------------------------------------


def on_record(**kw) -> Acceptance:
    values = dict(
        repo="acme/robots",
        number=7,
        head_sha=HEAD,
        machine="runner-1",
        kind=Kind.HEAD_VS_BASE,
        task="g1_walk",
        impl="assembled",
        num_envs=4096,
        threads=2,
        login="alice",
        reason="a new reward term",
        accepted_at=AT,
        ratio=1.4,
        high=1.42,
        cost_ratio=None,
    )
    return Acceptance(**{**values, **kw})


def row(**kw) -> Row:
    values = dict(machine="runner-1", kind=Kind.HEAD_VS_BASE, task="g1_walk", impl="assembled", num_envs=4096)
    return Row(**{**values, "threads": 2, "margin": 0.05, "signal": Signal.TIME, "reason": "time", **kw})


JUDGED = [  # (the row, the acceptance, the row's decision after)
    (row(decision=Decision.FAIL, ratio=1.4, low=1.38, high=1.42), on_record(), Decision.ACCEPTED),
    (
        row(decision=Decision.FAIL, ratio=1.45, low=1.42, high=1.48),
        on_record(),
        Decision.ACCEPTED,
    ),  # at the bound
    (row(decision=Decision.FAIL, ratio=1.6, low=1.43, high=1.7), on_record(), Decision.FAIL),  # worse
    (
        row(decision=Decision.FAIL, ratio=1.4, low=1.38, high=1.42),
        on_record(threads=1),
        Decision.FAIL,
    ),  # other cell
    (
        row(decision=Decision.FAIL, ratio=1.4, low=1.38, high=1.42, machine="runner-2"),
        on_record(),
        Decision.FAIL,
    ),
    (
        row(decision=Decision.FAIL, ratio=1.4, low=1.38, high=1.42, kind=Kind.IMPL_VS_BASELINE),
        on_record(),
        Decision.FAIL,
    ),
    (row(decision=Decision.PASS, ratio=1.0, low=0.99, high=1.01), on_record(), Decision.PASS),
    (row(decision=Decision.INCONCLUSIVE, ratio=1.4, low=0.9, high=1.9), on_record(), Decision.INCONCLUSIVE),
    (row(decision=Decision.FAIL, kind=Kind.CORRECTNESS), on_record(kind=Kind.CORRECTNESS), Decision.FAIL),
    (row(decision=Decision.ERROR), on_record(), Decision.ERROR),
    # cost: worse when above the accepted cost ratio by more than the row's margin
    (
        row(decision=Decision.FAIL, signal=Signal.COST, cost_ratio=1.1),
        on_record(high=None, cost_ratio=1.08),
        Decision.ACCEPTED,
    ),
    (
        row(decision=Decision.FAIL, signal=Signal.COST, cost_ratio=1.2),
        on_record(high=None, cost_ratio=1.08),
        Decision.FAIL,
    ),
    (
        row(decision=Decision.FAIL, ratio=1.4, low=1.38, high=1.42),
        on_record(head_sha="1" * 40),
        Decision.FAIL,
    ),
]


@pytest.mark.parametrize(("r", "a", "after"), JUDGED)
def test_a_failing_row_of_an_accepted_cell_is_accepted_unless_worse(r, a, after):
    reasons: list[str] = []
    applied = accepted.apply([r], [a] if a.head_sha == HEAD else [], reasons)
    assert r.decision == after
    if after == Decision.ACCEPTED:
        assert r.reason.startswith("accepted on record by @alice for head c0ffee000000: a new reward term")
        assert applied[0].accepted == 1 and "1 failing row(s) accepted on record" in reasons[0]
    elif r.decision == Decision.FAIL and r.reason.endswith("or fix it"):
        assert "worse than accepted by @alice" in r.reason and applied[0].worse == 1


def test_the_newest_acceptance_of_a_cell_holds():
    older, newer = on_record(high=1.2), on_record(high=1.5, accepted_at=AT + timedelta(hours=1), login="maya")
    r = row(decision=Decision.FAIL, ratio=1.4, low=1.38, high=1.42)
    [applied] = accepted.apply([r], [newer, older], [])
    assert r.decision == Decision.ACCEPTED and applied.login == "maya"


def test_a_verdict_whose_only_fails_are_accepted_approves_and_another_fail_rejects():
    ok = row(decision=Decision.PASS, threads=1)
    slow = row(decision=Decision.FAIL, ratio=1.4, low=1.38, high=1.42)
    accepted.apply([ok, slow], [on_record()], reasons := [])
    assert tally.verdict([ok, slow], reasons) == "approve"
    assert reasons[-1] == "approve: every cell is within its margin or accepted on record (1 accepted)"
    other = row(decision=Decision.FAIL, ratio=1.3, low=1.28, high=1.32, task="g1_motion")
    accepted.apply([other], [on_record()], [])
    assert tally.verdict([ok, slow, other], []) == "reject"


def test_the_summary_shows_the_accepted_rows_who_and_why():
    ok = row(decision=Decision.PASS, threads=1)
    slow = row(decision=Decision.FAIL, ratio=1.4, low=1.38, high=1.42)
    applied = accepted.apply([ok, slow], [on_record()], [])
    s = summary.summarize("approve", [ok.record(), slow.record()], acceptances=applied)
    [f] = s.accepted
    assert f.mark == "accepted" and f.then == "by @alice: a new reward term"
    assert f.how_much.startswith("1.40x slower [1.38, 1.42]") and s.listed == (f,)
    assert (
        s.headline.startswith("approve: g1_walk assembled 1.40x slower")
        and "accepted on record" in s.headline
    )
    assert s.counts == "2 rows: 1 accepted, 1 pass (1 time)"


# --- end to end on the store ---------------------------------------------------------------------------------------


def test_stored_results_with_an_acceptance_approve_and_a_new_head_does_not_inherit_it(store_url, tmp_path):
    path, base, head = gitrepo.base_and_head(tmp_path / "repo", policy='compare = ["assembled"]\n')
    cell = ("assembled", "g1_walk", 4096, 2)
    slow = lambda c: 1.4 if (c["impl"], c["task"], c["num_envs"], c["threads"]) == cell else 1.0  # noqa: E731
    ingest(store_url, measure_results(tmp_path / "a", base))
    ingest(store_url, measure_results(tmp_path / "b", head, paired_effect=slow))
    before = evaluate_pair(store_url, path, base, head)
    assert before.verdict == "reject" and before.acceptances == []
    c = Comment(
        id=1, login="alice", body="/fusegate accept g1_walk assembled -- why", url="", at=AT, head_sha=head
    )
    [a] = acceptance.handle(
        c, repo="acme/robots", number=7, head_sha=head, rows=before.comparisons, permission=lambda u: "admin"
    )
    assert a.ok and {x.kind for x in a.acceptances} == {
        "impl_vs_baseline",
        "best_threads",
        "paired_head_vs_base",
    }
    with db.transaction(store_url) as session:
        stored.record(session, acceptances=a.acceptances)
    with db.transaction(store_url, write=False) as session:
        on_file = stored.for_head(session, head_sha=head)
    assert sorted(x.kind for x in on_file) == sorted(x.kind for x in a.acceptances)
    after = evaluate_pair(store_url, path, base, head, acceptances=on_file)
    assert after.verdict == "approve", after.reasons
    assert sum(r.decision == "accepted" for r in after.comparisons) == 3
    assert {x.accepted for x in after.acceptances} == {1} and after.acceptances[0].login == "alice"
    other = gitrepo.commit(path, message="push")
    ingest(store_url, measure_results(tmp_path / "c", other, paired_effect=slow))
    with db.transaction(store_url, write=False) as session:
        assert stored.for_head(session, head_sha=other) == []  # the new head has none on record
    assert evaluate_pair(store_url, path, base, other, acceptances=[]).verdict == "reject"


def test_a_head_judged_merged_into_its_base_has_the_heads_acceptances(store_url):
    """A PR behind its base is judged as its head merged into the base (``gate.pair``): that commit's verdict
    applies the acceptances given on the PR's head."""
    from gate.store import pulls

    merged = "e" * 40
    with db.transaction(store_url) as session:
        pull = pulls.upsert_pull(
            session,
            repo="acme/robots",
            number=7,
            title="t",
            base_ref="main",
            base_sha="b" * 40,
            head_sha=HEAD,
            installation_id=None,
            event_at=None,
        )
        pulls.ensure_check(session, pull=pull, deadline=AT).judged_sha = merged
        stored.record(session, acceptances=[on_record()])
    with db.transaction(store_url, write=False) as session:
        assert [a.login for a in stored.for_head(session, head_sha=merged)] == ["alice"]
        assert stored.last(session, head_sha=merged) is not None and stored.ids(session, head_sha=merged)
        assert stored.for_head(session, head_sha="f" * 40) == []
