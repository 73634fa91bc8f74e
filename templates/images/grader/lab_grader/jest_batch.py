"""JavaScript batch.sh, as root: each run's jest report, cut from the batch's one.

jest's ``--json`` report names each test file by its absolute path, so ``/work/<n>/`` tells the runs apart:
each prepared run's report is the batch's report cut down to its own files, in ``/lab/report/<n>/jest.json``
as check.sh would write it, with the runner's exit status beside it. No report (or an unreadable one) gives the
runs none either, as check.sh's would have none.

    python3 -I -m lab_grader.jest_batch JEST_JSON STATUS RUN ...
"""
from __future__ import annotations

import json
import sys

from lab_grader.batch import Folders


def own_suites(suites: list, n: str, folders: Folders) -> list:
    """The test file results of ``suites`` (jest's ``testResults``) whose files are in run ``n``'s tree."""
    prefix = f"{folders.work}/{n}/"
    return [s for s in suites if isinstance(s, dict) and str(s.get("name", "")).startswith(prefix)]


def main(argv: list[str], folders: Folders = Folders()) -> None:
    """``JEST_JSON STATUS RUN ...``: give each prepared run its report and the status."""
    path, status, runs = argv[0], argv[1], argv[2:]
    try:
        suites = json.load(open(path, encoding="utf-8")).get("testResults") or []
    except (OSError, ValueError, AttributeError):
        suites = None
    for n in runs:
        if not folders.prepared(n):
            continue
        if suites is not None:
            with open(folders.report / n / "jest.json", "w", encoding="utf-8") as f:
                json.dump({"testResults": own_suites(suites, n, folders)}, f)
        folders.write_exit(n, status)


if __name__ == "__main__":
    main(sys.argv[1:])
