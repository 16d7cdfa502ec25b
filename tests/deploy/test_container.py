"""The Dockerfile and deploy/compose.yaml for real: images built with podman (the base from Debian's archive),
PostgreSQL, the migration step and two service replicas started with podman-compose, a runner's upload and a
verdict through them, twenty concurrent uploads split across the replicas; then torn down. The commands are
deploy/stack.sh's, the ones docs/operations.md gives. Slow (the image build): the container lane, run by CI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from gate.api.background import free_port
from gate.ingest import asv_dir
from tests.gate import gitrepo
from tests.gate.builders import measure_results

pytestmark = pytest.mark.container
ROOT = Path(__file__).resolve().parents[2]
STACK = ROOT / "deploy" / "stack.sh"
POLICY = 'compare = ["assembled"]\nrequired_machines = ["runner-1"]\n'
NEEDS = ("podman", "runc", "debootstrap")


def _run(*argv: str, env: dict, timeout: float = 1200) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, (
        f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    missing = [tool for tool in NEEDS if shutil.which(tool) is None]
    if missing or os.geteuid() != 0:
        why = f"needs {', '.join(missing) or 'root'} (apt-get install podman runc debootstrap)"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the container lane: {why} (see .ci/run)")
        pytest.skip(why)
    root = tmp_path_factory.mktemp("stack")
    repo = root / "repo"
    base = gitrepo.commit(repo, policy=POLICY, message="base")
    head = gitrepo.commit(repo, message="head")
    subprocess.run(["chmod", "-R", "a+rX", str(root)], check=True)  # the service runs as its own user
    # The README's `cp deploy/service.env.example deploy/service.env`, kept out of the work tree.
    shutil.copy(ROOT / "deploy" / "service.env.example", root / "service.env")
    ports = (free_port(), free_port())
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # podman-compose from the venv
        "POSTGRES_PASSWORD": "ci-" + os.urandom(8).hex(),
        "FUSEGATE_REPO_DIR": str(repo),
        "FUSEGATE_ENV_FILE": str(root / "service.env"),
        "FUSEGATE_PORT": str(ports[0]),
        "FUSEGATE_PORT_2": str(ports[1]),
        "FUSEGATE_PROJECT": "fusegate-test",
        "PIP_CERT": os.environ.get("PIP_CERT", "/etc/ssl/certs/ca-certificates.crt"),
    }
    _run(str(STACK), "images", env=env)
    try:
        _run(str(STACK), "up", env=env, timeout=600)
        yield {
            "env": env,
            "root": root,
            "urls": [f"http://127.0.0.1:{p}" for p in ports],
            "base": base,
            "head": head,
        }
    finally:
        subprocess.run([str(STACK), "down"], env=env, capture_output=True, timeout=300, check=False)


def _token(stack, *args: str) -> str:
    done = _run(
        "podman", "exec", "fusegate-test_gate_1", "fusegate", "token", "create", *args, env=stack["env"]
    )
    return done.stdout.strip().splitlines()[-1]


def test_the_image_serves_as_a_non_root_user_without_numba_and_carries_valgrind(stack):
    probe = (
        "import os, sys, shutil, gate.api.app; "
        "print(os.getuid(), 'numba' in sys.modules, bool(shutil.which('valgrind')), os.environ['NUMBA_CACHE_DIR'])"
    )
    out = _run(
        "podman", "exec", "fusegate-test_gate_1", "python3", "-c", probe, env=stack["env"]
    ).stdout.split()
    assert out[:3] == ["10001", "False", "True"]
    assert os.access(ROOT / "Dockerfile", os.R_OK)
    writable = _run(
        "podman",
        "exec",
        "fusegate-test_gate_1",
        "sh",
        "-c",
        f"mkdir -p {out[3]} && touch {out[3]}/.w && echo ok",
        env=stack["env"],
    ).stdout
    assert writable.strip() == "ok"  # the Numba cache is writable by the service's user


def test_a_runner_uploads_and_reads_the_verdict_through_either_replica(stack):
    token = _token(stack, "runner-1", "--machine", "runner-1")
    one, two = stack["urls"]
    for sha, seed in ((stack["base"], 1), (stack["head"], 2)):
        results = measure_results(stack["root"] / f"m-{seed}", sha, seed=seed)
        runner_env = {**stack["env"], "FUSEGATE_URL": one, "FUSEGATE_TOKEN": token}
        _run(
            str(Path(sys.executable).parent / "fusegate"),
            "upload",
            "--results",
            str(results),
            "--spool",
            str(stack["root"] / f"spool-{seed}"),
            env=runner_env,
        )
    headers = {"Authorization": f"Bearer {token}"}
    admin = {"Authorization": f"Bearer {_token(stack, 'operator', '--role', 'admin')}"}  # official verdicts
    made = httpx.post(
        f"{two}/api/evaluations",
        json={"base": stack["base"], "head": stack["head"]},
        headers=admin,
        timeout=120,
    )
    assert made.status_code == 201, made.text
    assert made.json()["verdict"] == "approve", made.json()["reasons"]
    read = httpx.get(f"{one}/api/verdicts/{stack['base']}/{stack['head']}", timeout=60).json()
    assert read["id"] == made.json()["id"] and read["verdict"] == "approve"
    assert (
        httpx.get(f"{two}/pr/{stack['base']}/{stack['head']}", timeout=60).status_code == 200
    )  # the dashboard
    other = measure_results(stack["root"] / "other", stack["head"], machine="runner-2", seed=3)
    [bundle] = asv_dir.read(other)
    json_headers = {**headers, "Content-Type": "application/json"}
    refused = httpx.post(
        f"{one}/api/runs", content=bundle.model_dump_json(), headers=json_headers, timeout=60
    )
    assert refused.status_code == 403 and "runner-1" in refused.json()["detail"]  # the token is bound


def test_twenty_concurrent_uploads_split_across_two_replicas_land_once(stack):
    token = _token(stack, "fleet", "--any-machine")
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    bodies = []
    for i in range(20):
        results = measure_results(
            stack["root"] / f"fleet-{i}", stack["head"], machine=f"fleet-{i:02d}", seed=100 + i
        )
        [bundle] = asv_dir.read(results)
        bodies.append(bundle.model_dump_json())

    def send(i: int) -> dict:
        url = stack["urls"][i % 2]
        r = httpx.post(f"{url}/api/runs", content=bodies[i % 20], headers=headers, timeout=300)
        assert r.status_code == 201, r.text
        return r.json()

    with ThreadPoolExecutor(20) as pool:
        first = list(pool.map(send, range(20)))
    with ThreadPoolExecutor(20) as pool:
        again = list(pool.map(send, range(21, 41)))  # the same bundles, each through the other replica
    assert sum(r["stored"] for r in first) == 20 and sum(r["unchanged"] for r in first) == 0
    assert sum(r["stored"] for r in again) == 0 and sum(r["unchanged"] for r in again) == 20
    runs = httpx.get(f"{stack['urls'][0]}/api/runs", params={"limit": 1000}, timeout=60).json()
    fleet = [r for r in runs if r["machine"].startswith("fleet-")]
    assert sorted(r["machine"] for r in fleet) == [
        f"fleet-{i:02d}" for i in range(20)
    ]  # nothing lost or doubled
    print(json.dumps({"fleet_runs": len(fleet)}))


def test_a_dump_restores_the_store_the_replicas_serve(stack):
    """docs/operations.md's backup and restore: pg_dump out of the db container, pg_restore --clean back."""
    env, db = stack["env"], "fusegate-test_db_1"
    before = httpx.get(f"{stack['urls'][0]}/api/runs", params={"limit": 1000}, timeout=60).json()
    dump = stack["root"] / "fusegate.dump"
    with dump.open("wb") as out:
        subprocess.run(
            ["podman", "exec", db, "pg_dump", "-U", "fusegate", "-Fc", "fusegate"],
            env=env,
            stdout=out,
            check=True,
            timeout=300,
        )
    assert dump.stat().st_size > 10_000
    with dump.open("rb") as src:
        subprocess.run(
            [
                "podman",
                "exec",
                "-i",
                db,
                "pg_restore",
                "-U",
                "fusegate",
                "-d",
                "fusegate",
                "--clean",
                "--if-exists",
            ],
            env=env,
            stdin=src,
            check=True,
            timeout=300,
        )
    after = httpx.get(f"{stack['urls'][1]}/api/runs", params={"limit": 1000}, timeout=60).json()
    assert after == before and len(after) >= 22
