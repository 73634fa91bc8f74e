"""Orchestration of a run's trials: which trial runs, through which backend, and what is printed.

For each trial doit's eval task asks ``trial_uptodate`` (is its stored result current?) and then runs
``eval_trial`` (or a tier's own ``eval_*`` over a ``rules.trial.TrialKind``): ``eval_kind`` writes the run's
``run.json``, judges the stored result (``TrialKind.state``), keeps it, re-grades it without the agent
(``TrialKind.regrade``) or runs the trial through a backend (``rules.backends.run_through``), then prints the
trial's line and the run's progress (``announce``: ``progress``, ``progress_line``) and, when most trials of a
finished run are errors, a warning (``error_warning``). The calls go one way: runs → backends → trial →
grade → sandbox. The trial built for doit's up-to-date check is the one its action runs (``trial_for``).
"""
from __future__ import annotations

import datetime as dt
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Hashable, Mapping

from rules import cli, sandbox
from rules.backends import run_through
from rules.config import ConfigError
from rules.files import write_json
from rules.trial import Trial, TrialKind, current_grader_id, stored_result, trial_folder

_built: dict[Hashable, TrialKind] = {}
_built_lock = threading.Lock()
# a trial folder's up-to-date check (a Step's ``current``) and what it said in this command: the progress line
# counts a result from before the command as done only when it still counts
_checks: dict[str, tuple] = {}
_verdicts: dict[str, bool] = {}


def register_check(folder: Path, check: tuple) -> None:
    """Remember ``check`` (a callable and its arguments, True when the stored result in trial ``folder`` still
    counts: doit's up-to-date check of it) for ``still_counts``."""
    _checks[str(Path(folder))] = check


def record_verdict(folder: Path, current: bool) -> bool:
    """Note what the up-to-date check of trial ``folder`` said in this command; returns ``current``."""
    _verdicts[str(Path(folder))] = current
    return current


def verdict(folder: Path) -> bool | None:
    """What the up-to-date check of trial ``folder`` said in this command, or None when it did not run yet."""
    return _verdicts.get(str(Path(folder)))


def still_counts(folder: Path) -> bool:
    """Whether the stored result in trial ``folder``, written before this command, still counts (doit's
    up-to-date check of it, run here once when doit has not run it yet); True when no check is known."""
    known = verdict(folder)
    if known is not None:
        return known
    check = _checks.get(str(Path(folder)))
    if check is None:
        return True
    fn, args = check
    return bool(fn(*args))  # the check records its verdict


def trial_for(key: Hashable, make: Callable[[], TrialKind], keep: bool) -> TrialKind:
    """The trial of doit task ``key``. doit's up-to-date check (``keep`` True) always makes it anew (``make()``)
    and keeps it; the action (``keep`` False) takes the one kept (so the trial it runs is the one judged), or
    makes one when no check ran."""
    if keep:
        t = make()
        with _built_lock:
            _built[key] = t
        return t
    with _built_lock:
        found = _built.pop(key, None)
    return found if found is not None else make()


def make_trial(tier: str, agent_name: str, task: str, tries: int, settings: Mapping[str, str] | None = None,
               repeat: int = 1, run: str | None = None) -> Trial:
    """The Trial of ``agent_name`` (with its ``settings`` values; None: from the environment and defaults) on
    ``task`` of tier ``tier``, repeat ``repeat`` of run ``run`` (None: ``rules.agents.run_id``), as
    ``eval_trial`` runs it and doit's up-to-date check (``trial_uptodate``) judges it: keep the two in this
    one place."""
    from rules import images
    from rules.agents import get_agent, run_id
    from rules.config import STATE, load_suite

    suite = load_suite(tier)
    agent = get_agent(agent_name)
    agent = agent.with_values(settings) if settings is not None else agent.resolve()
    run = run or run_id(agent, suite.runs_dir)
    folder = trial_folder(task, repeat)
    return Trial(agent=agent, task_dir=suite.tasks_dir / task, run_dir=suite.runs_dir / run / folder,
                 scratch=STATE / "trials" / run / folder, agent_image=agent.tag(images.GRADER),
                 grader_image=images.GRADER, grade_limits=suite.prove, tries=tries, run=run, repeat=repeat)


def _trial_key(tier, agent_name, task, tries, settings, repeat, run) -> tuple:
    """The doit task's identity of a trial (what ``trial_for`` keys it by)."""
    return ("trial", tier, agent_name, task, tries, tuple(sorted((settings or {}).items())) if settings is not None
            else None, repeat, run)


def trial_uptodate(tier: str, agent_name: str, task: str, tries: int, settings: Mapping[str, str] | None = None,
                   repeat: int = 1, run: str | None = None) -> bool:
    """doit's up-to-date check of a trial task: True exactly when ``trial_state`` says ``current``; False when
    the trial cannot be made (a ConfigError: ``eval_trial``, its action, then says why). The Trial built here is
    the one ``eval_trial`` then runs (``trial_for``). A tier's trial Step takes it as ``current`` and
    ``eval_trial`` as ``action``, as they are."""
    key = _trial_key(tier, agent_name, task, tries, settings, repeat, run)
    try:
        t = trial_for(key, lambda: make_trial(tier, agent_name, task, tries, settings, repeat, run), keep=True)
        return record_verdict(t.run_dir, t.state(stored_result(t.run_dir)) == "current")
    except ConfigError:
        return False


def eval_trial(tier: str, agent_name: str, task: str, tasks: list[str], since: float, tries: int = 2,
               settings: Mapping[str, str] | None = None, repeat: int = 1, run: str | None = None,
               backend: str = "local", cluster: str | None = None) -> dict:
    """Run the trial of ``agent_name`` (with its ``settings`` values) on ``task`` of tier ``tier`` unless its
    stored result is current (``trial_state``); re-grade it without the agent when only the grading changed;
    print its line and the run's progress; return its result. When the run's last trial ends and most trials
    are errors, a warning line goes to stderr (``error_warning``).

    ``settings`` are the agent's setting values (name → value; None: from the environment and defaults),
    ``repeat`` the repeat number (1-based), ``run`` the run id (None: ``rules.agents.run_id``). The record goes
    to ``<runs>/<run>/<task>`` (``<task>@<repeat>`` from repeat 2 on), beside the run's ``run.json``. ``tasks``
    (the run's trial folder names) and ``since`` (the run's start, epoch seconds) feed the progress line. The
    trial runs through ``backend`` ("local", or "ray" at ``cluster``: rules.backends), whose first use in a
    process checks its nodes and removes containers left behind by runs that are provably gone (re-grading
    stays on this machine). Raises AgentError (unknown agent, missing variable or setting), ConfigError and
    BackendError (a backend that cannot serve); infrastructure failures give a result with status ``error``.
    """
    key = _trial_key(tier, agent_name, task, tries, settings, repeat, run)
    t = trial_for(key, lambda: make_trial(tier, agent_name, task, tries, settings, repeat, run), keep=False)
    return eval_kind(t, tasks, since, backend, cluster)


def eval_kind(t: TrialKind, folders: list[str], since: float, backend: str = "local",
              cluster: str | None = None) -> dict:
    """Settle trial ``t`` of any kind: write its run's ``run.json``; keep its stored result when current,
    re-grade it when only the grading changed, else run it (its trials go through ``backend``, at ``cluster``);
    then ``t.after(result)`` and print its line and the run's progress (``announce``; ``folders``: the run's
    trial folder names, ``since``: the run's start). Returns the result."""
    runs = t.run_dir.parent
    write_json(runs / "run.json", t.run_record(), only_if_changed=True)
    stored = stored_result(t.run_dir)
    grader_id = current_grader_id(t.grader_image, fresh=True)
    start = time.monotonic()
    result, how = settle(t.run_dir.name, stored, t.state(stored, grader_id), lambda: t.regrade(stored, grader_id),
                         lambda: t.perform(lambda one: run_through(one, backend, cluster)))
    if how != "stored":
        t.after(result)
        announce(t.summary(result, how, time.monotonic() - start), t.run, t.label, runs, folders, since)
    return result


def settle(folder: str, stored: dict | None, state: str, regrade: Callable[[], dict | None],
           run: Callable[[], dict]) -> tuple[dict, str]:
    """A trial's result by its ``state`` (``trial_state``'s word): the ``stored`` one when current; else
    ``regrade()`` when only the grading changed (None: it cannot stand alone); else ``run()``. A grader that
    cannot run keeps the stored result. Returns (result, how: "stored" | "regraded" | "ran")."""
    if state == "current":
        print(f"{folder}: already finished ({stored['status']})", flush=True)
        return stored, "stored"
    if state == "regrade":
        try:
            result = regrade()
        except sandbox.SandboxError as exc:
            print(f"{folder}: cannot re-grade ({exc}); the stored result is kept", file=sys.stderr, flush=True)
            return stored, "stored"
        if result is not None:
            return result, "regraded"
    return run(), "ran"


def command_folders(run: str, folders: list[str], targets: list[str]) -> list[str]:
    """The trial folders of run ``run`` (its ``folders``) that this command (its doit ``targets``) runs: those
    it names one by one (``doit eval:<run>/<folder>``) when it names nothing but single trials, else all of
    them (``doit run``, ``doit eval:<run>``, the default tasks)."""
    if not targets or any(not t.startswith("eval:") or "/" not in t for t in targets):
        return folders
    named = {t.split("/", 1)[1] for t in targets if t.split(":", 1)[1].split("/", 1)[0] == run}
    return [f for f in folders if f in named] or folders


def announce(line: str, run: str, label: str, runs: Path, folders: list[str], since: float) -> None:
    """Print a finished trial's ``line`` and the progress of what this command runs of its run
    (``command_folders``: one trial named alone counts 1 of 1, not the whole run); when the run's last trial is in and most are
    errors, the warning line (``error_warning``) to stderr."""
    print(line, flush=True)
    p = progress(runs, command_folders(run, folders, cli.targets()), since)
    print(progress_line(run, p), flush=True)
    if p["done"] + p["errors"] == p["total"]:
        warning = error_warning(label, runs, folders, since)
        if warning:
            print(warning, file=sys.stderr, flush=True)


def progress(run_root: Path, tasks: list[str], since: float, now: float | None = None) -> dict:
    """Where a run stands: ``{"done", "total", "passing", "errors", "done_now", "elapsed", "eta"}``.

    ``run_root`` is ``<runs>/<agent>``, ``tasks`` the run's task names, ``since`` the run's start (epoch
    seconds). ``done`` counts finished results that still count (one written before ``since`` whose trial
    doit's up-to-date check finds stale is still to be redone: ``still_counts``), ``errors`` the errors written
    since ``since`` (an older one is still to be redone by this run), ``done_now`` the finished results written since ``since``, ``eta`` the
    seconds left at this run's pace, measured from the first of those trials' start (so time spent before
    the first trial, building images, does not count); None before the first trial finishes.
    """
    now = time.time() if now is None else now
    done = passing = errors = done_now = 0
    first = now
    for task in tasks:
        path = Path(run_root) / task / "result.json"
        result = stored_result(path.parent)
        if not isinstance(result, dict):
            continue
        if result.get("status") == "error":
            try:  # an error an earlier command left is this run's to redo, not one of its errors
                errors += path.stat().st_mtime >= since
            except FileNotFoundError:
                pass
            continue
        try:
            if path.stat().st_mtime < since and not still_counts(path.parent):
                continue  # a stale result (its task, agent or grading changed): this run redoes it
        except FileNotFoundError:
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


def error_warning(agent: str, run_root: Path, tasks: list[str], since: float | None = None) -> str | None:
    """The loud line for the end of a run in which most trials ended in ``error``: names the agent, the
    count, the first error and the fix (``FIXES``, by its kind); else None. The run has ended when every task has a result and no ``error``
    is older than ``since`` (the run's start, epoch seconds: such a trial is still to be retried by it)."""
    paths = [Path(run_root) / task / "result.json" for task in tasks]
    results = [stored_result(p.parent) for p in paths]
    if not tasks or not all(isinstance(r, dict) for r in results):
        return None
    if since is not None and any(r.get("status") == "error" and p.stat().st_mtime < since
                                 for p, r in zip(paths, results)):
        return None
    errors = [(task, r) for task, r in zip(tasks, results) if r.get("status") == "error"]
    if len(errors) * 2 <= len(tasks):
        return None
    task, first = errors[0]
    kind = f" ({first.get('error_kind')})" if first.get("error_kind") else ""
    fix = FIXES.get(first.get("error_kind") or "infrastructure", FIXES["infrastructure"]).format(
        trial=Path(run_root) / task)
    return (f"lab: WARNING: {len(errors)} of {len(tasks)} trials of agent {agent!r} ended in error{kind}, not "
            f"graded; first, {task}: {str(first.get('error') or '')[:300]}; {fix}")


FIXES = {  # what to do about a run whose every trial ended in error, by the first error's kind
    "agent": "check the agent's command, image and keys in evals/agents.toml (its log: {trial}/agent-1.log)",
    "infrastructure": "check the Docker engine and lab's images (`docker info`, `doit image:grader`)",
}


def run_failed(run: str, run_root: Path, tasks: list[str]) -> str | None:
    """The one loud line for the end of ``doit run`` when every trial of run ``run`` (the folder ``run_root``:
    ``<task>`` and ``<task>@<k>`` folders of the published ``tasks``) that has a result ended in ``error``, so
    nothing was graded: it names the run, the count, the first error and the fix (``FIXES``, by its kind). None
    when any trial finished, or none has a result."""
    folders = sorted(p for p in Path(run_root).glob("*") if p.name.split("@")[0] in set(tasks))
    results = [(p, stored_result(p)) for p in folders]
    results = [(p, r) for p, r in results if isinstance(r, dict)]
    if not results or any(r.get("status") != "error" for _, r in results):
        return None
    trial, first = results[0]
    fix = FIXES.get(first.get("error_kind") or "infrastructure", FIXES["infrastructure"]).format(trial=trial)
    return (f"lab: run {run!r} FAILED: all {len(results)} of its trials ended in error, none was graded; first, "
            f"{trial.name}: {str(first.get('error') or '')[:300]}; {fix}, then run it again (errors are retried)")
