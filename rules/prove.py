"""Proving a task before it is kept: the reference solution must pass ``check.sh`` and the untouched stub
is graded too.

Statuses: ``kept`` (reference passes, stub fails), ``free`` (both pass: a refactoring exercise whose stub
passes by design; kept but flagged), ``rejected`` (with a reason: the reference fails, runs no tests, or
times out; or the exercise is malformed and could not be rendered).

A tier may offer a tool that proves its tasks outside doit (``python -m rules.tiers.aider UPSTREAM TRACK``).
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from rules.config import Limits
from rules.grade import BatchRun, Grade, grade, grade_batch, grade_proof
from rules.records import Proof, TaskMeta
from rules.worktree import lay_work_tree

CACHE_VOLUME = "lab-cache-prove"








RUNNER_KILLED = (124, 137)  # `timeout` ran out (124), or the runner was killed (137: its timeout's KILL)
ENVIRONMENT_RETRY_PAUSE = 5.0  # seconds to wait before proving again after a timeout or out-of-memory kill


def environmental(g: Grade) -> str | None:
    """``"timeout"`` or ``"out of memory"`` when a grading ended because of the machine rather than the code
    (the container or the runner ran out of time, or memory), else None."""
    if g.oom_killed:
        return "out of memory"
    if g.timed_out or (g.runner_exit in RUNNER_KILLED and not g.passed):
        return "timeout"
    return None


def _reason(g: Grade) -> str:
    kind = environmental(g)
    if kind == "timeout":
        return "timeout: the reference solution's tests did not finish in time"
    if kind == "out of memory":
        return "out of memory: the reference solution's tests were killed for memory"
    if g.ran == 0:  # the first evidence says why: a refusal of check.sh's, a build that failed, no report
        return "reference ran no tests" + (f" ({g.evidence[0][:300]})" if g.evidence else "")
    if g.failed_tests:
        return f"reference fails: {g.failed_tests} of {g.ran} tests failed"
    return "reference fails: " + "; ".join(g.evidence)[:600]


def prove(task_dir: Path, answer_dir: Path, *, image: str, limits: Limits, meta: dict,
          group_keys: tuple[str, ...] = (), cache_volume: str = CACHE_VOLUME, log_dir: Path | None = None,
          retry_pause: float = ENVIRONMENT_RETRY_PAUSE) -> dict:
    """Prove one rendered task. Returns the proof record (``rules.records.Proof``'s data, see evals/README.md,
    "proof"): ``{"version", "task", <groups>, "status", "reason", "environmental", "tests", "reference", "stub",
    "seconds"}``; ``tests`` is the sorted list of test ids the reference passed (what every later grading must
    see pass).

    ``meta`` is the task's ``task.json``, ``group_keys`` its tier's group keys (copied into the proof). The
    reference is graded first, with every reported test counted; the stub against the reference's test ids
    (both graded in one container, ``rules.grade.grade_proof``; the stub's grade counts only when the reference
    passes). A grading that ran out of time or memory is tried once
    more, in a container of its own, after ``retry_pause`` seconds; if it does again, the proof is ``rejected``
    with ``environmental`` set to "timeout" or "out of memory" (lab proves it again next time rather than
    keeping the rejection). Raises SandboxError (an infrastructure problem, not a property of the task).
    """
    start = time.monotonic()
    record = Proof.of(TaskMeta.from_json(meta, group_keys, Path(task_dir) / "task.json")).to_json()

    def graded(tree: Path, name: str, expected) -> Grade:
        return grade(task_dir, tree, image=image, limits=limits, cache_volume=cache_volume, cache_writable=True,
                     expected=expected, log_path=log_dir / f"{name}.log" if log_dir else None)

    with tempfile.TemporaryDirectory(prefix="lab-prove-") as tmp:
        ref_tree, stub_tree = Path(tmp) / "reference", Path(tmp) / "stub"
        lay_work_tree(task_dir, ref_tree, answer_dir)
        lay_work_tree(task_dir, stub_tree)
        # both in one container (trusted code: upstream's), the stub after the reference and against its ids;
        # a run the machine cut short is graded again on its own, each in a container of its own
        ref, stub = grade_proof(task_dir, ref_tree, stub_tree, image=image, limits=limits,
                                cache_volume=cache_volume, log_dir=log_dir)
        if environmental(ref) or (ref.passed and environmental(stub)):
            time.sleep(retry_pause)
            ref = graded(ref_tree, "reference", None) if environmental(ref) else ref
            stub = graded(stub_tree, "stub", ref.tests) if ref.passed else None
        record["reference"] = ref.to_json()
        if not ref.passed:
            record["reason"] = _reason(ref)
            record["environmental"] = environmental(ref)
        else:
            record["tests"] = ref.tests
            record["stub"] = stub.to_json()
            if stub.passed:
                record["status"], record["reason"] = "free", "the untouched stub passes its tests"
            elif environmental(stub) or stub.verdict == "tampered":
                # a stub that cannot be told apart from a failing one on this machine proves nothing
                record["status"] = "rejected"
                record["environmental"] = environmental(stub)
                record["reason"] = (f"{environmental(stub)}: the stub's tests did not finish" if environmental(stub)
                                    else "the stub's report was flagged tampered: " + "; ".join(stub.evidence))
            else:
                record["status"] = "kept"
    record["seconds"] = round(time.monotonic() - start, 3)
    return record


@dataclass(frozen=True)
class BatchRunner:
    """How a track proves several tasks in one container and few runner starts: ``template`` (its batch.sh, under
    templates/, rendered with ``runs``, ``sessions`` and ``timeout``) and ``names`` (None: every run can share
    one runner start; else a function giving the names a work tree takes in a session's shared namespace:
    Python's top-level modules, Go's module path. Then a reference and its stub go to different sessions, and a
    task that would take a name another task of the batch takes, or one of ``reserved``, is proven alone).
    ``isolated``: each run's tests run in a process of their own (Go: a test binary per package), so a stub
    whose run stopped early (it panics, as Go's stubs do) stopped by its own doing, and the batch's verdict on
    it stands; otherwise (one jest or pytest process for all) such a stub is proven alone."""

    template: str
    names: Callable[[Path], set[str]] | None = None
    reserved: frozenset = frozenset()
    isolated: bool = False


BATCH_MAX = 25  # tasks in one batch container at most (a batch that fails costs each of them a proof of its own)


@dataclass
class BatchItem:
    """One task to prove in a batch: ``task_dir``, ``answer_dir`` (its reference solution), ``meta`` (its
    task.json), ``log_dir`` (for reference.log and stub.log; None: no logs) and ``group_keys`` (its tier's,
    copied into its proof)."""

    task_dir: Path
    answer_dir: Path
    meta: dict
    log_dir: Path | None = None
    group_keys: tuple[str, ...] = ()


def prove_batch(items: list[BatchItem], runner: BatchRunner, *, image: str, limits: Limits,
                cache_volume: str = CACHE_VOLUME) -> dict:
    """Prove several tasks of one track in ONE container with one start of the track's runner per session
    (``rules.grade.grade_batch``; ``runner`` is the track's ``BatchRunner``, every item of that track). Returns task → proof record (as ``prove``
    writes it, plus ``batch``: ``{"size": tasks in the batch, "seconds": its container's wall clock}``) for
    each task whose batch proof is one a proof of its own would give: the reference passed, and the stub
    failed with both of its canaries reported (or, for an ``isolated`` runner, failed as it may) and nothing
    environmental. Every other task (the reference did not pass, the stub passed or was cut short, it could
    not be laid out or batched) is left out of the result: the caller proves it alone, so a batch never
    decides a rejection, a free task or anything unusual, and one task's failure never touches another's.
    Trusted code only. Raises SandboxError as ``grade`` does.
    """
    from rules.render import render

    if not items:
        return {}
    start = time.monotonic()
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="lab-prove-batch-") as tmp:
        chosen: list[tuple[BatchItem, Path, Path]] = []
        taken: set[str] = set()
        for k, item in enumerate(items):
            ref_tree, stub_tree = Path(tmp) / f"{k}-reference", Path(tmp) / f"{k}-stub"
            try:
                lay_work_tree(item.task_dir, ref_tree, item.answer_dir)
                lay_work_tree(item.task_dir, stub_tree)
            except RuntimeError:
                continue  # its own proof says why
            if runner.names:
                names = runner.names(ref_tree) | runner.names(stub_tree)
                if names & (taken | runner.reserved):
                    continue
                taken |= names
            chosen.append((item, ref_tree, stub_tree))
        if len(chosen) < 2:
            return {}
        m = len(chosen)
        runs = [BatchRun(i.task_dir, ref) for i, ref, _ in chosen]
        runs += [BatchRun(i.task_dir, stub, against=k) for k, (i, _, stub) in enumerate(chosen)]
        described = [{"n": n, "test_files": (chosen[(n - 1) % m][0].meta.get("test_files") or [])}
                     for n in range(1, 2 * m + 1)]
        sessions = [described[:m], described[m:]] if runner.names else [described]
        # the runner's own timeout ends before the container's, so a batch that runs too long still reports
        timeout = int(limits.timeout - min(30, limits.timeout / 4))
        script = render(runner.template, runs=described, sessions=sessions, timeout=timeout)
        logs = [(i.log_dir / "reference.log") if i.log_dir else None for i, _, _ in chosen]
        logs += [(i.log_dir / "stub.log") if i.log_dir else None for i, _, _ in chosen]
        graded = grade_batch(runs, script, image=image, limits=limits, cache_volume=cache_volume, log_paths=logs)
        seconds = round(time.monotonic() - start, 3)
        for k, (item, _, _) in enumerate(chosen):
            ref, stub = graded[k], graded[m + k]
            if ref is None or stub is None:
                continue
            (r, r_complete, r_ran), (s, s_complete, s_ran) = ref, stub
            if not (r_ran and s_ran and r.verdict == "pass" and r_complete and s.verdict == "fail"
                    and (s_complete or runner.isolated) and not environmental(r) and not environmental(s)):
                continue
            head = TaskMeta.from_json(item.meta, item.group_keys, item.task_dir / "task.json")
            out[head.task] = Proof.of(head, status="kept", tests=r.tests, reference=r.to_json(), stub=s.to_json(),
                                      seconds=round(r.seconds + s.seconds, 3),
                                      batch={"size": m, "seconds": seconds}).to_json()
    return out
