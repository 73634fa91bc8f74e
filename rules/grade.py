"""The grader: grade a work tree against a task, in a fresh network-less container, with a verdict the graded
code cannot write.

Tier-agnostic: a task is a folder holding an executable ``check.sh``, a ``task.json`` naming its report
format (``report``: a parser in ``rules.reports``) and, once proven, ``tests.json`` (the test ids the
reference solution passed). The container (see evals/README.md, "The trust boundary"):

- read-only root filesystem; the work tree mounted read-only at ``/lab/src``; ``/work`` and ``/tmp`` private,
  size-capped tmpfs; the task read-only at ``/task``; no network; CPU, memory, process and time limits;
- ``check.sh`` starts as root with a handful of capabilities, lays the work tree into ``/work`` with the
  pristine files back, adds two canary tests, and runs every graded process as an unprivileged tester;
- after the tests it kills every tester process and copies the runner's report into ``/lab/report``, a host
  folder only root can write.

The host then parses the report and ``decide`` gives the verdict: ``pass`` only when every expected test is
reported passed, the failing canary failed and the passing canary passed; ``tampered`` when the canaries show
a forged report; ``fail`` otherwise, with evidence.
"""
from __future__ import annotations

import json
import secrets
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rules import reports, sandbox
from rules.config import Limits
from rules.files import read_json, write_atomic

CACHE_TARGET = "/cache"
REPORT_TARGET = "/lab/report"
SRC_TARGET = "/lab/src"
TESTS_FILE = "tests.json"  # in a published task: {"version": 1, "tests": [ids the reference passed]}
TMPFS_SIZE = "2g"  # /tmp and /work each; tmpfs pages count against the container's memory limit too
# what check.sh's root part needs: copy and chown the work tree, drop to the tester (setpriv), kill it
CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "SETPCAP", "KILL")
EVIDENCE_IDS = 10  # test ids named in one evidence line at most
FROM_TASK = object()  # grade(expected=FROM_TASK): the task's tests.json, when it has one


@dataclass
class Grade:
    """One grading: ``passed`` (bool, True exactly when ``verdict`` is "pass"), test counts (``ran``: the
    expected tests, or every reported test when none are expected; ``passed_tests``, ``failed_tests``),
    check.sh's ``exit_code`` (None on timeout), ``timed_out``, ``seconds`` (wall clock of the container), its
    ``output`` (capped, canary lines removed: what an agent may see), ``verdict`` ("pass", "fail" or
    "tampered"), ``evidence`` (one line per check that kept the verdict from "pass") and ``tests`` (the ids of
    the tests reported passed, sorted: what a proof records)."""

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
    tests: list[str] = field(default_factory=list)
    runner_exit: int | None = None  # the test runner's exit status as check.sh saw it (124/137: its timeout)

    def to_json(self, with_output: bool = False) -> dict:
        d = asdict(self)
        d.pop("tests")
        if not with_output:
            d.pop("output")
        return d


def canary_tokens() -> tuple[str, str]:
    """Two fresh names for the failing and the passing canary test: a letter and 11 hex digits each (valid
    in every track's test names, unguessable by the graded code)."""
    return tuple("k" + secrets.token_hex(6)[:11] for _ in range(2))  # type: ignore[return-value]


def _named(ids: list[str]) -> str:
    shown = ", ".join(ids[:EVIDENCE_IDS])
    return shown + (f" and {len(ids) - EVIDENCE_IDS} more" if len(ids) > EVIDENCE_IDS else "")


def decide(tests: dict[str, str], expected: list[str] | None, canaries: tuple[str, str] | None,
           runner_exit: int | None) -> tuple[str, list[str], int, int]:
    """The verdict of one grading from the parsed report: ``(verdict, evidence, ran, passed)``.

    ``tests`` maps test ids to "passed" / "failed" / "skipped" (``rules.reports``); ``expected`` is the set
    of ids the reference passed (None while proving the reference itself: then every reported test counts,
    and skipped ones are left out); ``canaries`` the (failing, passing) canary tokens or None;
    ``runner_exit`` the test runner's exit status as check.sh saw it (None when unknown).

    pass ⇔ every expected test reported passed, the failing canary reported failed and the passing canary
    passed (without canaries: and the runner exited 0; with them it never does). tampered ⇔ the failing canary reported passed, the passing canary
    reported failed, or a canary missing from a report in which every expected test passed.
    """
    evidence: list[str] = []
    real = dict(tests)
    found: dict[str, list[str]] = {}
    for token in canaries or ():
        mine = [i for i in tests if token.lower() in i.lower()]
        found[token] = [tests[i] for i in mine]
        for i in mine:
            real.pop(i, None)
    if expected is None:
        counted = sorted(i for i, s in real.items() if s != reports.SKIPPED)
    else:
        counted = sorted(expected)
    ok = [i for i in counted if real.get(i) == reports.PASSED]
    missing = [i for i in counted if i not in real]
    bad = [i for i in counted if i in real and real[i] != reports.PASSED]
    all_passed = bool(counted) and not missing and not bad
    tampered = []
    if canaries:
        fail_token, pass_token = canaries
        if reports.PASSED in found[fail_token] or reports.SKIPPED in found[fail_token]:
            tampered.append("the canary test that must fail was reported passed (or skipped)")
        if reports.FAILED in found[pass_token]:
            tampered.append("the canary test that must pass was reported failed")
        absent = [name for name, tok in (("failing", fail_token), ("passing", pass_token)) if not found[tok]]
        if absent:
            line = f"the {' and '.join(absent)} canary test{'s' if len(absent) > 1 else ''} missing from the report"
            (tampered if all_passed else evidence).append(line + ("" if all_passed else
                                                                 " (the run did not complete)"))
    if tampered:
        return "tampered", tampered + evidence, len(counted), len(ok)
    if not counted:
        evidence.append("no tests ran" if expected is None else "the task has no expected tests")
    if missing:
        evidence.append(f"{len(missing)} expected test(s) not reported: {_named(missing)}")
    if bad:
        evidence.append(f"{len(bad)} test(s) did not pass: {_named(bad)}")
    if runner_exit not in (0, None) and not evidence and not canaries:  # with canaries it always fails
        evidence.append(f"the test runner exited with status {runner_exit}")
    return ("pass" if not evidence else "fail"), evidence, len(counted), len(ok)


def expected_tests(task_dir: Path) -> list[str] | None:
    """The test ids a published task expects to pass (its ``tests.json``), or None when it has none."""
    data = read_json(Path(task_dir) / TESTS_FILE)
    if isinstance(data, dict) and isinstance(data.get("tests"), list):
        return [str(t) for t in data["tests"]]
    return None


def _runner_exit(report_dir: Path) -> int | None:
    try:
        return int((report_dir / "exit").read_text().strip() or "x")
    except (OSError, ValueError):
        return None


def grade(task_dir: Path, work_tree: Path, *, image: str, limits: Limits, cache_volume: str | None = None,
          cache_writable: bool = False, log_path: Path | None = None, expected=FROM_TASK,
          canaries: bool = True) -> Grade:
    """Grade ``work_tree`` against the task in ``task_dir`` in a fresh container of ``image``.

    ``expected``: the test ids that must pass (default: the task's ``tests.json``; None: every reported test,
    as when proving a reference solution). ``canaries``: add the two canary tests (on by default).
    ``cache_volume`` (a Docker volume name) is mounted at ``/cache`` for build caches, read-only unless
    ``cache_writable`` (only proofs, whose code is trusted, may write it). ``log_path`` receives the
    container's output followed by the verdict. Raises SandboxError when the container cannot run at all
    (missing image, no engine): that is an infrastructure error, never a failed grade.
    """
    task_dir = Path(task_dir).resolve()
    meta = read_json(task_dir / "task.json") or {}
    want = expected_tests(task_dir) if expected is FROM_TASK else expected
    tokens = canary_tokens() if canaries else None
    with tempfile.TemporaryDirectory(prefix="lab-grade-") as tmp:
        report_dir = Path(tmp) / "report"
        report_dir.mkdir(mode=0o700)
        mounts = [sandbox.Mount(str(task_dir), "/task", read_only=True),
                  sandbox.Mount(str(Path(work_tree).resolve()), SRC_TARGET, read_only=True),
                  sandbox.Mount(str(report_dir), REPORT_TARGET)]
        if cache_volume:
            mounts.append(sandbox.Mount(sandbox.volume(cache_volume), CACHE_TARGET, kind="volume",
                                        read_only=not cache_writable))
        env = {"LAB_CANARY_FAIL": tokens[0], "LAB_CANARY_PASS": tokens[1]} if tokens else {}
        tmpfs = {"/tmp": f"size={TMPFS_SIZE},exec,mode=1777", "/work": f"size={TMPFS_SIZE},exec,mode=755"}
        res = sandbox.run(image, ["bash", "/task/check.sh"], mounts=mounts, env=env, network="none",
                          limits=limits, workdir="/", labels={"lab.role": "grader"}, read_only=True,
                          tmpfs=tmpfs, capabilities=CAPABILITIES)
        parsed = reports.parse(meta.get("report", "junit"), report_dir, meta)
        runner_exit = _runner_exit(report_dir)
        shutil.rmtree(report_dir, ignore_errors=True)
    verdict, evidence, ran, ok = decide(parsed.tests, want, tokens, runner_exit)
    if res.timed_out:
        verdict, evidence = "fail", [f"the grading ran past its {limits.timeout:g} s and was killed"] + evidence
    elif res.oom_killed:
        verdict, evidence = "fail", ["the grading ran out of memory (its tmpfs /work and /tmp count too)"] + evidence
    elif res.exit_code != 0 and verdict == "pass":
        verdict, evidence = "fail", [f"check.sh exited with status {res.exit_code}"]
    if verdict != "pass":
        evidence += [f"report: {n}" for n in parsed.notes]
    summary = (f"lab-check: ran={ran} passed={ok} failed={ran - ok} verdict={verdict}"
               + "".join(f"\nlab-check: {e}" for e in evidence))
    if log_path is not None:
        write_atomic(log_path, res.output.rstrip("\n") + "\n" + summary + "\n")
    tested = sorted(i for i, s in parsed.tests.items() if s == reports.PASSED
                    and not any(t.lower() in i.lower() for t in tokens or ()))
    return Grade(passed=verdict == "pass", ran=ran, passed_tests=ok, failed_tests=ran - ok,
                 exit_code=res.exit_code, timed_out=res.timed_out, seconds=round(res.seconds, 3),
                 output=reports.scrub(res.output, list(tokens or ())) + summary + "\n",
                 oom_killed=res.oom_killed, verdict=verdict, evidence=evidence, tests=tested,
                 runner_exit=runner_exit)
