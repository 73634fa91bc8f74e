"""The suspicion scan on real data: flags and cost on every reference of the polyglot benchmark and every gold
patch of SWE-bench Lite, with this checkout's tables, and optionally against another revision's in the same run.

    python3 benchmarks/scan_real.py [--upstream /work/scratch/polyglot] [--lite /path/swe-bench-lite.jsonl]
        [--against main] [--rounds 5] [--json]

Each exercise's reference is laid over its workspace and diffed against the workspace (``diff -ruN``, as a
trial's graded change: ``rules.worktree.work_diff``) and scanned with the aider tier's table of its track; each
gold patch (the dataset's ``patch`` field, read in place) is scanned with the swe tier's table. The diffs are
built once, then only ``rules.scan.scan`` is timed: ``--rounds`` passes over all of them, the fastest kept (s).

With ``--against REV`` the rules package of git revision REV (``git archive``) scans the very same diffs in a
child process, the two sides alternating round by round, so the ratio new / old is taken under one load. Prints
every flag (task, name, file:line, text) of each side, the counts and the timings; exits 0 either way (a flag on
real data is a finding to read, not an error of this script).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UPSTREAMS = ("/work/scratch/polyglot", "/work/polyglot")
LITES = ("/work/shared/data/swe-bench-lite.jsonl",)


def build_diffs(upstream: Path | None, lite: Path | None) -> list[dict]:
    """The graded changes to scan: ``[{"tier": "aider"|"swe", "task", "language" (aider: the track), "diff"}]``,
    the references (rendered as ``rules.tiers.aider.exercises.render`` lays them) then the gold patches."""
    from rules.tiers.aider.exercises import TRACKS, ExerciseError, discover, reference_diff, render

    out: list[dict] = []
    if upstream is not None:
        for ex in discover(upstream, sorted(TRACKS)):
            try:
                rendered = render(ex)
            except ExerciseError as e:
                print(f"skipped {ex.task}: {e}", file=sys.stderr)
                continue
            diff = reference_diff(rendered)
            out.append({"tier": "aider", "task": ex.task, "language": ex.track, "diff": diff})
    if lite is not None:
        for line in lite.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                out.append({"tier": "swe", "task": r["instance_id"], "language": "python", "diff": r["patch"]})
    return out


def tables() -> dict[tuple[str, str], tuple]:
    """(tier, language) → the table that tier scans such a change with, from the ``rules`` package imported."""
    from rules.tiers.aider.suspicions import TABLE
    from rules.tiers.swe.suspicions import PYTHON

    return {**{("aider", lang): t for lang, t in TABLE.items()}, ("swe", "python"): PYTHON}


def scan_all(diffs: list[dict], rounds: int) -> dict:
    """Scan every diff ``rounds`` times: ``{"flags": [[task, flag], ...], "seconds": [one per round]}``."""
    from rules.scan import scan

    table = tables()
    flags, seconds = [], []
    for r in range(rounds):
        t0 = time.perf_counter()
        found = [(d["task"], f) for d in diffs for f in scan(d["diff"], table[(d["tier"], d["language"])])]
        seconds.append(time.perf_counter() - t0)
        if r == 0:
            flags = found
    return {"flags": flags, "seconds": seconds}


def _run_child(src: Path, diffs_file: Path, rounds: int) -> dict:
    """The old side of ``--against``: this script with ``--child``, the ``rules`` package of ``src`` first on its
    path, scanning the diffs of ``diffs_file``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(diffs_file),
                          "--rounds", str(rounds)], env=env, cwd=src, check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    return json.loads(out)


def summary(side: str, diffs: list[dict], res: dict) -> None:
    by_tier = {t: sum(1 for d in diffs if d["tier"] == t) for t in ("aider", "swe")}
    tier_of = {d["task"]: d["tier"] for d in diffs}
    counts = {t: sum(1 for task, _f in res["flags"] if tier_of[task] == t) for t in by_tier}
    tasks = {t: len({task for task, _f in res["flags"] if tier_of[task] == t}) for t in by_tier}
    print(f"[{side}] references: {by_tier['aider']}, flags {counts['aider']} on {tasks['aider']}; "
          f"gold patches: {by_tier['swe']}, flags {counts['swe']} on {tasks['swe']}; "
          f"scan time (fastest of {len(res['seconds'])}): {min(res['seconds']):.3f} s")
    for task, f in res["flags"]:
        print(f"  {task}: {f['name']} {f['file']}:{f['line']}: {f['text']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", type=Path, default=next((Path(p) for p in UPSTREAMS if Path(p).is_dir()), None))
    ap.add_argument("--lite", type=Path, default=next((Path(p) for p in LITES if Path(p).is_file()), None))
    ap.add_argument("--against", help="a git revision whose rules package scans the same diffs (old side)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print a JSON summary last")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # the old side of --against: diffs.json to scan
    args = ap.parse_args(argv)
    if args.child:
        json.dump(scan_all(json.loads(Path(args.child).read_text()), args.rounds), sys.stdout)
        return 0
    sys.path.insert(0, str(ROOT))
    diffs = build_diffs(args.upstream, args.lite)
    if not diffs:
        print("nothing to scan: no --upstream checkout and no --lite dataset found", file=sys.stderr)
        return 2
    new = {"flags": [], "seconds": []}
    old = {"flags": [], "seconds": []} if args.against else None
    with tempfile.TemporaryDirectory(prefix="lab-scanreal-") as tmp:
        if args.against:
            archive = Path(tmp) / "rules.tar"
            subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), args.against, "rules"], check=True)
            with tarfile.open(archive) as tar:
                tar.extractall(Path(tmp) / "old")
            (Path(tmp) / "diffs.json").write_text(json.dumps(diffs))
        for _ in range(args.rounds):  # one round a side at a time, alternating: one load for both
            r = scan_all(diffs, 1)
            new["flags"] = new["flags"] or r["flags"]
            new["seconds"] += r["seconds"]
            if old is not None:
                r = _run_child(Path(tmp) / "old", Path(tmp) / "diffs.json", 1)
                old["flags"] = old["flags"] or r["flags"]
                old["seconds"] += r["seconds"]
    if old is not None:
        summary(f"old: {args.against}", diffs, old)
    summary("new: this checkout", diffs, new)
    key = lambda tf: (tf[0], tf[1]["name"], tf[1]["file"], tf[1]["line"])  # noqa: E731
    result = {"scanned": len(diffs), "new_seconds": min(new["seconds"]), "new_flags": len(new["flags"])}
    if old is not None:
        added = sorted(set(map(key, new["flags"])) - set(map(key, old["flags"])))
        ratio = min(new["seconds"]) / min(old["seconds"])
        print(f"flags new here and not at {args.against}: {len(added)}" + "".join(f"\n  {a}" for a in added))
        print(f"scan time new / old: {min(new['seconds']):.3f} / {min(old['seconds']):.3f} s = {ratio:.2f}")
        result.update(old_seconds=min(old["seconds"]), old_flags=len(old["flags"]), added_flags=len(added),
                      ratio=round(ratio, 3))
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
