"""What the forged-verdict tests (tests/test_honest_<track>.py) share: a fixture exercise rendered and proven,
and a work tree graded with its solution file replaced by an adversarial one."""
from __future__ import annotations

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
    from rules import aider
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
    from rules.prove import lay_work_tree

    work = proven.base / "work" / name
    lay_work_tree(proven.base / "task", work)
    (work / solution_file).write_text(solution)
    for rel, text in (extra or {}).items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    return grade(proven.base / "task", work, image=proven.image, limits=proven.limits,
                 expected=proven.proof["tests"], log_path=proven.base / "logs" / f"{name}.log")
