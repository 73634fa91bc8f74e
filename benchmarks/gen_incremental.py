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
import dataclasses
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


@dataclasses.dataclass(frozen=True)
class Lab:
    """A lab checkout that doit runs from: ``root`` holds its dodo.py, rules/ and templates/ (imported before the
    installed ones), ``grader`` is the grader image tag its homes build and prove with (LAB_GRADER_IMAGE; None:
    as the caller's environment says), so another revision's image never takes this checkout's tag."""
    root: Path = PROJECT
    grader: str | None = None


HERE = Lab()


def doit(home: Path, *args: str, lab: Lab = HERE) -> tuple[float, subprocess.CompletedProcess]:
    """Run ``doit *args`` of checkout ``lab`` in the lab home ``home`` (LAB_HOME); returns (wall seconds, the
    finished process). Exits with doit's output when it fails."""
    env = {**os.environ, "LAB_HOME": str(home), "PYTHONPATH": str(lab.root)}
    if lab.grader:
        env["LAB_GRADER_IMAGE"] = lab.grader
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(lab.root / "dodo.py"), *args], cwd=lab.root,
                          env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"doit {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return seconds, proc


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", *args], cwd=repo,
                          check=True, capture_output=True, text=True).stdout.strip()


def noop_reruns(home: Path, gen_args: list[str], runs: int, lab: Lab = HERE) -> list[float]:
    """Time ``doit gen:aider *gen_args`` (of checkout ``lab``) ``runs`` times in the lab home ``home`` with nothing
    changed (seconds each); stops when one of them proved anything."""
    seconds = []
    for _ in range(runs):
        t, proc = doit(home, "gen:aider", *gen_args, lab=lab)
        assert ".  prove:" not in proc.stdout, "a no-op run proved something"
        seconds.append(t)
    return seconds


def one_change(home: Path, clone: Path, gen_args: list[str], lang: str | None = None, pull: bool = True,
               lab: Lab = HERE) -> dict:
    """The one-change rerun: touch the test file of the first published exercise (of track ``lang``, or any) in
    the upstream clone ``clone``, commit, and time ``doit gen:aider *gen_args`` (of checkout ``lab``) in the lab
    home ``home``: after
    ``doit pull:aider`` of the new commit (``pull``), or with ``ref=`` of it given to gen (its fetch then counted).
    Returns ``{"task", "seconds", "proof_seconds" (that exercise's new proof), "overhead_seconds", "proved"}``."""
    manifest = json.loads((home / "evals/aider/manifest.json").read_text())
    victim = next(e for e in manifest["tasks"] if e["status"] in ("kept", "free") and lang in (None, e["language"]))
    track, slug = victim["language"], victim["exercise"]
    cfg = json.loads((clone / track / "exercises/practice" / slug / ".meta/config.json").read_text())
    test = clone / track / "exercises/practice" / slug / cfg["files"]["test"][0]
    test.write_text(test.read_text() + "\n")
    git(clone, "commit", "-qam", f"benchmark: touch {victim['task']}")
    ref = f"ref={git(clone, 'rev-parse', 'HEAD')}"
    if pull:
        doit(home, "pull:aider", f"upstream={clone}", ref, lab=lab)
    t, proc = doit(home, "gen:aider", *gen_args, *([] if pull else [ref]), lab=lab)
    proved = [line for line in proc.stdout.splitlines() if line.startswith(".  prove:")]
    proof = json.loads((home / ".lab" / "build" / "aider" / victim["task"] / "proof.json").read_text())
    return {"task": victim["task"], "seconds": round(t, 2), "proof_seconds": proof["seconds"],
            "overhead_seconds": round(t - proof["seconds"], 2), "proved": proved}


def clean_up(scratch: Path, keep: bool, volume: str | None = None) -> None:
    """A benchmark's end: remove its docker ``volume`` (if any), and its ``scratch`` folder unless ``keep``
    (then say where it is)."""
    if volume:
        subprocess.run(["docker", "volume", "rm", "-f", volume], capture_output=True)
    if keep:
        print(f"kept {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)


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

    noops = noop_reruns(home, common, args.noop_runs)
    results["noop_seconds_median"] = round(statistics.median(noops), 3)
    print(f"no-op: median {statistics.median(noops):.3f}s of {[round(x, 3) for x in noops]}", flush=True)

    one = one_change(home, clone, common, pull=False)
    results["one_change_seconds"] = one["seconds"]
    results["one_change_proof_seconds"] = one["proof_seconds"]
    results["one_change_overhead_seconds"] = one["overhead_seconds"]
    print(f"one change ({one['task']}): {one['seconds']:.2f}s, of which its proof {one['proof_seconds']:.2f}s, "
          f"overhead {one['overhead_seconds']:.2f}s; proved again: {one['proved']}", flush=True)
    print(json.dumps(results, indent=2))
    clean_up(scratch, args.keep)

if __name__ == "__main__":
    main()
