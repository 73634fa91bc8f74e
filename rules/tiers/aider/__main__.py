"""``python -m rules.tiers.aider UPSTREAM_DIR TRACK [SLUG ...]``: render and prove exercises of one track straight
from an upstream checkout, outside doit, one line each (status, tests the reference ran, seconds, reason) and
the folder of their logs and proofs: a tool for working on a track's templates (README.md, Working on a track).
"""
from __future__ import annotations

import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rules import images
from rules.config import load_suite
from rules.files import write_atomic
from rules.prove import prove
from rules.records import Proof
from rules.tiers.aider import exercises


def prove_one(ex: exercises.Exercise, out_dir: Path, limits) -> tuple[str, str, str, int, float]:
    """Render and prove exercise ``ex`` below ``out_dir/<task>/`` (task/, answer/, proof.json, the logs) with the
    grading ``limits``; returns (task, status, reason, tests the reference ran, seconds)."""
    t0 = time.monotonic()
    try:
        r = exercises.render(ex)
    except exercises.ExerciseError as exc:
        return ex.task, "rejected", str(exc), 0, 0.0
    base = out_dir / ex.task
    for rel, (data, mode) in r.task_files.items():
        write_atomic(base / "task" / rel, data, mode)
    for rel, (data, mode) in r.answer_files.items():
        write_atomic(base / "answer" / rel, data, mode)
    rec = prove(base / "task", base / "answer", image=images.GRADER, limits=limits, meta=r.meta,
                group_keys=exercises.GROUP_KEYS, log_dir=base)
    Proof.from_json(rec, exercises.GROUP_KEYS, base / "proof.json").save(base / "proof.json")
    ran = (rec["reference"] or {}).get("ran", 0)
    return ex.task, rec["status"], rec["reason"], ran, time.monotonic() - t0


def main(argv: list[str]) -> int:
    """The command (``argv``: its arguments); returns its exit status (2: a usage error)."""
    if len(argv) < 2:
        print("usage: python -m rules.tiers.aider UPSTREAM_DIR TRACK [SLUG ...]", file=sys.stderr)
        return 2
    upstream, track, slugs = Path(argv[0]), argv[1], set(argv[2:])
    suite = load_suite("aider")
    chosen = [e for e in exercises.discover(upstream, [track]) if not slugs or e.slug in slugs]
    out_dir = Path(tempfile.mkdtemp(prefix=f"lab-prove-{track}-"))
    t0 = time.monotonic()
    counts: dict[str, int] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for task, status, reason, ran, secs in pool.map(lambda ex: prove_one(ex, out_dir, suite.prove), chosen):
            counts[status] = counts.get(status, 0) + 1
            print(f"{task:45} {status:9} tests={ran:<4} {secs:6.1f}s {reason}", flush=True)
    print(f"{counts} in {time.monotonic() - t0:.0f}s; logs under {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
