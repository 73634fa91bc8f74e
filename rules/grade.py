"""The grader: grade a work tree against a task, in a fresh network-less container, with a verdict the graded
code cannot write.

Tier-agnostic: a task is a folder holding an executable ``check.sh``, a ``task.json`` naming its report
format (``report``: a parser in ``rules.reports``) and, once proven, ``tests.json`` (the test ids the
reference solution passed). The container (see evals/README.md, "The trust boundary"):

- read-only root filesystem; the work tree mounted read-only at ``/lab/src``; ``/work`` and ``/tmp`` private,
  size-capped tmpfs; the task read-only at ``/task`` (or, a task that asks, where only root can read it:
  ``PRIVATE_TASK``); no network; CPU, memory, process and time limits;
- ``check.sh`` starts as root with a handful of capabilities, lays the work tree into ``/work`` with the
  pristine files back, adds two canary tests, and runs every graded process as an unprivileged tester;
- after the tests it kills every tester process and copies the runner's report into ``/lab/report``, a host
  folder only root can write.

The host then parses the report and ``decide`` gives the verdict: ``pass`` only when every expected test is
reported passed, the failing canary failed and the passing canary passed; ``tampered`` when the canaries show
a forged report; ``fail`` otherwise, with evidence.
"""
from __future__ import annotations

import re
import secrets
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rules import sandbox
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
    """Two fresh random tokens: the names of the failing and the passing canary test where a track names them
    so (a letter and 11 hex digits each, valid in every track's test names, unguessable by the graded code), and
    the seed of the draw where a track's check.sh draws canaries of its own (a manifest: ``Canaries``)."""
    return tuple("k" + secrets.token_hex(6)[:11] for _ in range(2))  # type: ignore[return-value]


MANIFEST = "canaries.json"  # in a report folder, written by check.sh as root before any graded code ran


@dataclass(frozen=True)
class Canaries:
    """The canary tests of one grading: ``fail`` (names of tests that must fail), ``passing`` (names of tests
    that must pass) and ``originals`` (a failing canary that is a copy of one of the exercise's tests with its
    expected value changed → that test's name). ``match`` says how a name finds its ids in a report:
    ``"tokens"`` (the two ``canary_tokens``: anywhere in an id, case-insensitively), ``"leaf"`` (a manifest's
    test method names: the ids whose last ``::`` part it is, as JUnit ids end) or ``"id"`` (a manifest's
    complete test ids, as ``rules.reports`` writes them). With ``"id"``, ``originals`` maps ids to ids.
    ``shown``: what the runner prints of them where its output names a test by less than its id (jest: the
    title alone, ``✕ <title>``, ``● <describe> › <title>``), scrubbed from the output as the names are."""

    fail: tuple[str, ...]
    passing: tuple[str, ...]
    originals: dict = field(default_factory=dict)
    match: str = "tokens"
    shown: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        return self.match != "tokens"

    @classmethod
    def of_tokens(cls, tokens: tuple[str, str]) -> "Canaries":
        return cls((tokens[0],), (tokens[1],))

    def names(self) -> list[str]:
        return list(self.fail) + list(self.passing)

    def printed(self) -> list[str]:
        """What the test output shows of these canaries, for scrubbing it: their names, what ``shown`` says,
        and with ``"id"`` the last ``::`` part of each id too (libtest prints ``<mod path>::<fn>`` without the
        target; a fresh name is a part of no other name of the file, so no line about a real test goes with it)."""
        names = self.names()
        return names + list(self.shown) + [n.rsplit("::", 1)[-1] for n in names if self.match == "id" and "::" in n]

    def matches(self, name: str, test_id: str) -> bool:
        if self.match == "id":
            return test_id == name
        if self.match == "leaf":
            return test_id.rsplit("::", 1)[-1] == name
        return name.lower() in test_id.lower()

    def original_id(self, name: str, test_id: str) -> str | None:
        """The id of the test that the failing canary ``name`` (reported as ``test_id``) is a changed copy of,
        or None when it is no copy."""
        original = self.originals.get(name)
        if original is None or self.match == "id":
            return original
        return test_id.rsplit("::", 1)[0] + "::" + original

    def owns(self, test_id: str) -> bool:
        """Whether ``test_id`` is one of these canaries."""
        return any(self.matches(n, test_id) for n in self.names())


def canaries_of(meta: dict, report_dir: Path, tokens: tuple[str, str] | None) -> Canaries | None:
    """The canaries of the grading whose report is in ``report_dir``: None without ``tokens`` (no canaries
    asked for); the manifest check.sh wrote there (``MANIFEST``) when the task's task.json says its check.sh
    writes one (``"canaries": "manifest"``: only then is that file root's alone, never copied from the tester's
    output: ``{"fail": [names], "pass": [names], "originals": {copy: test}, "match": "leaf" or "id", "shown":
    [what the runner prints of them]}``, "leaf" when left out, "shown" optional); else the two tokens. A
    manifest missing or malformed falls back to the tokens, which no test then carries: the canaries are missing
    and the grading cannot pass."""
    if tokens is None:
        return None
    if meta.get("canaries") == "manifest":
        data = read_json(Path(report_dir) / MANIFEST)
        if isinstance(data, dict):
            fail, ok, orig = data.get("fail"), data.get("pass"), data.get("originals") or {}
            names = (fail or []) + (ok or []) if isinstance(fail, list) and isinstance(ok, list) else []
            match, shown = data.get("match", "leaf"), data.get("shown") or []
            if (fail and ok and all(isinstance(n, str) and n for n in names) and isinstance(orig, dict)
                    and all(isinstance(k, str) and isinstance(v, str) and k in fail for k, v in orig.items())
                    and match in ("leaf", "id")
                    and isinstance(shown, list) and all(isinstance(t, str) and t for t in shown)):
                return Canaries(tuple(fail), tuple(ok), dict(orig), match, tuple(shown))
    return Canaries.of_tokens(tokens)


def _named(ids: list[str]) -> str:
    shown = ", ".join(ids[:EVIDENCE_IDS])
    return shown + (f" and {len(ids) - EVIDENCE_IDS} more" if len(ids) > EVIDENCE_IDS else "")


def decide(tests: dict[str, str], expected: list[str] | None, canaries: Canaries | tuple[str, str] | None,
           runner_exit: int | None) -> tuple[str, list[str], int, int]:
    """The verdict of one grading from the parsed report: ``(verdict, evidence, ran, passed)``.

    ``tests`` maps test ids to "passed" / "failed" / "skipped" (``rules.reports``); ``expected`` is the set
    of ids the reference passed (None while proving the reference itself: then every reported test counts,
    and skipped ones are left out); ``canaries`` a ``Canaries``, the (failing, passing) canary tokens, or None;
    ``runner_exit`` the test runner's exit status as check.sh saw it (None when unknown).

    pass ⇔ every expected test reported passed, every failing canary reported failed and every passing canary
    passed (without canaries: and the runner exited 0; with them it never does). tampered ⇔ a failing canary
    reported passed or skipped (a copy of a test with its expected value changed: only when the test itself
    passed too, as an honest solution passes at most one of the two), a passing canary reported failed, or a
    canary missing from a report in which every expected test passed.
    """
    from rules import reports  # on first use: doit's task creators import this module, never parse a report

    if canaries is not None and not isinstance(canaries, Canaries):
        canaries = Canaries.of_tokens(canaries)
    evidence: list[str] = []
    real = dict(tests)
    found: dict[str, list[str]] = {}
    for name in canaries.names() if canaries else ():
        found[name] = [i for i in tests if canaries.matches(name, i)]
        for i in found[name]:
            real.pop(i, None)
    if expected is None:
        counted = sorted(i for i, s in real.items() if s != reports.SKIPPED)
    else:
        counted = sorted(expected)
        twice = _reported_again(real, set(expected))
        for test_id in twice:  # a twin registered by the graded code may carry the pass: neither counts
            real[test_id] = reports.FAILED
        if twice:
            evidence.append(f"{len(twice)} expected test(s) reported more than once, counted failed (the reference's "
                            f"run reported each once): {_named(twice)}")
    ok = [i for i in counted if real.get(i) == reports.PASSED]
    missing = [i for i in counted if i not in real]
    bad = [i for i in counted if i in real and real[i] != reports.PASSED]
    all_passed = bool(counted) and not missing and not bad
    tampered = []
    if canaries:
        tampered += _canaries_forged(tests, canaries, found)
        absent = [n for n in canaries.names() if not found[n]]
        if absent and not canaries.exact:
            fail_token, pass_token = canaries.fail[0], canaries.passing[0]
            kinds = [k for k, t in (("failing", fail_token), ("passing", pass_token)) if t in absent]
            line = f"the {' and '.join(kinds)} canary test{'s' if len(kinds) > 1 else ''} missing from the report"
        elif absent:
            line = f"{len(absent)} of the {len(canaries.names())} canary tests missing from the report"
        if absent:
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


NUMBERED = re.compile(r"^(.*) #\d+$")


def _reported_again(tests: dict[str, str], expected: set[str]) -> list[str]:
    """The expected ids that ``tests`` also holds numbered (``<id> #2``, the parsers' mark for a second test of
    the same name, ``rules.reports._Numbering``) where the reference's run held no such number: a test of the
    same name added by the graded code, which jest, for one, lists first."""
    out = set()
    for test_id in tests:
        m = NUMBERED.match(test_id)
        if m and m.group(1) in expected and test_id not in expected:
            out.add(m.group(1))
    return sorted(out)


def _canaries_forged(tests: dict[str, str], canaries: Canaries, found: dict[str, list[str]]) -> list[str]:
    """The evidence lines of canaries reported otherwise than an honest run reports them (never a canary's
    name: the next try's prompt may show evidence)."""
    from rules import reports

    lines = []
    for name in canaries.fail:
        said = [tests[i] for i in found[name]]
        if reports.PASSED not in said and reports.SKIPPED not in said:
            continue
        test_id = canaries.original_id(name, found[name][0])
        if test_id is None:
            lines.append("the canary test that must fail was reported passed (or skipped)")
            continue
        if tests.get(test_id) == reports.PASSED:
            lines.append(f"a copy of {test_id} with its expected value changed was reported passed (or "
                         "skipped), and so was the test itself: a result equal to two different values, or "
                         "assertions that let failures through")
    if any(reports.FAILED in [tests[i] for i in found[n]] for n in canaries.passing):
        lines.append("the canary test that must pass was reported failed")
    return lines


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


def _refused(report_dir: Path) -> str | None:
    """check.sh's one-line reason for refusing the work tree (``<report>/refused``, written by root), or None."""
    try:
        return (report_dir / "refused").read_text(errors="replace").strip()[:500] or None
    except OSError:
        return None


def _graded(meta: dict, report_dir: Path, *, want, tokens, limits: Limits, exit_code: int | None,
            timed_out: bool, oom_killed: bool, seconds: float, output: str, log_path: Path | None) -> Grade:
    """The Grade of one check.sh run from its report folder and how its container (or its turn in one) ended."""
    from rules import reports

    parsed = reports.parse(meta.get("report", "junit"), report_dir, meta)
    runner_exit = _runner_exit(report_dir)
    canaries = canaries_of(meta, report_dir, tokens)
    verdict, evidence, ran, ok = decide(parsed.tests, want, canaries, runner_exit)
    refused = _refused(report_dir)
    if refused:
        verdict, evidence = "fail", [refused] + evidence
    elif timed_out:
        verdict, evidence = "fail", [f"the grading ran past its {limits.timeout:g} s and was killed"] + evidence
    elif oom_killed:
        verdict, evidence = "fail", ["the grading ran out of memory (its tmpfs /work and /tmp count too)"] + evidence
    elif exit_code != 0 and verdict == "pass":
        verdict, evidence = "fail", [f"check.sh exited with status {exit_code}"]
    if verdict != "pass":
        evidence += [f"report: {n}" for n in parsed.notes]
    summary = (f"lab-check: ran={ran} passed={ok} failed={ran - ok} verdict={verdict}"
               + "".join(f"\nlab-check: {e}" for e in evidence))
    if log_path is not None:
        write_atomic(log_path, output.rstrip("\n") + "\n" + summary + "\n")
    tested = sorted(i for i, s in parsed.tests.items() if s == reports.PASSED
                    and not (canaries and canaries.owns(i)))
    return Grade(passed=verdict == "pass", ran=ran, passed_tests=ok, failed_tests=ran - ok,
                 exit_code=exit_code, timed_out=timed_out, seconds=round(seconds, 3),
                 output=reports.scrub(output, canaries.printed() if canaries else []) + summary + "\n",
                 oom_killed=oom_killed, verdict=verdict, evidence=evidence, tests=tested,
                 runner_exit=runner_exit)


_volumes: set[str] = set()  # cache volumes this process has made sure of (one engine call each, not one a grading)


def _cache_volume(name: str) -> str:
    """``sandbox.volume(name)`` once per process: a volume removed since is made again by the engine when a
    container mounts it (empty, so the grading runs without warm caches; the verdict is the same)."""
    if name not in _volumes:
        sandbox.volume(name)
        _volumes.add(name)
    return name


def _mounts(task_dir: Path, trees: dict[str, Path], report_dir: Path, cache_volume: str | None,
            cache_writable: bool, task_target: str = "/task") -> list:
    mounts = [sandbox.Mount(str(task_dir), task_target, read_only=True)]
    mounts += [sandbox.Mount(str(Path(tree).resolve()), target, read_only=True) for target, tree in trees.items()]
    mounts.append(sandbox.Mount(str(report_dir), REPORT_TARGET))
    if cache_volume:
        mounts.append(sandbox.Mount(_cache_volume(cache_volume), CACHE_TARGET, kind="volume",
                                    read_only=not cache_writable))
    return mounts


TMPFS = {"/tmp": f"size={TMPFS_SIZE},exec,mode=1777", "/work": f"size={TMPFS_SIZE},exec,mode=755"}
# A task whose task.json says ``"private_task": true`` is mounted below a folder only root can enter (an empty
# tmpfs of mode 700, whatever uid owns the task's files on the host): its check.sh reads it as root, and the
# graded code, run as the tester, cannot read the dataset's test names (task.json, check.sh's own test selection,
# the held-out test patch) to tell the canaries apart from them (red team 4).
PRIVATE_DIR = "/lab/private"
PRIVATE_TASK = PRIVATE_DIR + "/task"


def grade(task_dir: Path, work_tree: Path, *, image: str, limits: Limits, cache_volume: str | None = None,
          cache_writable: bool = False, log_path: Path | None = None, expected=FROM_TASK,
          canaries: bool = True) -> Grade:
    """Grade ``work_tree`` against the task in ``task_dir`` in a fresh container of ``image``.

    ``expected``: the test ids that must pass (default: the task's ``tests.json``; None: every reported test,
    as when proving a reference solution). ``canaries``: add the two canary tests (on by default).
    A task whose task.json says ``private_task`` is mounted where the tester cannot read it (``PRIVATE_TASK``).
    ``cache_volume`` (a Docker volume name) is mounted at ``/cache`` for build caches, read-only unless
    ``cache_writable`` (only proofs, whose code is trusted, may write it). ``log_path`` receives the
    container's output followed by the verdict. Raises SandboxError when the container cannot run at all
    (missing image, no engine): that is an infrastructure error, never a failed grade.
    """
    task_dir = Path(task_dir).resolve()
    meta = read_json(task_dir / "task.json") or {}
    want = expected_tests(task_dir) if expected is FROM_TASK else expected
    tokens = canary_tokens() if canaries else None
    private = meta.get("private_task") is True
    target = PRIVATE_TASK if private else "/task"
    with tempfile.TemporaryDirectory(prefix="lab-grade-") as tmp:
        report_dir = Path(tmp) / "report"
        report_dir.mkdir(mode=0o700)
        mounts = _mounts(task_dir, {SRC_TARGET: work_tree}, report_dir, cache_volume, cache_writable, target)
        env = {"LAB_CANARY_FAIL": tokens[0], "LAB_CANARY_PASS": tokens[1]} if tokens else {}
        res = sandbox.run(image, ["bash", f"{target}/check.sh"], mounts=mounts, env=env, network=sandbox.NULL,
                          limits=limits, workdir="/", labels={"lab.role": "grader"}, read_only=True,
                          tmpfs={**TMPFS, PRIVATE_DIR: "size=1m,mode=700"} if private else TMPFS,
                          capabilities=CAPABILITIES)
        return _graded(meta, report_dir, want=want, tokens=tokens, limits=limits, exit_code=res.exit_code,
                       timed_out=res.timed_out, oom_killed=res.oom_killed, seconds=res.seconds,
                       output=res.output, log_path=log_path)


# The root-owned driver of a proof container: runs check.sh once per trusted work tree (/lab/src1: the reference,
# /lab/src2: the stub), each with its own fresh canaries and its own report folder (/lab/report/<n>/, its output in
# /lab/report/<n>.out, check.sh's exit status in <n>.status, its seconds in <n>.seconds). Between the two it empties
# /work and /tmp but for the warm build caches the tracks keep there (Go's build cache, Rust's target folder,
# jest's transform cache): both trees are upstream's code, so sharing them is safe; a trial never does this.
PAIR_DRIVER = r"""
set -u
keep='lab-gocache lab-target lab-jest-cache'
fails=("$LAB_CANARY_FAIL_1" "$LAB_CANARY_FAIL_2"); passes=("$LAB_CANARY_PASS_1" "$LAB_CANARY_PASS_2")
unset LAB_CANARY_FAIL_1 LAB_CANARY_FAIL_2 LAB_CANARY_PASS_1 LAB_CANARY_PASS_2
for n in 1 2; do
  mkdir -p "/lab/report/$n"
  start=$(date +%s.%N)
  env LAB_SRC="/lab/src$n" LAB_REPORT="/lab/report/$n" LAB_CANARY_FAIL="${fails[$((n-1))]}" \
    LAB_CANARY_PASS="${passes[$((n-1))]}" bash /task/check.sh > "/lab/report/$n.out" 2>&1 < /dev/null
  echo $? > "/lab/report/$n.status"
  echo "$start $(date +%s.%N)" > "/lab/report/$n.seconds"
  setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- \
    kill -KILL -1 2>/dev/null
  find /work -mindepth 1 -maxdepth 1 -exec rm -rf {} +
  for f in /tmp/* /tmp/.[!.]*; do
    [ -e "$f" ] || continue
    case " $keep " in *" ${f#/tmp/} "*) ;; *) rm -rf "$f" ;; esac
  done
done
"""
PAIR_OUTPUT_CAP = 1_000_000  # bytes of each run's output kept (its tail)


def _pair_run(report_dir: Path, n: int) -> tuple[int | None, float, str]:
    try:
        status = int((report_dir / f"{n}.status").read_text().strip())
    except (OSError, ValueError):
        status = None
    try:
        a, b = (report_dir / f"{n}.seconds").read_text().split()
        seconds = float(b) - float(a)
    except (OSError, ValueError):
        seconds = 0.0
    try:
        with open(report_dir / f"{n}.out", "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - PAIR_OUTPUT_CAP))
            output = f.read().decode("utf-8", errors="replace")
    except OSError:
        output = ""
    return status, seconds, output


def grade_proof(task_dir: Path, reference_tree: Path, stub_tree: Path, *, image: str, limits: Limits,
                cache_volume: str | None = None, log_dir: Path | None = None) -> tuple[Grade, Grade]:
    """Grade a task's reference solution and its stub, both trusted code (upstream's), one after the other in
    ONE container of ``image`` (``PAIR_DRIVER``): the second run finds the first one's warm build caches.
    Returns ``(reference, stub)``: the reference decided with every reported test counted, the stub against the
    ids the reference passed, each from its own report folder and with its own fresh canaries, exactly as two
    ``grade`` calls would (``seconds``: each run's own wall clock; the container's start is the reference's).
    The container's wall-clock limit is twice ``limits.timeout``; when it runs out, or memory does, both
    grades say so (``timed_out`` / ``oom_killed``) and the caller grades them apart. ``cache_volume`` is
    mounted writable. ``log_dir`` receives ``reference.log`` and ``stub.log``. Never for untrusted code: a
    trial grades one work tree per container (``grade``). Raises SandboxError as ``grade`` does.
    """
    import dataclasses

    task_dir = Path(task_dir).resolve()
    meta = read_json(task_dir / "task.json") or {}
    tokens = [canary_tokens(), canary_tokens()]
    pair_limits = dataclasses.replace(limits, timeout=2 * limits.timeout)
    with tempfile.TemporaryDirectory(prefix="lab-grade-") as tmp:
        report_dir = Path(tmp) / "report"
        report_dir.mkdir(mode=0o700)
        mounts = _mounts(task_dir, {SRC_TARGET + "1": reference_tree, SRC_TARGET + "2": stub_tree}, report_dir,
                         cache_volume, True)
        env = {"LAB_CANARY_FAIL_1": tokens[0][0], "LAB_CANARY_PASS_1": tokens[0][1],
               "LAB_CANARY_FAIL_2": tokens[1][0], "LAB_CANARY_PASS_2": tokens[1][1]}
        res = sandbox.run(image, ["bash", "-c", PAIR_DRIVER], mounts=mounts, env=env, network=sandbox.NULL,
                          limits=pair_limits, workdir="/", labels={"lab.role": "grader"}, read_only=True,
                          tmpfs=TMPFS, capabilities=CAPABILITIES)
        grades = []
        want = None
        for n, name in ((1, "reference"), (2, "stub")):
            status, seconds, output = _pair_run(report_dir, n)
            if n == 1:
                seconds += max(0.0, res.seconds - sum(_pair_run(report_dir, k)[1] for k in (1, 2)))
            g = _graded(meta, report_dir / str(n), want=want, tokens=tokens[n - 1], limits=limits,
                        exit_code=None if res.timed_out else status, timed_out=res.timed_out,
                        oom_killed=res.oom_killed, seconds=seconds, output=output or res.output,
                        log_path=log_dir / f"{name}.log" if log_dir else None)
            grades.append(g)
            want = g.tests
        return grades[0], grades[1]


# The root-owned driver of a batch proof container (trusted code only: several tasks' references and stubs). For
# each run listed in /lab/batch/runs ("<n> <task folder>") it runs that task's check.sh with LAB_STAGE=prepare:
# the tree /lab/src/<n> laid into /work/<n> with the pristine files back, the tests enabled and the run's own
# fresh canaries added (LAB_CANARY_FAIL_<n>, LAB_CANARY_PASS_<n>), nothing run; check.sh's exit status goes to
# /lab/report/<n>.prepared, its output to <n>.out. Then, with every canary name out of the environment, the
# track's batch.sh (/lab/batch/batch.sh) runs the tests of every prepared tree in as few runner starts as the
# track allows and writes each run's report into /lab/report/<n>/ exactly as check.sh alone would (and its
# runner's exit status into /lab/report/<n>/exit); its output goes to /lab/report/batch.out.
BATCH_DRIVER = r"""
set -u
while read -r n task; do
  fail_var=LAB_CANARY_FAIL_$n pass_var=LAB_CANARY_PASS_$n
  mkdir -p "/lab/report/$n"
  env LAB_STAGE=prepare LAB_WORK="/work/$n" LAB_SRC="/lab/src/$n" LAB_REPORT="/lab/report/$n" \
    LAB_CANARY_FAIL="${!fail_var}" LAB_CANARY_PASS="${!pass_var}" bash "$task/check.sh" \
    > "/lab/report/$n.out" 2>&1 < /dev/null
  echo $? > "/lab/report/$n.prepared"
done < /lab/batch/runs
for v in $(compgen -e); do case $v in LAB_CANARY_*) unset "$v" ;; esac; done
bash /lab/batch/batch.sh > /lab/report/batch.out 2>&1 < /dev/null
echo $? > /lab/report/batch.status
"""
BATCH_TASKS = "/lab/tasks"  # in a batch container: /lab/tasks/<k>, the k-th task folder (read-only)
BATCH_SRC = "/lab/src"  # in a batch container: /lab/src/<n>, the n-th work tree (read-only)
BATCH_LOG_CAP = 200_000  # characters of the batch runner's output (its tail) in each run's log


@dataclass
class BatchRun:
    """One work tree of a batch proof: ``task_dir`` (the task's folder), ``tree`` (the work tree: a reference
    solution or a stub, upstream's code only) and ``against`` (None: decided with every reported test counted,
    as a reference is; an index into the batch's runs: decided against the ids that run passed, as a stub is;
    it is then graded only when that run passed)."""

    task_dir: Path
    tree: Path
    against: int | None = None


def _read(path: Path, cap: int = PAIR_OUTPUT_CAP) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - cap))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def grade_batch(runs: list[BatchRun], batch_script: str, *, image: str, limits: Limits,
                cache_volume: str | None = None, log_paths: list[Path | None] | None = None
                ) -> list[tuple[Grade, bool, bool] | None]:
    """Grade several trusted work trees (references and stubs of several tasks of one track) in ONE container
    of ``image`` with one start of the track's test runner where it can (``BATCH_DRIVER``; ``batch_script`` is
    the track's rendered batch.sh, which runs ``/work/<n>`` for every prepared run ``n`` = 1, 2, ... in the
    order of ``runs`` and writes each run's report apart). Every run has its own fresh canaries and its own
    report, decided exactly as ``grade`` decides one (``decide``).

    Returns, per run, ``(grade, complete, ran)`` (``complete``: both of the run's canaries are in its report,
    so its tests ran to the end; ``ran``: its check.sh prepared it and batch.sh ended normally) or None when the
    run was not graded (it is decided ``against`` a run that did not pass). ``seconds`` of each grade is the
    container's wall clock divided by the number of runs. The container has ``limits`` (its wall clock:
    ``limits.timeout``); when it runs out of time or memory every grade says so (``timed_out``/``oom_killed``).
    Never for untrusted code. ``log_paths[i]`` (optional) receives the i-th run's output (its check.sh's
    preparing, then the tail of the batch runner's, ``BATCH_LOG_CAP`` characters) and verdict. Raises
    SandboxError as ``grade`` does.
    """
    from rules import reports

    runs = list(runs)
    tasks = sorted({Path(r.task_dir).resolve() for r in runs})
    index = {t: k for k, t in enumerate(tasks, 1)}
    tokens = [canary_tokens() for _ in runs]
    with tempfile.TemporaryDirectory(prefix="lab-batch-") as tmp:
        report_dir, spec = Path(tmp) / "report", Path(tmp) / "batch"
        report_dir.mkdir(mode=0o700)
        spec.mkdir()
        mounts = [sandbox.Mount(str(t), f"{BATCH_TASKS}/{k}", read_only=True) for t, k in index.items()]
        mounts += [sandbox.Mount(str(Path(r.tree).resolve()), f"{BATCH_SRC}/{n}", read_only=True)
                   for n, r in enumerate(runs, 1)]
        (spec / "runs").write_text("".join(f"{n} {BATCH_TASKS}/{index[Path(r.task_dir).resolve()]}\n"
                                           for n, r in enumerate(runs, 1)))
        (spec / "batch.sh").write_text(batch_script)
        mounts.append(sandbox.Mount(str(spec), "/lab/batch", read_only=True))
        mounts.append(sandbox.Mount(str(report_dir), REPORT_TARGET))
        if cache_volume:
            mounts.append(sandbox.Mount(_cache_volume(cache_volume), CACHE_TARGET, kind="volume"))
        env = {}
        for n, (fail, ok) in enumerate(tokens, 1):
            env[f"LAB_CANARY_FAIL_{n}"], env[f"LAB_CANARY_PASS_{n}"] = fail, ok
        res = sandbox.run(image, ["bash", "-c", BATCH_DRIVER], mounts=mounts, env=env, network=sandbox.NULL,
                          limits=limits, workdir="/", labels={"lab.role": "grader"}, read_only=True,
                          tmpfs=TMPFS, capabilities=CAPABILITIES)
        batch_out = _read(report_dir / "batch.out", BATCH_LOG_CAP)
        try:
            batch_status: int | None = int((report_dir / "batch.status").read_text().strip())
        except (OSError, ValueError):
            batch_status = None
        out: list[tuple[Grade, bool, bool] | None] = []
        for n, r in enumerate(runs, 1):
            want = None
            if r.against is not None:
                base = out[r.against]
                if base is None or not base[0].passed:
                    out.append(None)
                    continue
                want = base[0].tests
            try:
                prepared: int | None = int((report_dir / f"{n}.prepared").read_text().strip())
            except (OSError, ValueError):
                prepared = None
            meta = read_json(Path(r.task_dir) / "task.json") or {}
            output = (_read(report_dir / f"{n}.out") + f"\nlab-batch: run {n} of {len(runs)}; the batch's runner:\n"
                      + batch_out)
            exit_code = None if res.timed_out else (batch_status if prepared == 0 else prepared)
            g = _graded(meta, report_dir / str(n), want=want, tokens=tokens[n - 1], limits=limits,
                        exit_code=exit_code, timed_out=res.timed_out, oom_killed=res.oom_killed,
                        seconds=res.seconds / len(runs), output=output,
                        log_path=log_paths[n - 1] if log_paths else None)
            seen = reports.parse(meta.get("report", "junit"), report_dir / str(n), meta).tests
            canaries = canaries_of(meta, report_dir / str(n), tokens[n - 1])
            complete = all(any(canaries.matches(c, i) for i in seen) for c in canaries.names())
            out.append((g, complete, prepared == 0 and batch_status == 0))
        return out
