"""The grader: grade a work tree against a task, in a fresh network-less container.

Tier-agnostic: a task is a folder holding an executable ``check.sh`` (and whatever it reads, e.g.
``workspace/`` with the pristine files). The grader copies the work tree (fresh mtimes) so the original is
never touched, mounts the task read-only at ``/task`` and the copy at ``/work``, runs
``bash /task/check.sh /work`` with no network, and reads the last ``lab-check: ran=N passed=N failed=N``
line. A grade passes only when check.sh exits 0 *and* that line says tests ran and none failed.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rules import sandbox
from rules.config import Limits
from rules.files import copy_tree_fresh

SUMMARY = re.compile(r"^lab-check: ran=(\d+) passed=(\d+) failed=(\d+)\s*$", re.M)
CACHE_TARGET = "/cache"


@dataclass
class Grade:
    """One grading: ``passed`` (bool), test counts (``ran``, ``passed_tests``, ``failed_tests``; zeros when
    no summary line was printed), check.sh's ``exit_code`` (None on timeout), ``timed_out``, ``seconds``
    (wall clock of the container) and its capped ``output``."""

    passed: bool
    ran: int
    passed_tests: int
    failed_tests: int
    exit_code: int | None
    timed_out: bool
    seconds: float
    output: str
    oom_killed: bool = False
    verdict: str = "fail"  # "pass", "fail" or "tampered" (the report shows signs of forging; never a pass)
    evidence: list[str] = field(default_factory=list)  # why the verdict is not "pass": one line per check that tripped

    def to_json(self, with_output: bool = False) -> dict:
        d = asdict(self)
        if not with_output:
            d.pop("output")
        return d


def parse_summary(output: str) -> tuple[int, int, int] | None:
    """The (ran, passed, failed) of the last ``lab-check:`` line in ``output``, or None when there is none."""
    found = SUMMARY.findall(output)
    return tuple(int(x) for x in found[-1]) if found else None


def grade(task_dir: Path, work_tree: Path, *, image: str, limits: Limits, cache_volume: str | None = None,
          log_path: Path | None = None) -> Grade:
    """Grade ``work_tree`` against the task in ``task_dir`` in a fresh container of ``image``.

    ``cache_volume`` (a Docker volume name) is mounted at ``/cache`` for the toolchains' build caches
    (ccache, GOCACHE, cargo target dirs); it is kept per grading purpose so that one party's code cannot
    poison another's builds. Raises SandboxError when the container cannot run at all (missing image, no
    engine): that is an infrastructure error, never a failed grade.
    """
    task_dir = Path(task_dir).resolve()
    with tempfile.TemporaryDirectory(prefix="lab-grade-") as tmp:
        copy = Path(tmp) / "work"
        copy_tree_fresh(Path(work_tree), copy)
        mounts = [sandbox.Mount(str(task_dir), "/task", read_only=True), sandbox.Mount(str(copy), "/work")]
        if cache_volume:
            mounts.append(sandbox.Mount(sandbox.volume(cache_volume), CACHE_TARGET, kind="volume"))
        res = sandbox.run(image, ["bash", "/task/check.sh", "/work"], mounts=mounts, network="none",
                          limits=limits, workdir="/work", labels={"lab.role": "grader"}, log_path=log_path)
        # files written by root in the container must not block the temp folder's removal
        shutil.rmtree(copy, ignore_errors=True)
    counts = parse_summary(res.output) or (0, 0, 0)
    ran, ok, bad = counts
    passed = (res.exit_code == 0 and not res.timed_out and ran > 0 and bad == 0 and ok == ran)
    return Grade(passed=passed, ran=ran, passed_tests=ok, failed_tests=bad, exit_code=res.exit_code,
                 timed_out=res.timed_out, seconds=round(res.seconds, 3), output=res.output,
                 oom_killed=res.oom_killed, verdict="pass" if passed else "fail")
