"""What the batch splitters share (pytest_batch, go_batch, jest_batch): the batch container's folders.

A track's batch.sh (a batch proof: trusted code only) runs one runner start per session over every prepared
run's tree; a splitter then cuts the session's report into each run's, where check.sh would have written it,
with the session's exit status beside it (rules/grade.py: BATCH_DRIVER, grade_batch).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Folders:
    """The batch container's folders (tests: scratch ones): ``report`` (root's: ``<n>.prepared``, check.sh's
    exit status preparing run ``n``, and ``<n>/``, that run's report folder), ``out`` (the session reports the
    runner wrote), ``tmp`` (batch.sh's ``lab-session<k>.status``) and ``work`` (the prepared trees ``<n>/``)."""

    report: Path = Path("/lab/report")
    out: Path = Path("/tmp/lab-out")
    tmp: Path = Path("/tmp")
    work: Path = Path("/work")

    def prepared(self, n: str) -> bool:
        """True when check.sh prepared run ``n`` (exit status 0). Raises OSError when it left no status."""
        return (self.report / f"{n}.prepared").read_text().strip() == "0"

    def session_status(self, k: int) -> str:
        """The exit status of session ``k``'s runner (1-based), as batch.sh wrote it."""
        return (self.tmp / f"lab-session{k}.status").read_text().strip()

    def write_exit(self, n: str, status: str) -> None:
        """Write ``status`` as run ``n``'s runner exit status, as check.sh's ``finish`` does."""
        (self.report / n / "exit").write_text(status + "\n")


def sessions(argv: list[str]) -> list[list[str]]:
    """The sessions named on a command line: one argument each, its runs' numbers comma-separated."""
    return [arg.split(",") if arg else [] for arg in argv]
