"""Where a noop trial's host-side time goes, phase by phase, on real published tasks.

    LAB_HOME=/path/to/home python3 benchmarks/trial_phases.py [--tasks python-bowling,go-bowling] [--rounds 3]
        [--tries 2] [--agent noop]

The home must hold published tasks (``doit gen:aider langs=... limit=N``) and the agent's image
(``doit agent_image:noop``). Runs ``rules.trial.run_trial`` in this process (serial, records under
``<home>/.lab/bench-trial-phases``, removed after) for each task, ``--rounds`` times, with timers wrapped around
its phases: the two ``lay_work_tree`` calls, the disk-capped scratch (making it, removing it), the agent
containers (``sandbox.run`` of role agent) and their host side, the gradings' containers and their host side
(``grade`` minus its container), ``archive_work``, ``work_diff``, ``tree_size``, ``remove_special_files``,
``_keep_out_files``, ``_grader_facts``, the record (``write_json``). Prints, per track, the mean seconds per
trial of each phase (the first round, which warms caches, is left out when there are more) and what is left
("rest": the trial's seconds minus every timed phase), and the load average.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default="", help="comma-separated task names (default: every published task)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tries", type=int, default=2)
    ap.add_argument("--agent", default="noop")
    args = ap.parse_args()
    if "LAB_HOME" not in os.environ:
        sys.exit("trial_phases: set LAB_HOME to a lab home with published tasks")

    from rules import runs, sandbox, trial
    from rules.config import STATE, load_suite

    suite = load_suite("aider")
    tasks = [t for t in args.tasks.split(",") if t] or sorted(p.name for p in suite.tasks_dir.iterdir()
                                                                  if (p / "tests.json").is_file())
    clock: dict[str, float] = defaultdict(float)

    def timed(name, fn):
        def wrapper(*a, **kw):
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                clock[name] += time.perf_counter() - t0
        return wrapper

    real_run = sandbox.run

    def run(image, command, **kw):
        t0 = time.perf_counter()
        try:
            return real_run(image, command, **kw)
        finally:
            role = (kw.get("labels") or {}).get("lab.role", "other")
            clock[f"container:{role}"] += time.perf_counter() - t0

    sandbox.run = run
    for name in ("lay_work_tree", "archive_work", "work_diff", "tree_size", "remove_special_files",
                 "_keep_out_files", "_grader_facts", "write_json", "grade", "_run_agent", "followup_prompt"):
        setattr(trial, name, timed(name, getattr(trial, name)))
    real_capped = trial.disk.capped_folder

    @contextlib.contextmanager
    def capped(folder, size):
        t0 = time.perf_counter()
        cm = real_capped(folder, size)
        reason = cm.__enter__()
        clock["capped:make"] += time.perf_counter() - t0
        try:
            yield reason
        finally:
            t1 = time.perf_counter()
            cm.__exit__(None, None, None)
            clock["capped:remove"] += time.perf_counter() - t1

    trial.disk.capped_folder = capped

    bench = STATE / "bench-trial-phases"
    rows: dict[str, list[dict]] = defaultdict(list)
    for r in range(args.rounds):
        for task in tasks:
            t = runs.make_trial("aider", args.agent, task, args.tries, run="bench-phases")
            t = trial.dataclasses.replace(t, run_dir=bench / "runs" / task, scratch=bench / "scratch" / task)
            clock.clear()
            t0 = time.perf_counter()
            result = trial.run_trial(t)
            total = time.perf_counter() - t0
            if result["status"] == "error":
                sys.exit(f"{task}: error: {result['error']}")
            row = dict(clock)
            row["total"] = total
            row["tries"] = len(result["tries"])
            if r or args.rounds == 1:
                rows[task.split("-", 1)[0]].append(row)
    shutil.rmtree(bench, ignore_errors=True)

    phases = [("lay_work_tree", "setup.sh x2"), ("capped:make", "capped make"), ("capped:remove", "capped rm"),
              ("agent host", "agent host"), ("grade host", "grade host"), ("archive_work", "archive"),
              ("work_diff", "diff"), ("tree_size", "tree_size"), ("remove_special_files", "rm special"),
              ("_keep_out_files", "out files"), ("_grader_facts", "grader facts"), ("write_json", "record"),
              ("followup_prompt", "followup"), ("rest", "rest"), ("other", "OTHER"), ("container:agent", "agent ctr"),
              ("container:grader", "grade ctr"), ("total", "TOTAL")]
    print(f"mean seconds per trial (agent {args.agent}, tries={args.tries}, {args.rounds} rounds, load "
          f"{[round(x, 2) for x in os.getloadavg()]})")
    print(f"{'phase':14}" + "".join(f"{lang:>12}" for lang in rows))
    table = {}
    for lang, rs in rows.items():
        out = {}
        for row in rs:
            row["agent host"] = row.get("_run_agent", 0) - row.get("container:agent", 0)
            row["grade host"] = row.get("grade", 0) - row.get("container:grader", 0)
            row["other"] = row["total"] - row.get("container:agent", 0) - row.get("container:grader", 0)
            timed_sum = sum(row.get(k, 0) for k, _ in phases[:13])
            row["rest"] = row["other"] - timed_sum
        for key, _ in phases:
            out[key] = statistics.mean(r.get(key, 0.0) for r in rs)
        table[lang] = out
    for key, label in phases:
        print(f"{label:14}" + "".join(f"{table[lang][key]:12.4f}" for lang in table))


if __name__ == "__main__":
    main()
