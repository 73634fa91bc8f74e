"""What the forged-verdict tests (tests/test_honest_<track>.py) share: a fixture exercise rendered and proven,
and a work tree graded with its solution file replaced by an adversarial one."""
from __future__ import annotations

import textwrap

from dataclasses import dataclass
from pathlib import Path

from fixture_upstream import make_upstream


@dataclass(frozen=True)
class Proven:
    """A proven fixture task: its folder (``base/task``, reference in ``base/answer``), the proof record, the
    grading limits and the grader image tag."""

    base: Path
    proof: dict
    limits: object
    image: str

    def __iter__(self):  # (base, proof, limits, image), as the tests unpack it
        return iter((self.base, self.proof, self.limits, self.image))


def prove_fixture(base: Path, exercise: str, image: str, memory: int, timeout: float) -> Proven:
    """Render the fixture upstream's ``exercise`` (``<track>/<slug>``) into ``base`` and prove it with
    ``image``; fails the test unless it is kept."""
    from rules.tiers.aider import exercises as aider
    from rules.config import Limits
    from rules.files import write_atomic
    from rules.prove import prove

    track = exercise.split("/")[0]
    up = make_upstream(base / "up", only=[exercise])
    r = aider.render(aider.discover(up, [track])[0])
    for rel, (data, mode) in r.task_files.items():
        write_atomic(base / "task" / rel, data, mode)
    for rel, (data, mode) in r.answer_files.items():
        write_atomic(base / "answer" / rel, data, mode)
    limits = Limits(cpus=1, memory=memory, pids=256, timeout=timeout)
    proof = prove(base / "task", base / "answer", image=image, limits=limits, meta=r.meta,
                  cache_volume="lab-cache-test", retry_pause=0)
    assert proof["status"] == "kept", proof
    return Proven(base, proof, limits, image)


def grade_solution(proven: Proven, name: str, solution_file: str, solution: str,
                   extra: dict[str, str] | None = None):
    """Grade a fresh work tree of ``proven``'s task whose ``solution_file`` holds ``solution`` and which has
    the ``extra`` files (path → text) besides; returns the Grade (log in ``base/logs/<name>.log``)."""
    from rules.grade import grade
    from rules.worktree import lay_work_tree

    work = proven.base / "work" / name
    lay_work_tree(proven.base / "task", work)
    (work / solution_file).write_text(solution)
    for rel, text in (extra or {}).items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    return grade(proven.base / "task", work, image=proven.image, limits=proven.limits,
                 expected=proven.proof["tests"], log_path=proven.base / "logs" / f"{name}.log")


# Python a graded solution can run at import to flood the report folder check.sh copies to the host as root: a
# file whose name holds a newline, then the name of a link to /dev/zero it left in /work
REPORT_FLOOD = """
import os
for i in range(8):
    try:
        os.symlink("/dev/zero", "/work/zz%d" % i)
        open("/tmp/lab-out/x%d\\nzz%d" % (i, i), "w").write("x")
        os.symlink("/dev/zero", "/tmp/lab-out/link%d.xml" % i)
    except OSError:
        pass
"""


def reports_handed_over(monkeypatch) -> dict[str, int]:
    """Spy on the host's reading of check.sh's report folder (``rules.grade._graded``): the returned dict fills,
    as gradings run, with each handed-over file (path relative to the folder) and its size in bytes."""
    import rules.grade

    seen: dict[str, int] = {}
    original = rules.grade._graded

    def spy(meta, report_dir, **kwargs):
        seen.update({str(p.relative_to(report_dir)): p.stat().st_size
                     for p in Path(report_dir).rglob("*") if p.is_file()})
        return original(meta, report_dir, **kwargs)

    monkeypatch.setattr(rules.grade, "_graded", spy)
    return seen


# A Python solution's forgery from inside pytest's own process: every test's report says passed, and the JUnit
# writer drops failures (the python track's and the swe tier's graders both run pytest in the solution's process).
PYTEST_RUNNER_PATCH = textwrap.dedent('''\
    import _pytest.junitxml, _pytest.reports
    _original = _pytest.reports.TestReport.from_item_and_call.__func__

    def _from_item_and_call(cls, item, call):
        report = _original(cls, item, call)
        report.outcome, report.longrepr = "passed", None
        return report

    _pytest.reports.TestReport.from_item_and_call = classmethod(_from_item_and_call)
    _pytest.junitxml._NodeReporter.append_failure = lambda self, report: None
    ''')
