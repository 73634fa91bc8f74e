"""What the trial seam costs per trial: the local backend against the Ray backend, on the same ``noop`` tasks,
in one run.

    .venv/bin/python benchmarks/backend_overhead.py [--tasks 8]

Builds a throwaway lab home with N tiny Python tasks (benchmarks/trial_overhead.py's), the grader and noop
images through doit, and a Ray test cluster on this machine (two nodes of one CPU each, 127.0.0.1 only, token
authentication on; stopped by its own processes). Then runs every task once through each backend, one trial at
a time, through ``rules.backends.run_through`` (what ``doit eval`` calls), and once through ``run_trial`` alone
(``direct``: no seam): the trial's own seconds
(``result["seconds"]``: containers, setup, grading, on the node) and the wall seconds around it. The
difference is the backend's overhead per trial: packing the task, sending the spec, placing the Ray task,
laying and removing the node's scratch, returning the files, writing the record. Also the round trip of an
empty Ray task. Prints one line per measurement and a JSON summary. Needs `pip install -e '.[ray]'`.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(PROJECT / "benchmarks"))
sys.path.insert(0, str(PROJECT / "tests"))


def trials(home: Path, tasks: list[str], backend: str, address: str | None, run: str) -> list[dict]:
    """Each task once through ``backend`` ("direct": ``run_trial`` itself, no seam), serially: wall, inside
    (the trial's own seconds) and overhead."""
    from rules import images
    from rules.agents import load_agents
    from rules.backends import run_through
    from rules.config import Limits
    from rules.trial import Trial, run_trial

    agent = load_agents(home / "evals" / "agents.toml")["noop"]
    tier = home / "evals" / "aider"
    rows = []
    for task in tasks:
        t = Trial(agent=agent, task_dir=tier / "tasks" / task, run_dir=tier / "runs" / run / task,
                  scratch=home / ".lab" / "unused", agent_image=agent.tag(images.GRADER), grader_image=images.GRADER,
                  grade_limits=Limits(cpus=1, memory=1024**3, pids=256, timeout=120), tries=1, run=run)
        t0 = time.monotonic()
        if backend == "direct":
            r = run_trial(replace(t, scratch=home / ".lab" / "bench" / task), environ={})
            r["backend"] = {"node": "-"}
        else:
            r = run_through(t, backend, address, environ={})
        wall = time.monotonic() - t0
        assert r["status"] == "fail", r  # the stub fails: one try, graded once
        rows.append({"wall": wall, "inside": r["seconds"], "overhead": wall - r["seconds"],
                     "node": r["backend"]["node"]})
    return rows


def summary(rows: list[dict], skip_first: bool = True) -> dict:
    use = rows[1:] if skip_first and len(rows) > 1 else rows
    return {k: round(statistics.median(r[k] for r in use), 3) for k in ("wall", "inside", "overhead")} | {
        "overhead_max": round(max(r["overhead"] for r in use), 3), "nodes": sorted({r["node"] for r in rows})}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=8, help="number of tasks (default 8)")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="lab-bench-backend-"))
    raytmp = tempfile.mkdtemp(prefix="lab-ray-", dir="/tmp")
    os.environ.update({"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token",
                       "RAY_AUTH_TOKEN": secrets.token_hex(32), "RAY_TMPDIR": raytmp,
                       "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"})
    home = base / "home"
    os.environ["LAB_HOME"] = str(home)  # before rules.config is imported: this process is the driver
    cluster = None
    try:
        from trial_overhead import doit, make_home

        tasks = make_home(home, args.tasks)
        print(f"images ready in {doit(home, 'agent_image:noop'):.1f} s")
        import ray
        from ray.cluster_utils import Cluster

        t0 = time.monotonic()
        node = dict(num_cpus=1, memory=3 * 1024**3, object_store_memory=100 * 1024**2, node_ip_address="127.0.0.1")
        cluster = Cluster(initialize_head=True, head_node_args=dict(include_dashboard=False,
                                                                    env_vars={"LAB_NODE": "a"}, **node))
        cluster.add_node(env_vars={"LAB_NODE": "b"}, **node)
        cluster.wait_for_nodes()
        print(f"Ray cluster of 2 nodes started in {time.monotonic() - t0:.1f} s at {cluster.address}")
        out = {"tasks": len(tasks)}
        for backend, address in (("direct", None), ("local", None), ("ray", cluster.address)):
            t0 = time.monotonic()
            rows = trials(home, tasks, backend, address, f"noop-{backend}")
            s = summary(rows)
            s["first_overhead"] = round(rows[0]["overhead"], 3)  # opens the backend: node check, worker start
            out[backend] = s
            print(f"{backend}: {len(rows)} trials in {time.monotonic() - t0:.1f} s; per trial (median, first left "
                  f"out) wall {s['wall']:.3f} s = inside {s['inside']:.3f} s + overhead {s['overhead']:.3f} s "
                  f"(max {s['overhead_max']:.3f} s; the first {s['first_overhead']:.3f} s); "
                  f"nodes {', '.join(s['nodes'])}")

        @ray.remote(num_cpus=1)
        def empty():
            return None

        ray.get(empty.remote())
        t0 = time.monotonic()
        for _ in range(50):
            ray.get(empty.remote())
        out["ray_empty_task"] = round((time.monotonic() - t0) / 50, 4)
        out["seam_per_trial"] = round(out["local"]["overhead"] - out["direct"]["overhead"], 3)
        out["ray_extra_per_trial"] = round(out["ray"]["overhead"] - out["local"]["overhead"], 3)
        print(f"the seam (pack, copy back, write) costs {out['seam_per_trial']:.3f} s per trial over run_trial")
        print(f"an empty Ray task's round trip: {out['ray_empty_task'] * 1000:.1f} ms; the Ray backend adds "
              f"{out['ray_extra_per_trial']:.3f} s per trial to the local backend's overhead; for 10,000 trials "
              f"that is {out['ray_extra_per_trial'] * 10000 / 3600:.2f} h of driver time if run one at a time, "
              "spread over the trials in flight")
        print(json.dumps(out, indent=2))
    finally:
        try:
            import ray

            ray.shutdown()
        except ImportError:
            pass
        if cluster is not None:
            cluster.shutdown()  # its own processes; never `ray stop`
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(raytmp, ignore_errors=True)


if __name__ == "__main__":
    main()
