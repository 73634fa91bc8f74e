"""Compare the proofs of two runs task by task: status, test counts and the exact test ids the reference passed.

    python3 benchmarks/compare_ids.py BEFORE AFTER [--langs python,go]

BEFORE and AFTER are each a tier's ``manifest.json`` (its ``status``, ``test_ids`` and the reference's and
stub's test counts), a folder of proofs (``<task>/proof.json`` below it, as ``.lab/build/<tier>/`` or
``python -m rules.tiers.aider`` writes them), or several such folders joined by commas. Only tasks proven in both
are compared. Prints one line per task that differs and a summary; exits 1 when any does. A speed change must leave every line of this unchanged.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _counts(reference: dict | None, stub: dict | None) -> list:
    """The counts a manifest entry shows: the reference's and the stub's ran / passed / failed tests."""
    return [[(g or {}).get(k) for k in ("ran", "passed_tests", "failed_tests")] for g in (reference, stub)]


def load(spec: str) -> dict[str, dict]:
    """task → {"status", "ids"} from a manifest or proof folders (see the module docstring)."""
    out: dict[str, dict] = {}
    for part in spec.split(","):
        path = Path(part)
        if path.is_file():
            for e in json.loads(path.read_text())["tasks"]:
                if e.get("status") not in (None, "unproven"):
                    out[e["task"]] = {"status": e["status"], "ids": sorted(e.get("test_ids") or []),
                                      "counts": _counts(e.get("reference"), e.get("stub"))}
        else:
            for proof in sorted(path.glob("*/proof.json")):
                r = json.loads(proof.read_text())
                out[r["task"]] = {"status": r["status"], "ids": sorted(r.get("tests") or []),
                                  "counts": _counts(r.get("reference"), r.get("stub"))}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--langs", default="", help="comma-separated tracks to compare (default: all)")
    args = ap.parse_args()
    before, after = load(args.before), load(args.after)
    langs = [x for x in args.langs.split(",") if x]
    both = sorted(t for t in before.keys() & after.keys() if not langs or t.split("-", 1)[0] in langs)
    differ = 0
    per_track: dict[str, list[int]] = {}
    for task in both:
        b, a = before[task], after[task]
        track = per_track.setdefault(task.split("-", 1)[0], [0, 0, 0])
        track[0] += 1
        track[1] += len(a["ids"])
        if b != a:
            differ += 1
            track[2] += 1
            lost, gained = sorted(set(b["ids"]) - set(a["ids"])), sorted(set(a["ids"]) - set(b["ids"]))
            counts = f", counts {b['counts']!r} -> {a['counts']!r}" if b["counts"] != a["counts"] else ""
            print(f"DIFF {task}: status {b['status']} -> {a['status']}, tests {len(b['ids'])} -> {len(a['ids'])}"
                  f"{', lost ' + repr(lost[:5]) if lost else ''}{', gained ' + repr(gained[:5]) if gained else ''}"
                  f"{counts}")
    for track, (n, ids, d) in sorted(per_track.items()):
        print(f"{track:11} {n:3} tasks in both, {ids:5} test ids after, {d} differ")
    print(f"{len(both)} tasks compared, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
