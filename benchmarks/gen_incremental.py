"""Measure `doit gen:aider`: the cold proof of a tier, the no-op rerun, and the rerun after one exercise changed.

    python3 benchmarks/gen_incremental.py --upstream /path/to/polyglot-benchmark [--langs go,python] [--limit N]

Works in a scratch lab home (LAB_HOME) on a scratch clone of the upstream, so the project's own state is not
touched. The grader image is built (or found) first and not counted. Targets from issue 2, on 2 cores: cold
proof of all 225 exercises within ~550 s; no-op under 0.5 s; one changed exercise costs its own proof plus
under 0.5 s. Prints one line per measurement and a JSON summary; compares in one run, not against constants
from another machine.
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


def doit(home: Path, *args: str) -> tuple[float, subprocess.CompletedProcess]:
    env = {**os.environ, "LAB_HOME": str(home)}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(PROJECT / "dodo.py"), *args], cwd=home,
                          env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"doit {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return seconds, proc


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", *args], cwd=repo,
                          check=True, capture_output=True, text=True).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", required=True, help="a local clone (or git URL) of the polyglot benchmark")
    ap.add_argument("--langs", default="", help="comma-separated tracks (default: all)")
    ap.add_argument("--limit", type=int, default=0, help="exercises per track (default: all)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--noop-runs", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="lab-bench-gen-"))
    clone = scratch / "upstream"
    subprocess.run(["git", "clone", "-q", args.upstream, str(clone)], check=True)
    home = scratch / "home"
    (home / "evals" / "aider").mkdir(parents=True)
    suite = (PROJECT / "evals" / "aider" / "suite.toml").read_text()
    (home / "evals" / "aider" / "suite.toml").write_text(suite)
    head = git(clone, "rev-parse", "HEAD")
    select = ["all=1"] if not args.limit else [f"limit={args.limit}"]
    if args.langs:
        select.append(f"langs={args.langs}")
    common = [*select, f"jobs={args.jobs}"]
    results: dict[str, float] = {}

    t, _ = doit(home, "image:grader")
    print(f"grader image (not counted): {t:.1f}s", flush=True)
    t, _ = doit(home, "pull:aider", f"upstream={clone}", f"ref={head}")
    t, proc = doit(home, "gen:aider", *common)
    manifest = json.loads((home / "evals/aider/manifest.json").read_text())
    proven = [e for e in manifest["tasks"] if e["status"] != "unproven"]
    results["cold_seconds"] = round(t, 2)
    results["exercises"] = len(proven)
    print(f"cold: {t:.1f}s for {len(proven)} exercises: {manifest['counts']}", flush=True)

    noops = []
    for _ in range(args.noop_runs):
        t, proc = doit(home, "gen:aider", *common)
        assert ".  prove:" not in proc.stdout, "a no-op run proved something"
        noops.append(t)
    results["noop_seconds_median"] = round(statistics.median(noops), 3)
    print(f"no-op: median {statistics.median(noops):.3f}s of {[round(x, 3) for x in noops]}", flush=True)

    victim = next(e for e in proven if e["status"] in ("kept", "free"))
    lang, slug = victim["language"], victim["exercise"]
    cfg = json.loads((clone / lang / "exercises/practice" / slug / ".meta/config.json").read_text())
    test = clone / lang / "exercises/practice" / slug / cfg["files"]["test"][0]
    test.write_text(test.read_text() + "\n")
    git(clone, "commit", "-qam", f"benchmark: touch {victim['task']}")
    t, proc = doit(home, "gen:aider", *common, f"ref={git(clone, 'rev-parse', 'HEAD')}")
    proved = [line for line in proc.stdout.splitlines() if line.startswith(".  prove:")]
    proof = json.loads((home / ".lab/build/aider" / victim["task"] / "proof.json").read_text())
    results["one_change_seconds"] = round(t, 2)
    results["one_change_proof_seconds"] = proof["seconds"]
    results["one_change_overhead_seconds"] = round(t - proof["seconds"], 2)
    print(f"one change ({victim['task']}): {t:.2f}s, of which its proof {proof['seconds']:.2f}s, "
          f"overhead {t - proof['seconds']:.2f}s; proved again: {proved}", flush=True)
    print(json.dumps(results, indent=2))
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    else:
        print(f"kept {scratch}")


if __name__ == "__main__":
    main()
