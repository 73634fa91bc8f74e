"""The harness's own overhead per trial, measured with the ``noop`` agent on a throwaway tier.

    python3 benchmarks/trial_overhead.py [--tasks 12]

Builds a lab home in a temporary folder with N tiny Python tasks (the test fixture's ``double`` exercise),
builds the grader and noop images through doit, then measures:
  - one trial's parts, in this process (serial): the agent container (``true``: container start and stop),
    grading (a fresh grader container running check.sh), and the rest (setup.sh, diff, files);
  - ``doit eval:noop`` wall time per trial with ``jobs=1`` and ``jobs=2`` (from a clean runs folder), which
    adds doit's own bookkeeping.
Prints one line per measurement (seconds) and a JSON summary.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(PROJECT / "tests"))


def make_home(home: Path, n: int) -> list[str]:
    """A lab home with ``n`` Python tasks and a manifest; returns the task names."""
    from fixture_upstream import GOOD_PY, STUB_PY, _python, make_upstream, write_exercise
    from rules.tiers.aider import exercises as aider
    from rules.files import write_atomic, write_json

    up = make_upstream(home.parent / "upstream", only=["python/hello"])
    for i in range(n - 1):
        write_exercise(up, f"python/double-{i:02d}", _python(f"double-{i:02d}", STUB_PY, GOOD_PY))
    tier = home / "evals" / "aider"
    entries = []
    for ex in aider.discover(up, ["python"]):
        r = aider.render(ex)
        for rel, (data, mode) in r.task_files.items():
            write_atomic(tier / "tasks" / ex.task / rel, data, mode)
        entries.append({"task": ex.task, "language": "python", "exercise": ex.slug, "status": "kept",
                        "published": True})
    write_json(tier / "manifest.json", {"version": 1, "tier": "aider", "tasks": entries})
    (tier / "suite.toml").write_text('upstream = "none"\nref = "main"\nlanguages = ["python"]\n\n'
                                     '[prove]\ncpus = 1.0\nmemory = "1g"\npids = 256\ntimeout = 120\n')
    shutil.copy(PROJECT / "evals" / "agents.toml", home / "evals" / "agents.toml")
    return [e["task"] for e in entries]


def doit(home: Path, *args: str) -> float:
    """Run doit on the project's dodo.py with LAB_HOME=home; returns wall seconds. Exits on failure."""
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), *args], cwd=PROJECT,
                          env={**os.environ, "LAB_HOME": str(home)}, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"doit {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return time.monotonic() - t0


def in_process(home: Path, tasks: list[str]) -> dict:
    """Serial trials in this process: per-trial agent, grading and other seconds (medians)."""
    from rules import images
    from rules.agents import load_agents
    from rules.config import Limits
    from rules.trial import Trial, run_trial

    agent = load_agents(home / "evals" / "agents.toml")["noop"]
    tier = home / "evals" / "aider"
    rows = []
    for task in tasks:
        t = Trial(agent=agent, task_dir=tier / "tasks" / task, run_dir=home / "bench-runs" / task,
                  scratch=home / ".lab" / "bench" / task, agent_image=agent.tag(images.GRADER),
                  grader_image=images.GRADER, grade_limits=Limits(cpus=1, memory=1024**3, pids=256, timeout=120),
                  tries=1)
        t0 = time.monotonic()
        r = run_trial(t, environ={})
        wall = time.monotonic() - t0
        assert r["status"] == "fail", r  # the stub fails: one try, graded once
        rows.append({"wall": wall, "agent": r["agent_seconds"], "grading": r["grading_seconds"]})
    med = {k: statistics.median(row[k] for row in rows) for k in ("wall", "agent", "grading")}
    med["other"] = med["wall"] - med["agent"] - med["grading"]
    med["without_grading"] = med["wall"] - med["grading"]
    return med


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=12, help="number of tasks (default 12)")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="lab-bench-trial-"))
    home = base / "home"
    try:
        tasks = make_home(home, args.tasks)
        build = doit(home, "agent_image:noop")
        print(f"images ready in {build:.1f} s (grader and noop; cached layers are reused)")
        parts = in_process(home, tasks)
        print(f"one trial, serial, in process (median of {len(tasks)}): {parts['wall']:.2f} s = agent container "
              f"{parts['agent']:.2f} s + grading {parts['grading']:.2f} s + other {parts['other']:.2f} s")
        summary = {"tasks": len(tasks), "in_process": {k: round(v, 3) for k, v in parts.items()}}
        for jobs in (1, 2):
            shutil.rmtree(home / "evals" / "aider" / "runs", ignore_errors=True)
            doit(home, "forget", "eval:noop")
            wall = doit(home, "eval:noop", f"jobs={jobs}")
            results = [json.loads(p.read_text()) for p in (home / "evals" / "aider" / "runs" / "noop").glob("*/result.json")]
            assert len(results) == len(tasks)
            grading = sum(r["grading_seconds"] for r in results) / len(tasks)
            trial = sum(r["seconds"] for r in results) / len(tasks)
            per = wall / len(tasks)
            print(f"doit eval:noop jobs={jobs}: {wall:.1f} s for {len(tasks)} trials = {per:.2f} s per trial; "
                  f"inside each trial {trial:.2f} s, of which grading {grading:.2f} s (summed over workers)")
            summary[f"jobs_{jobs}"] = {"wall": round(wall, 2), "per_trial": round(per, 3),
                                       "trial_seconds": round(trial, 3), "grading_per_trial": round(grading, 3)}
        print(json.dumps(summary, indent=2))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
