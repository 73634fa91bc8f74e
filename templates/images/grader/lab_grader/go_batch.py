"""Go batch.sh, as root: each run's ``go test -json`` events, cut from its session's.

go test builds and runs each package's test binary apart and tags every event with the package's import path,
which is the run's module path (lab batches only runs whose module paths differ; rules/prove.py): each prepared
run's report is the session's events (``session<k>.json``) of its own package, in
``/lab/report/<n>/go-test.json`` as check.sh would write it, with the session's exit status beside it. A
session that left no report gives its runs none either, as check.sh's would have none.

    python3 -I -m lab_grader.go_batch SESSION ...

(each SESSION its runs' numbers, comma-separated, in batch.sh's order).
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from lab_grader.batch import Folders, sessions

MODULE = re.compile(r"^module\s+\"?([^\s\"]+)", re.M)


def module_path(go_mod: Path) -> str | None:
    """The module path a go.mod declares (None: none)."""
    m = MODULE.search(go_mod.read_text(encoding="utf-8"))
    return m.group(1) if m else None


def owners(lines: list[str], module: dict) -> dict:
    """Run → the event ``lines`` of its package (their newlines kept), by ``module`` (module path → run); a
    line that is not an event of one of them is nobody's."""
    mine: dict[str, list[str]] = {}
    for line in lines:
        try:
            event = json.loads(line)
            owner = module.get(event.get("Package") or event.get("ImportPath"))
        except (ValueError, AttributeError):
            owner = None
        if owner is not None:
            mine.setdefault(owner, []).append(line)
    return mine


def split(k: int, runs: list[str], folders: Folders) -> None:
    """Give each prepared run of session ``k`` (1-based; ``runs``: its runs' numbers) its events and status."""
    runs = [n for n in runs if folders.prepared(n)]
    if not runs:
        return
    status = folders.session_status(k)
    module = {module_path(folders.work / n / "go.mod"): n for n in runs}
    try:
        lines = (folders.out / f"session{k}.json").read_text(encoding="utf-8", errors="replace").splitlines(True)
    except OSError:
        lines = None
    mine = owners(lines or [], module)
    for n in runs:
        if lines is not None:
            with open(folders.report / n / "go-test.json", "w", encoding="utf-8") as f:
                f.writelines(mine.get(n, []))
        folders.write_exit(n, status)


def main(argv: list[str], folders: Folders = Folders()) -> None:
    """``SESSION ...``: split every session's events."""
    for k, runs in enumerate(sessions(argv), 1):
        split(k, runs, folders)


if __name__ == "__main__":
    main(sys.argv[1:])
