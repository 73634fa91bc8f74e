"""Compare a ``noop`` run over the published tasks with a plain script's stub pass of the same tasks, in ONE
invocation (issue 10: "a ``noop`` run over all published tasks at most 1.1 x the plain script's stub pass").

    python3 benchmarks/noop_vs_plain.py --upstream /path/to/polyglot-benchmark
        [--langs python,go,javascript,java,rust,cpp] [--limit N] [--jobs 2] [--keep]

Per track, one after the other, in a scratch lab home of its own on a scratch clone of the upstream (as
benchmarks/prove_vs_plain.py does, whose helpers this imports): ``doit gen:aider langs=<track> limit=N`` (not
counted) publishes the track's kept and free tasks; then, timed:
  - lab, tries=2: ``doit run agent=noop jobs=J`` (lab's default tries): per task a fresh work tree, the agent's
    container running ``true``, a fresh grader container grading the work tree with check.sh (canaries, the
    pristine files laid back, report parsing); the stub fails, so a second agent container and a second grading
    of the same tree; then the report. The runs folder is removed before, so every trial runs;
  - lab, tries=1: the same with ``tries=1`` (one agent container and one grading per task);
  - plain: each published task's stub work tree (laid by its setup.sh), one container of the same grader image
    per task running the track's plain test command (``prove_vs_plain.plain_command``: as root, no canaries, no
    report parsing), with the grading's limits, ``--jobs`` workers, its build caches in a scratch volume of its
    own. Interleaved with lab's runs, so a change of the machine's load hits both sides: plain (cold caches),
    lab tries=2, plain, lab tries=1, plain. The plain figure is the mean of the two warm passes (their caches
    hit as lab's grading cache, warmed by the proofs, does); the cold pass gives the "cold" ratios beside.
It prints per track and in total the wall clocks, the ratios lab / plain (tries=2 and tries=1; below 1 means
lab is faster), where a trial's time goes (mean agent, grading and other seconds per trial from result.json,
against a plain container's mean seconds), and the load average before and after each; a JSON summary at the
end. The total is the sum of the tracks' wall clocks. Only the ratios mean much on a shared, loaded machine.

Measured on 2 cores shared with another job (load 1 to 8.6), jobs=2, upstream 7e0611e, lab at fcf7213:

all=1, 224 published tasks (225 exercises, go-counter rejected; 5 free), lab's runs before the plain passes
(the first version of this script, not interleaved: java's and rust's plain passes ran in a load spike to 8.6,
which flatters lab there):

    track       tasks  lab tries=2  tries=1   plain (cold)     ratio 2 / 1   cold ratio 2 / 1
    python         34      41.7 s    20.5 s   10.4 s (10.7)    4.01 / 1.97    3.91 / 1.92
    go             38      48.5 s    27.4 s   12.0 s (31.6)    4.04 / 2.29    1.53 / 0.87
    javascript     49      96.0 s    50.7 s   36.2 s (43.7)    2.65 / 1.40    2.20 / 1.16
    java           47     139.8 s    54.4 s   91.6 s (103.7)   1.53 / 0.59    1.35 / 0.52
    rust           30      52.6 s    27.1 s   37.6 s (24.2)    1.40 / 0.72    2.17 / 1.12
    cpp            26      58.8 s    29.2 s   16.0 s (20.6)    3.68 / 1.83    2.86 / 1.42
    total         224     437.4 s   209.4 s  203.8 s (234.4)   2.15 / 1.03    1.87 / 0.89
    load average before [1.05, 1.56, 2.86], after [4.42, 5.33, 5.11]

Per trial (means, tries=1): agent container 0.21-0.31 s, grading 0.64 (python), 0.84 (go), 1.47 (javascript),
1.91 (java), 1.20 (rust), 1.67 s (cpp), other (setup.sh twice, the disk-capped scratch, archive, diff, record)
0.11-0.23 s; a plain container 0.56, 0.58, 1.40, 3.83, 2.30, 1.19 s. tries=2 doubles the agent containers and
the gradings (every noop stub fails its first try). doit's own part: 0.45-0.54 s for a `doit run agent=noop`
with every trial current (start, up-to-date checks, report), about 1.2-3.2 s of wall per run beyond the
trials' seconds / jobs.

limit=15, 89 published tasks (go-counter rejected; none free), this version (interleaved; plain = the mean of
its two warm passes, both given), load average before [4.57, 5.09, 5.07], after [2.46, 3.66, 4.47]:

    track       tasks  lab tries=2  tries=1   plain [passes]   (cold)    ratio 2 / 1   cold ratio 2 / 1
    python         15      11.6 s     6.3 s    3.3 s [3.5, 3.1]   (3.1)   3.54 / 1.92    3.72 / 2.02
    go             14      12.6 s     6.8 s    3.2 s [3.2, 3.3]  (15.3)   3.92 / 2.11    0.83 / 0.45
    javascript     15      20.7 s    10.9 s    7.6 s [7.8, 7.5]  (10.2)   2.71 / 1.43    2.03 / 1.07
    java           15      34.7 s    18.2 s   18.3 s [18.0, 18.7] (19.0)  1.89 / 0.99    1.83 / 0.96
    rust           15      16.8 s     9.0 s    7.5 s [7.3, 7.7]   (7.8)   2.24 / 1.20    2.16 / 1.15
    cpp            15      23.1 s    11.8 s    8.1 s [8.1, 8.2]   (8.3)   2.83 / 1.46    2.77 / 1.43
    total          89     119.5 s    63.0 s   48.1 s             (63.7)   2.49 / 1.31    1.88 / 0.99

Per trial there (tries=1): agent container 0.19-0.23 s, grading 0.43 / 0.56 / 1.05 / 1.89 / 0.80 / 1.16 s
(python, go, javascript, java, rust, cpp), other 0.10-0.12 s; a plain container 0.40 / 0.42 / 0.92 / 2.32 /
0.97 / 1.05 s. (The go cold pass includes seeding the plain cache from the image's Go cache, ~12 s under load.)
The first 10 per track (59 tasks, first version, lab before plain) gave 2.76 / 1.54 in total.

So issue 10's 1.1 x is not met with lab's default tries=2 (2.1-2.5 x): a noop trial's stub fails, so it pays a
second agent container and a second grading of the very same work tree; with tries=1 it is about 1.0-1.3 x
in total (below 1 for java, whose grading has class-data sharing, above 1.4 for python, go, javascript and
cpp, where the agent container and lab's own per-trial work are a large part of a short test run, and cpp's
canaries, appended to the test file under fresh names, make every grading compile it: no ccache hit).
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_incremental import HERE, Lab, clean_up, doit, git  # noqa: E402  (benchmarks/ is the script's folder)
from prove_vs_plain import plain_command  # noqa: E402

PLAIN_VOLUME = "lab-bench-nvp-cache"  # the plain script's build caches (its own: another benchmark may run)

ALL_TRACKS = "python,go,javascript,java,rust,cpp"


def load() -> list[float]:
    """The 1, 5 and 15 minute load averages, rounded."""
    return [round(x, 2) for x in os.getloadavg()]


def plain_stubs(tasks: list[Path], jobs: int, image: str) -> tuple[float, list[dict]]:
    """The plain script's stub pass over the published task folders ``tasks``: each task's stub work tree (laid
    by its setup.sh) in one container of ``image`` running ``plain_command``, ``jobs`` at once. Returns (wall
    seconds, one ``{"task", "exit_code", "timed_out", "seconds"}`` per task)."""
    from rules import sandbox
    from rules.config import Limits
    from rules.worktree import lay_work_tree

    limits = Limits(cpus=1.0, memory=4 * 1024**3, pids=1024, timeout=600)  # lab's grading limits ([prove])
    scratch = Path(tempfile.mkdtemp(prefix="lab-bench-nvp-"))
    runs = []
    for task_dir in tasks:
        meta = json.loads((task_dir / "task.json").read_text())
        tree = scratch / task_dir.name
        lay_work_tree(task_dir, tree)
        runs.append((task_dir.name, tree, plain_command(meta["language"], meta["exercise"], meta["test_files"])))

    def one(run):
        name, tree, command = run
        res = sandbox.run(image, ["bash", "-c", command], mounts=[
            sandbox.Mount(str(tree), "/src", read_only=True),
            sandbox.Mount(sandbox.volume(PLAIN_VOLUME), "/cache", kind="volume")],
            network="none", limits=limits, workdir="/", labels={"lab.role": "bench"},
            tmpfs={"/work": "size=2g,exec", "/tmp": "size=2g,exec"})
        return {"task": name, "exit_code": res.exit_code, "timed_out": res.timed_out, "seconds": round(res.seconds, 3)}

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        done = list(pool.map(one, runs))
    seconds = time.monotonic() - start
    shutil.rmtree(scratch, ignore_errors=True)
    return seconds, done


def lab_run(home: Path, tries: int, jobs: int, published: list[dict], lab: Lab = HERE) -> dict:
    """Time ``doit run agent=noop jobs=J`` of checkout ``lab`` (``tries=`` given only when not lab's default 2)
    from an empty runs folder, check every published task got a result (exits when one has none), and return
    ``{"seconds", "trials", "per_trial": {agent, grading, other, trial} (mean seconds), "agent_containers",
    "gradings", "unexpected"}``
    (``unexpected``: trials whose status is not a noop's, pass exactly for the free tasks; said on stderr)."""
    runs = home / "evals" / "aider" / "runs" / "noop"
    shutil.rmtree(runs, ignore_errors=True)
    args = ["run", "agent=noop", f"jobs={jobs}"] + ([f"tries={tries}"] if tries != 2 else [])
    seconds, _ = doit(home, *args, lab=lab)
    results = {}
    for e in published:
        p = runs / e["task"] / "result.json"
        if not p.is_file():
            sys.exit(f"doit run agent=noop tries={tries}: no result for {e['task']} ({p})")
        results[e["task"]] = json.loads(p.read_text())
    wrong = [t for t, r in results.items() if r["status"] != ("pass" if next(
        e for e in published if e["task"] == t)["status"] == "free" else "fail")]
    if wrong:  # said and recorded, not fatal: the other tracks' figures still count
        print(f"noop tries={tries}: unexpected statuses {[(t, results[t]['status']) for t in wrong][:5]}: this "
              "track's timing is not a clean noop run's", file=sys.stderr, flush=True)
    rs = list(results.values())
    mean = lambda k: statistics.fmean(r[k] for r in rs)  # noqa: E731
    per = {"trial": mean("seconds"), "agent": mean("agent_seconds"), "grading": mean("grading_seconds")}
    per["other"] = per["trial"] - per["agent"] - per["grading"]
    return {"seconds": round(seconds, 2), "trials": len(rs), "per_trial": {k: round(v, 3) for k, v in per.items()},
            "agent_containers": sum(len(r["tries"]) for r in rs),
            "gradings": sum(1 for r in rs for t in r["tries"] if t.get("grade") is not None
                                  and not t["grade"].get("reused_from_try")),
            "unexpected": sorted(f"{t}: {results[t]['status']}" for t in wrong)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", required=True, help="a local clone of the polyglot benchmark (not modified)")
    ap.add_argument("--langs", default=ALL_TRACKS, help=f"comma-separated tracks (default {ALL_TRACKS})")
    ap.add_argument("--limit", type=int, default=0, help="exercises per track (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args()
    langs = [x.strip() for x in args.langs.split(",") if x.strip()]
    if args.jobs < 1 or args.limit < 0:
        sys.exit("--jobs must be 1 or more and --limit 0 (all) or more")
    os.environ["PYTHONPATH"] = str(PROJECT)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

    from rules import images

    scratch = Path(tempfile.mkdtemp(prefix="lab-bench-nvp-"))
    clone = scratch / "upstream"
    subprocess.run(["git", "clone", "-q", args.upstream, str(clone)], check=True)
    head = git(clone, "rev-parse", "HEAD")
    select = ["all=1"] if not args.limit else [f"limit={args.limit}"]
    results: dict = {"image": images.GRADER, "jobs": args.jobs, "limit": args.limit or "all", "upstream": head,
                     "tracks": {}, "load_before": load()}
    subprocess.run(["docker", "volume", "rm", "-f", PLAIN_VOLUME], capture_output=True)
    try:
        for lang in langs:
            home = scratch / f"home-{lang}"
            (home / "evals" / "aider").mkdir(parents=True)
            shutil.copy(PROJECT / "evals" / "aider" / "suite.toml", home / "evals" / "aider" / "suite.toml")
            shutil.copy(PROJECT / "evals" / "agents.toml", home / "evals" / "agents.toml")
            doit(home, "image:grader")
            doit(home, "pull:aider", f"upstream={clone}", f"ref={head}")
            t_gen, _ = doit(home, "gen:aider", *select, f"langs={lang}", f"jobs={args.jobs}")
            doit(home, "agent_image:noop")  # built (or found) before the clock starts
            manifest = json.loads((home / "evals" / "aider" / "manifest.json").read_text())
            published = [e for e in manifest["tasks"] if e.get("published")]
            if not published:
                print(f"{lang:11} no published task; skipped", flush=True)
                continue
            row: dict = {"tasks": len(published), "free": sum(e["status"] == "free" for e in published),
                         "gen_seconds": round(t_gen, 1), "load_before": load()}
            task_dirs = [home / "evals" / "aider" / "tasks" / e["task"] for e in published]
            # interleaved, so a change of the machine's load hits both sides: plain (cold caches), lab tries=2,
            # plain, lab tries=1, plain; the plain figure is the mean of the two warm passes
            t_warm, _ = plain_stubs(task_dirs, args.jobs, images.GRADER)
            row["lab_tries2"] = lab_run(home, 2, args.jobs, published)
            t_a, plain = plain_stubs(task_dirs, args.jobs, images.GRADER)
            row["lab_tries1"] = lab_run(home, 1, args.jobs, published)
            t_b, plain_b = plain_stubs(task_dirs, args.jobs, images.GRADER)
            t_plain = (t_a + t_b) / 2
            row["plain"] = {"seconds": round(t_plain, 2), "passes": [round(t_a, 2), round(t_b, 2)],
                            "warm_up_seconds": round(t_warm, 2),
                            "per_run": round(statistics.fmean(p["seconds"] for p in plain + plain_b), 3),
                            "exit_0": sorted(p["task"] for p in plain if p["exit_code"] == 0),
                            "timed_out": sorted(p["task"] for p in plain + plain_b if p["timed_out"])}
            row["ratio_tries2"] = round(row["lab_tries2"]["seconds"] / t_plain, 3)
            row["ratio_tries1"] = round(row["lab_tries1"]["seconds"] / t_plain, 3)
            # against the first (cold-cache) plain pass too: a plain script run once pays it
            row["ratio_tries2_cold"] = round(row["lab_tries2"]["seconds"] / t_warm, 3)
            row["ratio_tries1_cold"] = round(row["lab_tries1"]["seconds"] / t_warm, 3)
            row["load_after"] = load()
            results["tracks"][lang] = row
            l2, l1, p2 = row["lab_tries2"], row["lab_tries1"], row["lab_tries2"]["per_trial"]
            print(f"{lang:11} {len(published):3} tasks ({row['free']} free): lab tries=2 {l2['seconds']:7.1f}s "
                  f"tries=1 {l1['seconds']:7.1f}s  plain {t_plain:7.1f}s {row['plain']['passes']}  ratio "
                  f"{row['ratio_tries2']:.2f} / {row['ratio_tries1']:.2f} (cold plain {t_warm:.1f}s: "
                  f"{row['ratio_tries2_cold']:.2f} / {row['ratio_tries1_cold']:.2f})  | per trial (tries=2) "
                  f"{p2['trial']:.2f}s = agent {p2['agent']:.2f} + grading {p2['grading']:.2f} + other "
                  f"{p2['other']:.2f}; "
                  f"tries=1 {l1['per_trial']['trial']:.2f}s; "
                  f"plain per run {row['plain']['per_run']:.2f}s  | load {row['load_before']} -> {row['load_after']}"
                  + (f"  (plain exit 0: {row['plain']['exit_0']})" if row["plain"]["exit_0"] else ""), flush=True)
        rows = results["tracks"].values()
        total = {k: round(sum(r[k]["seconds"] for r in rows), 2) for k in ("lab_tries2", "lab_tries1", "plain")}
        total["plain_cold"] = round(sum(r["plain"]["warm_up_seconds"] for r in rows), 2)
        total["tasks"] = sum(r["tasks"] for r in rows)
        total["ratio_tries2"] = round(total["lab_tries2"] / total["plain"], 3) if total["plain"] else None
        total["ratio_tries1"] = round(total["lab_tries1"] / total["plain"], 3) if total["plain"] else None
        for tries in (2, 1):
            total[f"ratio_tries{tries}_cold"] = (round(total[f"lab_tries{tries}"] / total["plain_cold"], 3)
                                                 if total["plain_cold"] else None)
        results["total"] = total
        results["load_after"] = load()
        print(f"total       {total['tasks']:3} tasks: lab tries=2 {total['lab_tries2']:.1f}s tries=1 "
              f"{total['lab_tries1']:.1f}s  plain {total['plain']:.1f}s  ratio {total['ratio_tries2']} / "
              f"{total['ratio_tries1']} (cold plain {total['plain_cold']:.1f}s: {total['ratio_tries2_cold']} / "
              f"{total['ratio_tries1_cold']})  (load average before {results['load_before']}, after "
              f"{results['load_after']}: other work on the machine)", flush=True)
        print(json.dumps(results, indent=2))
    finally:
        clean_up(scratch, args.keep, PLAIN_VOLUME)


if __name__ == "__main__":
    main()
