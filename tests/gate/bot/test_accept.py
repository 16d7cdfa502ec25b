"""A regression accepted on record, end to end: a PR that fails one cell, a comment command from a user without
write access (refused, said why) and from one with it (approve, the accepted rows with who and why), a second
regression on the same head (reject), and a new push (the old acceptance does not apply)."""

from __future__ import annotations

from tests.gate import gitrepo
from tests.gate.bot.conftest import REPO, bundle, wait_for

CELL_A = ("g1_walk", 4096, 2)
CELL_B = ("g1_motion", 32768, 1)
ACCEPT_A = "/fusegate accept g1_walk assembled N=4096 threads=2 -- the new reward term costs time, by design"


def slow(*cells):
    return lambda c: (
        1.4 if c["impl"] == "assembled" and (c["task"], c["num_envs"], c["threads"]) in cells else 1.0
    )


def upload(bot, tmp_path, sha, name, **kw):
    r = bot.client.post("/api/runs", json=bundle(tmp_path / name, sha, **kw))
    assert r.status_code == 201, r.text


def body(bot) -> str:
    """The bot's comment, its lines joined (the answers wrap at the comment's width)."""
    return bot.comments()[0]["body"].replace("\n  ", " ")


def head_of(text: str) -> str:
    return text.partition("<details>")[0]


def test_an_accepted_regression_approves_and_a_second_one_rejects(bot, tmp_path):
    bot.github.permissions.update({"alice": "write", "rita": "read"})
    bot.open_pr()
    upload(bot, tmp_path, bot.base, "base")
    upload(bot, tmp_path, bot.head, "head", paired_effect=slow(CELL_A))
    bot.wait_status("failure")
    hint = wait_for(
        lambda: "To accept a fail on record" in body(bot) and body(bot), "the hint in the comment"
    )
    assert f"`/fusegate accept g1_walk assembled N=4096 threads=2 @{bot.head[:12]} -- <why>`" in hint

    # Without write access: not accepted, and the comment says why.
    assert bot.comment("rita", ACCEPT_A).json()["status"] == "queued"
    refused = wait_for(lambda: "@rita" in body(bot) and body(bot), "the answer to rita")
    assert "@rita has read permission on acme/robots; accepting a regression needs" in refused, head_of(
        refused
    )
    assert [s["state"] for s in bot.statuses()] == ["pending", "failure"]

    # With it: approve, the accepted rows shown with who and why.
    bot.comment("alice", ACCEPT_A)
    success = bot.wait_status("success")
    assert success["description"].endswith("3 accepted on record") and success["description"].startswith(
        "approve:"
    )
    shown = wait_for(lambda: "### fusegate: approve" in body(bot) and body(bot), "the approve in the comment")
    top = head_of(shown)
    assert "- **accepted** g1_walk assembled vs handwritten: 1.40x slower" in top
    assert "by @alice: the new reward term costs time, by design" in top
    assert "- [@alice](https://github.test/" in top and ": accepted on record: `g1_walk" in top  # the answer
    assert "| **accepted** |" in shown.partition("<details>")[2]  # the rows, in the table
    assert len(bot.github.calls_to("/collaborators/", "GET")) == 2  # once per user who commanded

    pr = bot.client.get(f"/api/pulls/{REPO}/7").json()
    assert {(a["login"], a["kind"], a["head_sha"]) for a in pr["acceptances"]} == {
        ("alice", kind, bot.head) for kind in ("impl_vs_baseline", "best_threads", "paired_head_vs_base")
    }
    assert all(1.38 < a["ratio"] < 1.42 and a["high"] < 1.45 for a in pr["acceptances"])
    verdict = bot.client.get(f"/api/verdicts/{bot.base}/{bot.head}").json()
    assert (
        verdict["verdict"] == "approve"
        and sum(c["decision"] == "accepted" for c in verdict["comparisons"]) == 3
    )
    assert {a["accepted"] for a in verdict["acceptances"]} == {1}

    # A second regression on the same head: the new fail rejects, the accepted one stays accepted.
    upload(bot, tmp_path, bot.head, "head-again", paired_effect=slow(CELL_A, CELL_B))
    wait_for(lambda: bot.statuses()[-1]["state"] == "failure", "a failure after the success")
    again = wait_for(lambda: "### fusegate: reject" in body(bot) and body(bot), "the reject in the comment")
    top = head_of(again)
    assert "- **fail** g1_motion assembled" in top and "- **accepted** g1_walk assembled" in top
    assert [s["state"] for s in bot.statuses()] == ["pending", "failure", "success", "failure"]

    # A new push: the acceptance was for the old head, and the same regression rejects again.
    new_head = gitrepo.commit(bot.path, message="push")
    bot.open_pr(head=new_head, action="synchronize")
    upload(bot, tmp_path, new_head, "new-head", paired_effect=slow(CELL_A))
    bot.wait_status("failure", sha=new_head)
    pushed = wait_for(
        lambda: new_head[:12] in body(bot) and "reject" in body(bot) and body(bot), "the new head"
    )
    assert "**accepted**" not in head_of(pushed) and "@rita" not in pushed  # answers of the old head are gone
    new = bot.client.get(f"/api/verdicts/{bot.base}/{new_head}").json()
    assert new["acceptances"] == [] and not any(c["decision"] == "accepted" for c in new["comparisons"])


def test_malformed_commands_are_answered_and_the_bots_own_comment_is_not_a_command(bot, tmp_path):
    bot.github.permissions.update({"alice": "admin", bot.github.login: "admin"})
    bot.open_pr()
    upload(bot, tmp_path, bot.base, "base")
    upload(bot, tmp_path, bot.head, "head", paired_effect=slow(CELL_A))
    bot.wait_status("failure")
    bot.comment(
        "alice", "/fusegate accept g1_walk -- no impl\n/fusegate accept g1_walk assembled N=4096 threads=2"
    )
    bot.comment(
        bot.github.login, ACCEPT_A
    )  # the bot's login (a hint quoted in its own words is never obeyed)
    answered = wait_for(lambda: "name the cell" in body(bot) and body(bot), "the answers")
    assert "a reason is required" in answered
    bot.comment("alice", "/fusegate accept g1_motion handwritten -- it passes, but still")
    wait_for(lambda: "does not fail (pass); only a fail is accepted" in body(bot), "the answer to a pass")
    assert not bot.github.calls_to(f"/collaborators/{bot.github.login}/")
    assert [s["state"] for s in bot.statuses()] == ["pending", "failure"]
    assert bot.client.get(f"/api/pulls/{REPO}/7").json()["acceptances"] == []
