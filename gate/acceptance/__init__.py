"""A regression accepted on record: the PR comment command, who may give it, and what it does to a row.

A maintainer comments on the pull request, one command a line::

    /fusegate accept [machine] [kind] <task> <impl> [N=<n>] [threads=<t>] [@<head sha>] -- <reason>

The cell is a row's identity as the verdict comment and the terminal print it: ``g1_walk assembled N=4096
threads=2`` (``2 thr``, ``2thr`` and ``num_envs=`` are read too; ``vs <baseline>`` narrows to rows against it).
Machine and kind may be left out: the command then accepts the cell's failing rows on every machine and of every
kind (a slower kernel fails its implementation-vs-baseline, best-thread and head-vs-base rows together); N and
threads may be left out when one failing cell fits the rest. ``@<sha>`` names the head the acceptance is for
(the comment's copyable command carries it); without it, the head the pull request had when the comment arrived.
The reason after `` -- `` is required.

Only a user with write, maintain or admin permission on the repository may accept. An acceptance holds for one
pull request's head commit: a new push needs a new one. A row of the accepted cell that fails is ``accepted``
(not counted as a fail) while it is no worse than when accepted: its time interval's lower bound at or below the
accepted upper bound, and its cost ratio at most the row's margin above the accepted one. Worse, it fails again.
Correctness, meter and machine rows and errors are never accepted.

Pure functions: ``commands`` parses a comment (``command``), ``handle`` answers one comment's commands given the
verdict's rows and a permission lookup, ``from_comments`` does that over a pull request's comments as GitHub's
API lists them, for a judge without the bot's store (``answer``), ``judged`` says what becomes of a row
(``rule``).
"""

from gate.acceptance.answer import ALLOWED, Answer, Comment, Handled, from_comments, handle
from gate.acceptance.command import (
    MAX_REASON,
    PREFIX,
    SYNTAX,
    Command,
    CommandError,
    Spec,
    cell_text,
    commands,
    key,
    parse,
    suggestion,
)
from gate.acceptance.rule import NEVER, accepted_text, counted, judged, newest, worse, worse_text

__all__ = [
    "ALLOWED",
    "MAX_REASON",
    "NEVER",
    "PREFIX",
    "SYNTAX",
    "Answer",
    "Command",
    "CommandError",
    "Comment",
    "Handled",
    "Spec",
    "accepted_text",
    "cell_text",
    "commands",
    "counted",
    "from_comments",
    "handle",
    "judged",
    "key",
    "newest",
    "parse",
    "suggestion",
    "worse",
    "worse_text",
]
