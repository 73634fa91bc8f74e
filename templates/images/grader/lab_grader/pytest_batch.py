"""Python batch.sh, as root: each run's JUnit report, cut from its session's.

pytest names a test ``<n>.<module>.<class>::<name>`` where check.sh's run names it ``<module>.<class>::<name>``:
each prepared run's report is the session's JUnit report (``session<k>.xml``) cut down to its own tests with
that ``<n>.`` taken off, in ``/lab/report/<n>/report.xml`` as check.sh would write it, with the session's exit
status beside it; a test no run can be told from is nobody's. A session that left no report gives its runs
none either, as check.sh's would have none.

    python3 -I -m lab_grader.pytest_batch SESSION ...

(each SESSION its runs' numbers, comma-separated, in batch.sh's order).
"""
from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

from lab_grader.batch import Folders, sessions


def own_report(cases: list[ET.Element], n: str) -> ET.ElementTree:
    """A JUnit report of the ``cases`` whose class names start with ``<n>.``, that prefix taken off (the
    elements are moved, changed in place)."""
    root = ET.Element("testsuites")
    suite = ET.SubElement(root, "testsuite", name="pytest")
    for case in cases:
        classname = case.get("classname") or ""
        if classname.startswith(n + "."):
            case.set("classname", classname[len(n) + 1:])
            suite.append(case)
    return ET.ElementTree(root)


def split(k: int, runs: list[str], folders: Folders) -> None:
    """Give each prepared run of session ``k`` (1-based; ``runs``: its runs' numbers) its report and status."""
    runs = [n for n in runs if folders.prepared(n)]
    if not runs:
        return
    status = folders.session_status(k)
    try:
        cases = list(ET.parse(folders.out / f"session{k}.xml").getroot().iter("testcase"))
    except (OSError, ET.ParseError):
        cases = None
    for n in runs:
        if cases is not None:
            own_report(cases, n).write(folders.report / n / "report.xml", encoding="utf-8", xml_declaration=True)
        folders.write_exit(n, status)


def main(argv: list[str], folders: Folders = Folders()) -> None:
    """``SESSION ...``: split every session's report."""
    for k, runs in enumerate(sessions(argv), 1):
        split(k, runs, folders)


if __name__ == "__main__":
    main(sys.argv[1:])
