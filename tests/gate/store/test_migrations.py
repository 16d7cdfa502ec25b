"""The migrations build exactly the tables the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from gate.domain.machines import machine_id
from gate.store import db
from gate.store.models import Base


def test_migrated_schema_matches_the_models(store_url):
    with db.engine(store_url).connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert diff == []


def test_0004_moves_stored_runs_to_the_new_machine_id_and_labels(tmp_path):
    """A store of the old schema: runs of the machine's own hardware get the id that no longer hashes node
    memory (so a base measured before the upgrade still matches a head measured after it); labels say pool=."""
    import json

    from alembic import command
    from sqlalchemy import text

    from gate.meter import fingerprint

    url = f"sqlite:///{tmp_path / 'old.db'}"
    config = db.alembic_config(url)
    command.upgrade(config, "0003")
    fp = fingerprint.machine()
    old = (
        __import__("hashlib")
        .sha256(json.dumps({k: fp[k] for k in (*_ID_KEYS, "numa_nodes")}, sort_keys=True).encode())
        .hexdigest()[:16]
    )
    with db.engine(url).begin() as c:
        c.execute(
            text(
                "INSERT INTO machine (id, name, fingerprint_hash, fingerprint, asv_machine, first_seen, last_seen) "
                "VALUES (1, 'm', :h, :fp, '{}', '2026-01-01', '2026-01-01')"
            ),
            {"h": old, "fp": json.dumps(fp)},
        )
        c.execute(
            text(
                "INSERT INTO placement (id, hash, placement, label) VALUES (1, 'p', '{}', "
                "'cpus=0-1 mem=default threads=2 layer=omp')"
            )
        )
        c.execute(text("INSERT INTO environment (id, hash, software) VALUES (1, 'e', '{}')"))
        c.execute(
            text('INSERT INTO "commit" (id, sha, first_seen) VALUES (1, :s, :t)'),
            {"s": "a" * 40, "t": "2026-01-01"},
        )
        for run_id, h in ((1, old), (2, "another-hardware")):
            c.execute(
                text(
                    "INSERT INTO run (id, machine_id, commit_id, environment_id, placement_id, env_name, source, "
                    "digest, fingerprint_hash, started_at, uploaded_at) VALUES (:i, 1, 1, 1, 1, :e, 'asv', 'd', "
                    ":h, '2026-01-01', '2026-01-01')"
                ),
                {"i": run_id, "e": f"env{run_id}", "h": h},
            )
    command.upgrade(config, "head")
    with db.engine(url).connect() as c:
        hashes = dict(c.execute(text("SELECT id, fingerprint_hash FROM run")).all())
        label = c.execute(text("SELECT label FROM placement")).scalar()
        machine = c.execute(text("SELECT fingerprint_hash FROM machine")).scalar()
    assert hashes == {
        1: machine_id(fp),
        2: "another-hardware",
    } and machine == machine_id(fp)
    assert label == "cpus=0-1 mem=default pool=2 layer=omp"
    command.downgrade(config, "0003")  # and back: the old schema's labels
    with db.engine(url).connect() as c:
        assert (
            c.execute(text("SELECT label FROM placement")).scalar()
            == "cpus=0-1 mem=default threads=2 layer=omp"
        )


_ID_KEYS = ("arch", "cpu_model", "cpu_flags", "logical_cpus", "physical_cores", "sockets", "caches")


def test_the_service_refuses_a_store_that_is_not_migrated_and_says_what_to_run(tmp_path, capsys):
    """Migrations are a step (fusegate db upgrade, or fusegate serve's start-up), not a side effect of create_app."""
    import pytest

    from gate import cli
    from gate.api.app import create_app

    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    (tmp_path / "fresh.db").touch()  # an empty SQLite file: a store without a schema
    with pytest.raises(db.SchemaError, match=r"has no schema.*fusegate db upgrade"):
        create_app(database_url=url, repo=tmp_path)
    assert cli.main(["serve", "--no-upgrade", "--db", url]) == 78  # configuration: migrate the store
    assert "fusegate db upgrade" in capsys.readouterr().err
    assert cli.main(["db", "upgrade", "--db", url]) == 0
    current, head = db.revisions(url)
    assert current == head
    create_app(database_url=url, repo=tmp_path)  # now it serves


def test_0005_keeps_every_evaluation_and_comparison_both_ways(store_url):
    """0005 rebuilds ``evaluation`` on SQLite (batch mode): its comparisons must survive the rebuild (foreign keys
    off while migrating), and stored tokens become runner tokens."""
    from alembic import command
    from sqlalchemy import text

    config = db.alembic_config(store_url)
    command.downgrade(config, "0004")
    try:
        with db.engine(store_url).begin() as c:
            c.execute(
                text(
                    "INSERT INTO \"commit\" (id, sha, first_seen) VALUES (1, :a, '2026-01-01'), (2, :b, '2026-01-01')"
                ),
                {"a": "a" * 40, "b": "b" * 40},
            )
            c.execute(
                text(
                    "INSERT INTO evaluation (id, base_commit_id, head_commit_id, verdict, policy_source, policy, "
                    "reasons, created_at) VALUES (1, 1, 2, 'approve', 'base', '{}', '[]', '2026-01-01')"
                )
            )
            c.execute(
                text(
                    "INSERT INTO comparison (evaluation_id, machine, kind, task, impl, baseline, detail, margin, "
                    "samples, groups, decision, signal, reason) VALUES "
                    "(1, 'm', 'head_vs_base', 'g1_walk', 'assembled', 'base', '', 0.05, 3, 3, 'pass', 'time', '')"
                )
            )
            c.execute(
                text(
                    "INSERT INTO token (name, hash, created_at, revoked) VALUES ('t', :h, '2026-01-01', false)"
                ),
                {"h": "0" * 64},
            )
        command.upgrade(config, "head")
        with db.engine(store_url).connect() as c:
            assert c.execute(text("SELECT COUNT(*) FROM comparison")).scalar() == 1
            assert c.execute(text("SELECT official FROM evaluation")).scalar() in (True, 1)
            assert c.execute(text("SELECT role FROM token")).scalar() == "runner"
        command.downgrade(config, "0004")
        with db.engine(store_url).connect() as c:
            assert c.execute(text("SELECT COUNT(*) FROM comparison")).scalar() == 1
    finally:
        command.upgrade(config, "head")
        with db.engine(store_url).begin() as c:
            for table in ("comparison", "evaluation", "token", '"commit"'):
                c.execute(text(f"DELETE FROM {table}"))


def test_0008_adds_the_acceptances_and_keeps_every_evaluation_both_ways(store_url):
    """0008 adds a column to ``evaluation`` (rebuilt on SQLite when it is dropped again): its comparisons stay."""
    from alembic import command
    from sqlalchemy import text

    config = db.alembic_config(store_url)
    command.downgrade(config, "0007")
    try:
        with db.engine(store_url).begin() as c:
            c.execute(
                text(
                    "INSERT INTO \"commit\" (id, sha, first_seen) VALUES (1, :a, '2026-01-01'), (2, :b, '2026-01-01')"
                ),
                {"a": "a" * 40, "b": "b" * 40},
            )
            c.execute(
                text(
                    "INSERT INTO evaluation (id, base_commit_id, head_commit_id, verdict, policy_source, policy, "
                    "reasons, created_at, official) VALUES (1, 1, 2, 'approve', 'base', '{}', '[]', '2026-01-01', true)"
                )
            )
            c.execute(
                text(
                    "INSERT INTO comparison (evaluation_id, machine, kind, task, impl, baseline, detail, margin, "
                    "samples, groups, decision, signal, reason) VALUES "
                    "(1, 'm', 'head_vs_base', 'g1_walk', 'assembled', 'base', '', 0.05, 3, 3, 'pass', 'time', '')"
                )
            )
        command.upgrade(config, "head")
        with db.engine(store_url).connect() as c:
            assert c.execute(text("SELECT acceptances FROM evaluation")).scalar() is None
            assert c.execute(text("SELECT COUNT(*) FROM acceptance")).scalar() == 0
        command.downgrade(config, "0007")
        with db.engine(store_url).connect() as c:
            assert c.execute(text("SELECT COUNT(*) FROM comparison")).scalar() == 1
    finally:
        command.upgrade(config, "head")
        with db.engine(store_url).begin() as c:
            for table in ("comparison", "evaluation", '"commit"'):
                c.execute(text(f"DELETE FROM {table}"))
