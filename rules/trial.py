"""One trial: an agent tries one task, in its own container, and a fresh grader container grades the work.

A trial lays a fresh work tree with the task's ``setup.sh``, runs the agent's container with only the work
tree (``/work``, read-write), the prompt (``/lab/in``, read-only) and an empty private folder (``/lab/out``)
mounted, then grades the work tree with ``rules.grade`` (no network, pristine non-solution files laid back,
limits, a timeout that kills the container). After a failed try the agent runs again in the same work tree
with a follow-up prompt holding the end of the test output (``tries=2``: the polyglot benchmark's pass@2).

The record goes to ``<runs>/<agent>/<task>/``: ``result.json`` (written last, atomically; its fields are
documented in evals/README.md), ``agent-<try>.log``, ``grade-<try>.log``, ``prompt-<try>.txt`` for follow-up
prompts, ``out-<try>/`` (small files the agent left in ``/lab/out``) and ``work.diff`` (``diff -ruN`` of the
work tree against the stub). Tier-agnostic: a task is a folder with ``task.json`` (``task``, ``language``,
``solution_files``), ``prompt.txt``, ``setup.sh`` and ``check.sh``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import os
import shutil
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

from rules import sandbox
from rules.agents import IN_DIR, OUT_DIR, USAGE_FILE, WORK, Agent, add_usage, try_usage
from rules.config import Limits
from rules.files import read_json, tree_digest, write_atomic, write_json
from rules.grade import grade
from rules.prove import lay_work_tree
from rules.render import render

TRIAL_FORMAT = 1  # version of result.json
STATUSES = ("pass", "fail", "timeout", "error")
FINISHED = ("pass", "fail", "timeout")  # an `error` is retried by the next run
FOLLOWUP_LINES = 100  # the follow-up prompt holds at most the last 100 lines ...
FOLLOWUP_CHARS = 8000  # ... and 8000 characters of the test output
DIFF_CAP = 1024 * 1024  # bytes of work.diff kept
WORK_TREE_CAP = 256 * 1024 * 1024  # a work tree larger than this after the agent is not graded
OUT_FILE_CAP = 1024 * 1024  # files the agent leaves in /lab/out are kept up to this size, ...
OUT_FILES_MAX = 20  # ... and this many


class TrialError(Exception):
    """The trial could not be set up (an infrastructure problem: the trial's status is ``error``)."""


@dataclass(frozen=True)
class Trial:
    """What one trial needs: the agent, the task folder, the record folder (``run_dir``), a scratch folder
    for the work tree (wiped before and after), the agent image tag, the grader image tag, the grading limits
    and the number of tries."""

    agent: Agent
    task_dir: Path
    run_dir: Path
    scratch: Path
    agent_image: str
    grader_image: str
    grade_limits: Limits
    tries: int = 2

    @property
    def cache_volume(self) -> str:
        """The grader's build-cache volume for this agent's work (never shared with another agent's)."""
        return f"lab-cache-agent-{self.agent.name}"

    def key(self) -> dict:
        """What a finished result must have been run with to count as this trial's: the result format, the
        task's content digest, the agent definition's digest, the tries and the grading limits."""
        lim = self.grade_limits
        return {"format": TRIAL_FORMAT, "task_digest": task_digest(self.task_dir), "agent_digest": self.agent.digest,
                "tries": self.tries, "grade_limits": [lim.cpus, lim.memory, lim.pids, lim.timeout]}


def task_digest(task_dir: Path) -> str:
    """SHA-256 (hex) over every file of the task folder (paths, contents, exec bits)."""
    return hashlib.sha256(json.dumps(tree_digest(Path(task_dir)), sort_keys=True).encode()).hexdigest()


def finished_result(run_dir: Path, key: dict) -> dict | None:
    """The trial's result when it finished (pass, fail or timeout) with exactly ``key``; else None (no
    result, an ``error``, or a result of another task version, agent definition or setting)."""
    result = read_json(Path(run_dir) / "result.json")
    if isinstance(result, dict) and result.get("status") in FINISHED and result.get("key") == key:
        return result
    return None


def followup_prompt(prompt: str, test_output: str, files: list[str]) -> str:
    """The prompt of the next try: the task's prompt, the last ``FOLLOWUP_LINES`` lines (at most
    ``FOLLOWUP_CHARS`` characters) of the test output, and the instruction to fix ``files``."""
    lines = test_output.rstrip().splitlines()
    tail = "\n".join(lines[-FOLLOWUP_LINES:])
    if len(tail) > FOLLOWUP_CHARS:
        tail = tail[-FOLLOWUP_CHARS:].split("\n", 1)[-1]
    cut = len(tail) < len(test_output.rstrip())
    return render("trial/followup.txt.j2", prompt=prompt, output=tail, cut=cut, files=files)


def remove_special_files(root: Path) -> list[str]:
    """Remove everything below ``root`` that is not a regular file, folder or symlink (device nodes, fifos,
    sockets an agent may create: reading them on the host could hang or read host devices). Returns their
    relative paths. Never follows symlinks."""
    removed = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in files + dirs:
            p = Path(folder) / name
            mode = p.lstat().st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                p.unlink()
                removed.append(p.relative_to(root).as_posix())
    return sorted(removed)


def tree_size(root: Path) -> int:
    """Bytes of the regular files below ``root`` (symlinks not followed)."""
    total = 0
    for folder, _dirs, files in os.walk(root, followlinks=False):
        for name in files:
            st = (Path(folder) / name).lstat()
            if stat.S_ISREG(st.st_mode):
                total += st.st_size
    return total


def work_diff(stub: Path, work: Path, cap: int = DIFF_CAP) -> str:
    """``diff -ruN`` of the work tree against the stub (symlinks compared, not followed), labelled ``stub/``
    and ``work/``, cut to ``cap`` bytes."""
    proc = subprocess.run(["diff", "-ruN", "--no-dereference", stub.name, work.name], cwd=stub.parent,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout
    if len(out) > cap:
        out = out[:cap] + f"\n[... {len(proc.stdout) - cap} bytes of diff cut by lab ...]\n".encode()
    return out.decode("utf-8", errors="replace")


def _keep_out_files(out_dir: Path, dest: Path) -> list[str]:
    kept = []
    for p in sorted(out_dir.rglob("*")):
        if len(kept) >= OUT_FILES_MAX:
            break
        st = p.lstat()
        if stat.S_ISREG(st.st_mode) and st.st_size <= OUT_FILE_CAP:
            rel = p.relative_to(out_dir).as_posix()
            write_atomic(dest / rel, p.read_bytes())
            kept.append(rel)
    return kept


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _fresh(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def _grader_facts(image: str) -> tuple[str, dict]:
    labels = sandbox.image_labels(image)
    try:
        toolchains = json.loads(labels.get("lab.toolchains", "{}"))
    except ValueError:
        toolchains = {}
    return sandbox.image_id(image) or "", toolchains


def _run_tries(t: Trial, env: dict[str, str], files: list[str], result: dict) -> None:
    """The tries of trial ``t``; fills ``result`` in place (tries, status, usage, ...). Raises SandboxError
    or TrialError on infrastructure problems."""
    stub, work = t.scratch / "stub", t.scratch / "work"
    try:
        lay_work_tree(t.task_dir, stub)
        lay_work_tree(t.task_dir, work)
    except RuntimeError as exc:
        raise TrialError(str(exc)) from None
    result["images"]["grader"]["id"], result["toolchains"] = _grader_facts(t.grader_image)
    prompt = (t.task_dir / "prompt.txt").read_text(encoding="utf-8")
    text = prompt
    for n in range(1, t.tries + 1):
        in_dir, out_dir = _fresh(t.scratch / f"in-{n}"), _fresh(t.scratch / f"out-{n}")
        out_dir.chmod(0o777)
        write_atomic(in_dir / "prompt.txt", text)
        if n > 1:
            write_atomic(t.run_dir / f"prompt-{n}.txt", text)
        mounts = [sandbox.Mount(str(work), WORK), sandbox.Mount(str(in_dir), IN_DIR, read_only=True),
                  sandbox.Mount(str(out_dir), OUT_DIR)]
        res = sandbox.run(t.agent_image, t.agent.argv(files, n), mounts=mounts, env=env, network=t.agent.network,
                          limits=t.agent.limits, workdir=WORK, log_path=t.run_dir / f"agent-{n}.log",
                          labels={"lab.role": "agent", "lab.agent": t.agent.name, "lab.task": result["task"]})
        result["images"]["agent"]["id"] = res.image_id
        usage = try_usage(t.agent, res.output, out_dir / USAGE_FILE)
        record = {"try": n, "outcome": "fail", "note": "", "grade": None, "usage": usage,
                  "agent": {"exit_code": res.exit_code, "timed_out": res.timed_out, "oom_killed": res.oom_killed,
                            "seconds": round(res.seconds, 3), "output_bytes": res.output_bytes},
                  "removed_special_files": remove_special_files(work),
                  "out_files": _keep_out_files(out_dir, t.run_dir / f"out-{n}")}
        result["tries"].append(record)
        result["usage"] = add_usage(result["usage"], usage)
        result["agent_seconds"] = round(result["agent_seconds"] + res.seconds, 3)
        if res.timed_out:
            record["outcome"], record["note"] = "timeout", f"the agent ran past its {t.agent.limits.timeout:g} s"
            break
        size = tree_size(work)
        if size > WORK_TREE_CAP:
            record["note"] = f"the work tree grew to {size} bytes (cap {WORK_TREE_CAP}); not graded"
            break
        g = grade(t.task_dir, work, image=t.grader_image, limits=t.grade_limits, cache_volume=t.cache_volume,
                  log_path=t.run_dir / f"grade-{n}.log")
        record["grade"] = g.to_json()
        record["outcome"] = "pass" if g.passed else "fail"
        if g.timed_out:
            record["note"] = f"the tests ran past the grader's {t.grade_limits.timeout:g} s"
        result["grading_seconds"] = round(result["grading_seconds"] + g.seconds, 3)
        result["tests"] = {"ran": g.ran, "passed": g.passed_tests, "failed": g.failed_tests}
        if g.passed:
            result["passed_try"] = n
            break
        text = followup_prompt(prompt, g.output, files)
    last = result["tries"][-1]["outcome"] if result["tries"] else "fail"
    result["status"] = "pass" if result["passed_try"] else ("timeout" if last == "timeout" else "fail")
    if tree_size(work) <= WORK_TREE_CAP:
        write_atomic(t.run_dir / "work.diff", work_diff(stub, work))


@contextlib.contextmanager
def service_for(t: Trial, result: dict) -> Iterator[Trial]:
    """Yield the trial to run: ``t`` itself, or, when its agent declares a service (``rules.services``), ``t``
    with the agent's network set to the namespace of the service's container, started (and waited for) here
    and removed on exit. Records ``result["service"]`` (``{"image", "id", "ready_seconds"}``) and the
    service's output in ``service.log``. Raises SandboxError when the service does not come up, or stopped
    before the tries were over (the agent did not have a fair chance: an infrastructure error)."""
    service = t.agent.service
    if service is None:
        yield t
        return
    log = t.run_dir / "service.log"
    start = time.monotonic()
    handle = sandbox.start_service(service.tag(), service.argv(), limits=service.limits, ready=service.probe(),
                                   labels={"lab.agent": t.agent.name, "lab.task": str(result["task"])}, log_path=log)
    result["service"] = {"image": service.tag(), "id": handle.image_id,
                         "ready_seconds": round(time.monotonic() - start, 3)}
    try:
        yield dataclasses.replace(t, agent=dataclasses.replace(t.agent, network=handle.network))
        ended = sandbox.service_ended(handle)
        if ended:
            raise sandbox.SandboxError(f"the service {service.tag()} stopped during the trial ({ended}); "
                                       "its output is in service.log")
    finally:
        sandbox.stop(handle, log)


def run_trial(t: Trial, environ: Mapping[str, str] = os.environ) -> dict:
    """Run trial ``t`` and write its record (see the module doc); returns the result (the ``result.json``
    data). An infrastructure failure (SandboxError, a failing setup.sh) gives status ``error`` with the
    message in ``error``. Raises AgentError before anything runs when a required variable is missing."""
    env = t.agent.environment(environ)
    meta = read_json(t.task_dir / "task.json") or {}
    files = list(meta.get("solution_files", []))
    start = time.monotonic()
    _fresh(t.run_dir)
    _fresh(t.scratch)
    result = {
        "version": TRIAL_FORMAT, "tier": meta.get("tier"), "task": meta.get("task", t.task_dir.name),
        "language": meta.get("language"), "exercise": meta.get("exercise"), "agent": t.agent.name,
        "status": "error", "passed_try": None, "tries": [], "tries_allowed": t.tries, "error": None,
        "tests": {"ran": 0, "passed": 0, "failed": 0}, "agent_seconds": 0.0, "grading_seconds": 0.0,
        "seconds": 0.0, "usage": None, "started": _now(), "finished": None, "key": t.key(),
        "images": {"agent": {"tag": t.agent_image, "id": ""}, "grader": {"tag": t.grader_image, "id": ""}},
        "toolchains": {},
    }
    try:
        with service_for(t, result) as t_in_service:
            _run_tries(t_in_service, env, files, result)
    except (sandbox.SandboxError, TrialError) as exc:
        result["status"], result["error"] = "error", str(exc)
    finally:
        shutil.rmtree(t.scratch, ignore_errors=True)
    result["seconds"] = round(time.monotonic() - start, 3)
    result["finished"] = _now()
    write_json(t.run_dir / "result.json", result)
    return result


# ---- progress across the trials of one run ----

def progress(run_root: Path, tasks: list[str], since: float, now: float | None = None) -> dict:
    """Where a run stands: ``{"done", "total", "passing", "errors", "done_now", "elapsed", "eta"}``.

    ``run_root`` is ``<runs>/<agent>``, ``tasks`` the run's task names, ``since`` the run's start (epoch
    seconds). ``done`` counts finished results, ``done_now`` those written since ``since``, ``eta`` the
    seconds left at this run's pace, measured from the first of those trials' start (so time spent before
    the first trial, building images, does not count); None before the first trial finishes.
    """
    now = time.time() if now is None else now
    done = passing = errors = done_now = 0
    first = now
    for task in tasks:
        path = Path(run_root) / task / "result.json"
        result = read_json(path)
        if not isinstance(result, dict):
            continue
        if result.get("status") == "error":
            errors += 1
            continue
        done += 1
        passing += result.get("status") == "pass"
        try:
            if path.stat().st_mtime >= since:
                done_now += 1
                first = min(first, dt.datetime.fromisoformat(result["started"]).timestamp())
        except (FileNotFoundError, KeyError, TypeError, ValueError):
            pass
    elapsed = max(0.0, now - since)
    eta = max(0.0, now - first) / done_now * (len(tasks) - done) if done_now else None
    return {"done": done, "total": len(tasks), "passing": passing, "errors": errors, "done_now": done_now,
            "elapsed": elapsed, "eta": eta}


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def progress_line(agent: str, p: dict) -> str:
    """One progress line, e.g. ``[noop] 12/50 done, 3 passing, 0 errors, elapsed 0:01:20, ETA 0:05:10``."""
    return (f"[{agent}] {p['done']}/{p['total']} done, {p['passing']} passing, {p['errors']} errors, "
            f"elapsed {_clock(p['elapsed'])}, ETA {_clock(p['eta'])}")


def summary_line(result: dict) -> str:
    """One line for a finished trial: task, status, the try that passed, seconds."""
    how = f" (try {result['passed_try']})" if result.get("passed_try") else ""
    err = f": {result['error'][:200]}" if result.get("error") else ""
    return f"{result['task']}: {result['status']}{how} in {result['seconds']:.1f} s{err}"


# ---- one trial of a run, as the eval task runs it ----

_cleaned: set[int] = set()


def eval_trial(tier: str, agent_name: str, task: str, tasks: list[str], since: float, tries: int = 2) -> dict:
    """Run the trial of ``agent_name`` on ``task`` of tier ``tier`` unless it already finished with the same
    task, agent definition and settings; print its line and the run's progress; return its result.

    ``tasks`` (the run's task names) and ``since`` (the run's start, epoch seconds) feed the progress line.
    The first trial in a process removes containers left behind by killed runs. Raises AgentError (unknown
    agent, missing variable) and ConfigError; infrastructure failures give a result with status ``error``.
    """
    from rules import images
    from rules.agents import get_agent
    from rules.config import STATE, load_suite

    suite = load_suite(tier)
    agent = get_agent(agent_name)
    t = Trial(agent=agent, task_dir=suite.tasks_dir / task, run_dir=suite.runs_dir / agent.name / task,
              scratch=STATE / "trials" / agent.name / task, agent_image=agent.tag(images.GRADER),
              grader_image=images.GRADER, grade_limits=suite.prove, tries=tries)
    result = finished_result(t.run_dir, t.key())
    if result is not None:
        print(f"{task}: already finished ({result['status']})", flush=True)
        return result
    agent.environment()  # a missing variable stops the run here, before any container starts
    if os.getpid() not in _cleaned:
        sandbox.cleanup(only_dead_owners=True)
        _cleaned.add(os.getpid())
    result = run_trial(t)
    print(summary_line(result), flush=True)
    print(progress_line(agent.name, progress(suite.runs_dir / agent.name, tasks, since)), flush=True)
    return result
