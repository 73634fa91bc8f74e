"""The swe tier's trials: retry until plausible, across agents, and the predictions every run writes.

A swe trial is one task (a SWE-bench instance) and a list of agents. It makes up to ``attempts`` attempts, the
agents taking turns (attempt n is made by agent ``(n - 1) % len(agents)``); each attempt is a one-try trial of
``rules.trial``: a fresh work tree laid by the task's setup.sh, the agent's own container built ``FROM`` the
task's environment image (so ``{test_cmd}``, the repository's pre-existing tests, runs there), then a fresh,
network-less container of that image grades the work tree with the held-out tests.

After each attempt lab measures, on the agent's work alone and on the machine that ran it (a Ray node's engine
included: ``measure_where_run``, the attempt's ``Trial.followup``), whether it is *plausible*
(``rules.tiers.swe.swebench.measure``, after Aider's SWE-bench harness): a non-empty patch that applies to a fresh base,
no syntax error in the Python files it changes, and every pre-existing test that passed at base still passing
(``pretest.sh``, run offline in the task's image, never a held-out test). The first plausible attempt is the
answer and ends the trial; with none, the least bad one (``rules.tiers.swe.swebench.choose``). The choice never reads a
held-out result: those grade every attempt only so the report can show what the choice cost ("resolved by any
attempt", an upper bound, never the score). No attempt gets a second try fed with test output: that output
would come from held-out tests, so tries are 1.

The record is ``<runs>/<run>/<task>/`` (``<task>@<k>`` for repeat k >= 2): ``attempt-<n>/`` (each attempt's
trial record, as ``rules.trial`` writes it), ``patch.diff`` (the chosen attempt's patch against the base) and
``result.json`` (written last, atomically; fields in evals/README.md). After every trial the run's predictions
file ``evals/<tier>/predictions/<run>.jsonl`` (SWE-bench's format: ``instance_id``, ``model_name_or_path`` = the
run id, ``model_patch``) is written again from the run's records, so ``doit evaluate`` or SWE-bench's own
harness can grade it.

The trials serve every tier whose tasks are SWE-bench instances (``swe``, ``swe-multi``): a trial carries its
``tier``'s name, and everything tier-bound (its suite, its group labels, where its scratch and cached baselines
live) is read from that tier (``rules.tiers.get``); the task folder says the rest (its image, ``pretest.sh``).

A *run* is the agents (each with its settings' values) and the attempts: one agent with one attempt is that
agent's run id as in the aider tier (``aider.openai-gpt-4o``); otherwise the agents' run ids joined by ``+``,
then ``.x<attempts>`` when there is more than one attempt (``aider-a+aider-b.x6``).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

from rules import sandbox
from rules.tiers.swe import swebench
from rules.agents import Agent
from rules.config import STATE, ConfigError, Limits, Suite, load_suite
from rules.files import read_json, write_atomic, write_json
from rules.records import SWE_TRIAL_FORMAT, SweResult, now
from rules.runs import eval_kind, record_verdict, trial_for
from rules.trial import (FINISHED, GRADING_FILES, Trial, TrialError, TrialKind, current_grader_id, kept_work,
                         regrade_trial, stored_result, summary_line, task_digest, template_digest, trial_folder)
from rules.tiers import groups_of
from rules.upstream import patch_bytes
from rules.worktree import fresh_folder, unpack_work


@dataclass(frozen=True)
class SweTrial(TrialKind):
    """What one swe trial needs: the ``agents`` (with their settings' values) taking turns, the task folder,
    the record folder (``run_dir``), a scratch folder, the task's environment ``image`` (the agents' images are
    built FROM it and it grades), the grading limits, the number of ``attempts``, the run id, the repeat and the
    ``tier`` whose task it is (its suite, its groups)."""

    agents: tuple[Agent, ...]
    task_dir: Path
    run_dir: Path
    scratch: Path
    image: str
    grade_limits: Limits
    attempts: int = 1
    run: str = ""
    repeat: int = 1
    tier: str = swebench.TIER

    FORMAT = SWE_TRIAL_FORMAT

    @property
    def grader_image(self) -> str:
        """The environment image: it grades."""
        return self.image

    @property
    def label(self) -> str:
        return run_of(list(self.agents), self.attempts)[1]

    def agent_for(self, n: int) -> Agent:
        """The agent that makes attempt ``n`` (1-based): the agents take turns."""
        return self.agents[(n - 1) % len(self.agents)]

    def attempt(self, n: int) -> Trial:
        """Attempt ``n`` as a one-try ``rules.trial.Trial`` recorded in ``attempt-<n>/``."""
        agent = self.agent_for(n)
        return Trial(agent=agent, task_dir=self.task_dir, run_dir=self.run_dir / f"attempt-{n}",
                     scratch=self.scratch / f"attempt-{n}", agent_image=agent.tag(self.image),
                     grader_image=self.image, grade_limits=self.grade_limits, tries=1, run=self.run,
                     repeat=self.repeat,
                     followup=(measure_where_run, {"attempt": n, "agent": agent.name, "image": self.image,
                                                   "limits": self.grade_limits, "tier": self.tier}))

    def run_key(self) -> dict:
        """What the attempts depend on (a change means running the agents again): the task without its
        grading files, each agent's definition and image template, and the attempts."""
        return {"task_digest": task_digest(self.task_dir, without=GRADING_FILES),
                "agents": [a.digest for a in self.agents],
                "image_digests": [template_digest(a) for a in self.agents], "attempts": self.attempts}

    def grade_key(self, grader_id: str) -> dict:
        """What the held-out grading depends on: check.sh, the environment image's id, the grading limits."""
        return self.attempt(1).grade_key(grader_id)

    def kept(self, result: dict) -> bool:
        """Whether every attempt of the stored ``result`` has its record and its work trees kept."""
        stored = _attempt_results(result, self.run_dir)
        return bool(stored) and all(isinstance(x, dict) and x.get("tries") and kept_work(x, self.run_dir / a["folder"])
                                    for x, a in zip(stored, result.get("attempts") or []))

    def perform(self, run_one: Callable[[Trial], dict]) -> dict:
        """``run_swe_trial``, each attempt run through ``run_one``."""
        return run_swe_trial(self, run_one)

    def regrade(self, result: dict, grader_id: str) -> dict | None:
        """``regrade_swe_trial`` of the stored ``result``."""
        return regrade_swe_trial(self, result, grader_id)

    def run_record(self) -> dict:
        """The run folder's ``run.json`` (``run_record``)."""
        return run_record(list(self.agents), self.attempts, self.run)

    def summary(self, result: dict, how: str, seconds: float | None = None) -> str:
        """The trial's line: the chosen attempt, and whether it was plausible or the least bad (``seconds``:
        this command's re-grading, ``TrialKind.summary``)."""
        chosen = (f", chosen attempt {result['chosen'] + 1} of {len(result['attempts'])}"
                  f" ({'plausible' if result.get('plausible') else 'least bad'})"
                  if result.get("chosen") is not None else "")
        return (summary_line(result, seconds if how == "regraded" else None) + chosen
                + (" (re-graded, no agent ran)" if how == "regraded" else ""))

    def after(self, result: dict) -> None:
        """The run's predictions are written again after each trial of its first repeat."""
        if self.repeat == 1:
            write_run_predictions(load_suite(self.tier), self.run)


def run_of(agents: list[Agent], attempts: int) -> tuple[str, str]:
    """The run id and label of ``agents`` (with their values) making ``attempts`` attempts (module doc)."""
    if len(agents) == 1 and attempts == 1:
        return agents[0].run, agents[0].label
    run = "+".join(a.run for a in agents) + (f".x{attempts}" if attempts > 1 else "")
    label = " + ".join(a.label for a in agents) + (f", {attempts} attempts" if attempts > 1 else "")
    return run, label


def run_record(agents: list[Agent], attempts: int, run: str) -> dict:
    """The run folder's ``run.json``: the aider tier's fields (``version``, ``run``, ``agent``: the names joined
    by ``+``, ``settings``: the values when there is one agent, ``label``) plus ``agents`` (names),
    ``agent_settings`` (each agent's values) and ``attempts``."""
    _, label = run_of(agents, attempts)
    single = agents[0].run_record(run) if len(agents) == 1 else {}
    return {"version": 1, "run": run, "agent": "+".join(a.name for a in agents),
            "settings": single.get("settings", {}), "label": label, "agents": [a.name for a in agents],
            "agent_settings": [dict(a.values) for a in agents], "attempts": attempts}


def task_image(task_dir: Path, tier: str = swebench.TIER) -> str:
    """The environment image a published task of ``tier`` runs in (task.json ``image``). Raises ConfigError."""
    image = (read_json(Path(task_dir) / "task.json") or {}).get("image")
    if not isinstance(image, str) or not image:
        raise ConfigError(f"{task_dir}/task.json names no environment image: run `doit gen:{tier}` again")
    return image


# ---- whether a stored trial still counts ----

def _attempt_results(result: dict, run_dir: Path) -> list[dict | None]:
    return [read_json(Path(run_dir) / str(a.get("folder")) / "result.json") for a in result.get("attempts") or []]


def state(result: dict | None, st: SweTrial, grader_id: str | None = None) -> str:
    """Whether the stored ``result`` still counts as ``st``'s: ``"current"`` (it finished with this key),
    ``"regrade"`` (only the held-out grading changed: check.sh, the image's id, the limits; every attempt's
    work tree is kept) or ``"rerun"`` (anything else): ``rules.trial.trial_state``'s rule."""
    return st.state(result, grader_id)


def stale(result: dict, task_dir: Path, agents: Mapping[str, Agent], grade_limits: Limits | None = None,
          tier: str = swebench.TIER) -> bool:
    """For the report: True when the stored ``result`` of a trial of ``tier`` on the task in ``task_dir`` no
    longer counts (the task, an agent's definition as in ``agents`` (``rules.agents.load_agents()``), the
    attempts, or the grading changed; an agent no longer defined makes it stale)."""
    names = result.get("agents") or []
    values = result.get("agent_settings") or [{} for _ in names]
    try:
        resolved = tuple(agents[n].with_values(v) for n, v in zip(names, values))
        image = task_image(task_dir, tier)
        limits = grade_limits or load_suite(tier).prove
    except (KeyError, ConfigError):
        return True
    if not resolved:
        return True
    st = SweTrial(resolved, Path(task_dir), Path(task_dir), Path(task_dir), image, limits,
                  int(result.get("attempts_allowed") or 1), tier=tier)
    return state(result, st) != "current"


# ---- the pre-existing tests an attempt must not break ----

MEASURED = "plausibility.json"  # in an attempt's record folder: its plausibility, measured where it ran


def _baseline(task_dir: Path, pretest_dir: Path, image: str, limits: Limits, grader_id: str, tier: str) -> list[str]:
    """The ids of the pre-existing tests that pass at base, kept in ``.lab/<tier>/pretest/<task>.json`` (of the
    machine that runs them) for the task's digest, the image's id and the limits (computed once, then read)."""
    key = {"task": task_digest(task_dir), "image_id": grader_id, "limits": repr(limits)}
    path = STATE / tier / "pretest" / f"{task_dir.name}.json"
    cached = read_json(path)
    if isinstance(cached, dict) and cached.get("key") == key:
        return list(cached["passed"])
    passed = swebench.pretest_baseline(pretest_dir, task_dir, image=image, limits=limits)
    write_json(path, {"key": key, "passed": passed})
    return passed


def _breakage(task_dir: Path, image: str, limits: Limits, scratch: Path, grader_id: str,
              tier: str) -> Callable[[Path], list[str]]:
    """``broken(work_tree)`` for ``swebench.measure``: the pre-existing tests that passed at base and fail on
    the work tree; a task without pre-existing tests breaks none."""
    script = task_dir / swebench.PRETEST
    if not script.is_file():
        return lambda tree: []
    pretest_dir = swebench.pretest_task(task_dir, script.read_text(encoding="utf-8"), scratch / "pretest")

    def broken(tree: Path) -> list[str]:
        expected = _baseline(task_dir, pretest_dir, image, limits, grader_id, tier)  # only for a patch to measure
        return swebench.pretest_failures(pretest_dir, tree, expected, image=image, limits=limits)

    return broken


def measure_where_run(task_dir: Path, record_dir: Path, result: dict, scratch: Path, *, attempt: int, agent: str,
                      image: str, limits: Limits, tier: str = swebench.TIER) -> None:
    """An attempt's plausibility, measured by the executor that ran it (``Trial.followup``: on that machine's
    engine, a Ray node's included) from its kept work tree (``work-1.tar.gz`` in ``record_dir``): writes
    ``patch.diff`` (its patch against the base) and ``plausibility.json`` (``swebench.Attempt.to_json()``, or
    ``{"error": why}`` when the pre-existing tests could not run there) into ``record_dir``, so they travel with
    the record. ``result``: the attempt's trial result (one that ended in ``error`` is not measured); ``tier``:
    whose task it is (where its baseline is kept);
    ``scratch``: a folder for the pre-existing tests' task, removed after."""
    if result.get("status") == "error":
        return
    tries = result.get("tries") or []
    archive = tries[0].get("work_archive") if tries else None
    try:
        if not archive or not (Path(record_dir) / archive).is_file():
            note = (tries[0].get("note") if tries else "") or "no work tree was kept"
            a = swebench.Attempt(attempt, agent, "", f"the work tree could not be measured: {note}"[:300], [], [])
        else:
            grader_id = ((result.get("images") or {}).get("grader") or {}).get("id") or ""
            broken = _breakage(Path(task_dir), image, limits, Path(scratch), grader_id, tier)
            with tempfile.TemporaryDirectory(prefix="lab-measure-") as tmp:
                tree = Path(tmp) / "work"
                unpack_work(Path(record_dir) / archive, tree)
                a = swebench.measure(Path(task_dir), tree, attempt, agent, broken)
        write_atomic(Path(record_dir) / "patch.diff", patch_bytes(a.patch))
        write_json(Path(record_dir) / MEASURED, a.to_json())
    except sandbox.SandboxError as exc:
        write_json(Path(record_dir) / MEASURED, {"error": str(exc)})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _measured(st: SweTrial, n: int) -> swebench.Attempt:
    """Attempt ``n``'s plausibility as its executor measured it (``measure_where_run``). Raises SandboxError when
    its pre-existing tests could not run there, TrialError when it was not measured."""
    folder = st.run_dir / f"attempt-{n}"
    m = read_json(folder / MEASURED)
    if not isinstance(m, dict):
        raise TrialError(f"attempt {n} came back without its plausibility ({MEASURED}): run it again")
    if m.get("error"):
        raise sandbox.SandboxError(str(m["error"]))
    diff = folder / "patch.diff"
    patch = diff.read_bytes().decode("utf-8", "surrogateescape") if diff.is_file() else ""
    return swebench.Attempt(n, st.agent_for(n).name, patch, m.get("edit"), list(m.get("lint") or []),
                            list(m.get("broken") or []))


# ---- one trial ----

def _attempt_record(n: int, t: Trial, r: dict) -> dict:
    return {"attempt": n, "agent": t.agent.name, "run": t.agent.run, "label": t.agent.label,
            "folder": f"attempt-{n}", "status": r.get("status"), "error": r.get("error"),
            "error_kind": r.get("error_kind"), "agent_seconds": r.get("agent_seconds", 0.0),
            "grading_seconds": r.get("grading_seconds", 0.0), "usage": r.get("usage"), "tests": r.get("tests"),
            "plausible": False, "problems": None, "edit": None, "lint": [], "broken": [], "diff_lines": 0,
            "suspicions": _suspicions(r)}


def _suspicions(r: dict) -> list | None:
    """The suspicion scan's flags of an attempt's trial record ``r`` (its tries'); None when no try was scanned."""
    scanned = [t.get("suspicions") for t in r.get("tries") or [] if isinstance(t.get("suspicions"), list)]
    return [f for flags in scanned for f in flags] if scanned else None


def _sum_usage(attempts: list[dict]) -> dict | None:
    from rules.agents import add_usage

    total = None
    for a in attempts:
        total = add_usage(total, a.get("usage"))
    return total


def _choose(result: SweResult, made: list[swebench.Attempt]) -> None:
    """Fill the chosen attempt's fields of ``result`` from ``made`` (the measured attempts)."""
    i = swebench.choose(made)
    chosen = result.attempts[i]
    result.chosen, result.plausible, result.status = i, made[i].plausible, chosen["status"]
    result.resolved = chosen["status"] == "pass"
    result.passed_try = 1 if result.resolved else None
    result.tests = chosen.get("tests") or {"ran": 0, "passed": 0, "failed": 0}


def new_result(st: SweTrial, meta: dict) -> SweResult:
    """The swe trial's result before any attempt (status ``error``), for the task whose task.json holds
    ``meta``: who runs what, its groups (its tier's ``groups``), the environment image."""
    names = [a.name for a in st.agents]
    return SweResult(
        task=meta.get("task", st.task_dir.name), tier=st.tier,
        groups={k: meta.get(k) for k in groups_of(st.tier)}, run=st.run, label=st.label,
        agent="+".join(names), agents=names, agent_settings=[dict(a.values) for a in st.agents],
        settings=dict(st.agents[0].values) if len(st.agents) == 1 else {}, repeat=st.repeat,
        attempts_allowed=st.attempts, started=now(), images={"grader": {"tag": st.image, "id": ""}})


def run_swe_trial(st: SweTrial, run_one: Callable[[Trial], dict], environ: Mapping[str, str] = os.environ) -> dict:
    """Run swe trial ``st`` and write its record (module doc); returns the result. Each attempt is a one-try
    ``Trial`` run through ``run_one`` (a backend's ``rules.backends.run_through``, which writes its record). An
    attempt that ends in ``error`` (its agent had no fair chance, or lab's side failed) ends the trial as
    ``error`` with that attempt's ``error_kind``: it is retried by the next run. Raises AgentError before
    anything runs when a required variable is missing (in ``environ``), BackendError when the backend cannot
    serve."""
    for agent in st.agents:
        agent.environment(environ)
    start = time.monotonic()
    fresh_folder(st.run_dir)
    result = new_result(st, read_json(st.task_dir / "task.json") or {})
    try:
        grader_id = current_grader_id(st.image, fresh=True)
        if not grader_id:
            raise TrialError(f"the task's environment image {st.image} is missing: `doit gen:{st.tier}` builds it")
        result.images["grader"]["id"] = grader_id
        result.key = st.key(grader_id)
        made = swebench.until_plausible(st.attempts, _attempt_maker(st, result, run_one))
        if result.error is None:
            _choose(result, made)
            write_atomic(st.run_dir / "patch.diff", patch_bytes(made[result.chosen].patch))
    except (sandbox.SandboxError, TrialError) as exc:
        result.status, result.error, result.error_kind = "error", str(exc), "infrastructure"
    finally:
        shutil.rmtree(st.scratch, ignore_errors=True)
    result.usage = _sum_usage(result.attempts)
    result.agent_seconds = round(sum(a.get("agent_seconds") or 0 for a in result.attempts), 3)
    result.grading_seconds = round(sum(a.get("grading_seconds") or 0 for a in result.attempts), 3)
    result.seconds = round(time.monotonic() - start, 3)
    result.finished = now()
    return result.save(st.run_dir / "result.json")


def _attempt_maker(st: SweTrial, result: SweResult,
                   run_one: Callable[[Trial], dict]) -> Callable[[int], swebench.Attempt | None]:
    """``make(n)`` for ``swebench.until_plausible``: attempt ``n`` run (``run_one``; its executor measures it,
    ``measure_where_run``) and recorded in ``result``; None when it ended in ``error`` (then ``result`` says so)."""
    def make(n: int) -> swebench.Attempt | None:
        t = st.attempt(n)
        r = run_one(t)
        rec = _attempt_record(n, t, r)
        result.attempts.append(rec)
        if r.get("status") == "error":
            result.status, result.error_kind = "error", r.get("error_kind") or "infrastructure"
            result.error = f"attempt {n} ({t.agent.label}): {r.get('error')}"
            return None
        a = _measured(st, n)
        rec.update(a.to_json())
        print(f"{result.task}: attempt {n}/{st.attempts} by {t.agent.label}: "
              + ("plausible" if a.plausible else f"not plausible ({_problems(a)})"), flush=True)
        return a

    return make


def _problems(a: swebench.Attempt) -> str:
    parts = ([a.edit] if a.edit else []) + ([f"lint: {a.lint[0]}"] if a.lint else []) + (
        [f"breaks {len(a.broken)} pre-existing test(s), e.g. {a.broken[0]}"] if a.broken else [])
    return "; ".join(parts)[:300]


def regrade_swe_trial(st: SweTrial, result: dict, grader_id: str) -> dict | None:
    """Grade every attempt's kept work tree again with the held-out tests as they are now and rewrite
    ``result.json``; the choice of attempt stays (it never read a held-out result). Returns the new result, or
    None (nothing written) when an attempt cannot be re-graded. Raises SandboxError."""
    import copy

    new = copy.deepcopy(result)
    for rec, stored in zip(new["attempts"], _attempt_results(result, st.run_dir)):
        if not isinstance(stored, dict):
            return None
        again = regrade_trial(st.attempt(rec["attempt"]), stored, grader_id)
        if again is None:
            return None
        rec.update(status=again["status"], tests=again.get("tests"), grading_seconds=again.get("grading_seconds", 0.0),
                   suspicions=_suspicions(again))
    if new.get("chosen") is None:
        return None
    chosen = new["attempts"][new["chosen"]]
    new.update(status=chosen["status"], resolved=chosen["status"] == "pass",
               passed_try=1 if chosen["status"] == "pass" else None, tests=chosen.get("tests"))
    new["grading_seconds"] = round(sum(a.get("grading_seconds") or 0 for a in new["attempts"]), 3)
    new["key"]["grade"] = st.grade_key(grader_id)
    new["images"]["grader"]["id"] = grader_id
    new["graded"] = {"grader_image_id": grader_id, "regraded": True, "at": now()}
    path = st.run_dir / "result.json"
    return SweResult.from_json(new, groups_of(st.tier), path).save(path)


# ---- predictions ----

_predictions_lock = threading.Lock()


def write_run_predictions(suite: Suite, run: str) -> Path:
    """Write ``evals/<tier>/predictions/<run>.jsonl`` (the tier of ``suite``) from the run's finished records
    (repeat 1; a trial that ended in ``error`` has no prediction yet): each task's chosen patch. Returns the
    path."""
    root = suite.runs_dir / run
    patches: dict[str, str] = {}
    for path in sorted(root.glob("*/result.json")):
        r = read_json(path)
        if "@" in path.parent.name or not isinstance(r, dict) or r.get("status") not in FINISHED:
            continue
        diff = path.parent / "patch.diff"
        patches[str(r.get("task") or path.parent.name)] = (diff.read_text(encoding="utf-8", errors="surrogateescape")
                                                           if diff.is_file() else "")
    with _predictions_lock:
        return swebench.write_predictions(suite, run, run, patches)


# ---- one trial of a run, as doit's eval task runs it ----

def make_swe_trial(agents: list[tuple[str, Mapping[str, str]]], task: str, attempts: int, run: str | None = None,
                   repeat: int = 1, tier: str = swebench.TIER) -> SweTrial:
    """The SweTrial of the agents named in ``agents`` (name, settings values) on ``task`` of ``tier``, as
    ``eval_swe_trial`` runs it and doit's up-to-date check judges it. Raises AgentError, ConfigError."""
    from rules.agents import get_agent

    suite = load_suite(tier)
    resolved = [get_agent(name).with_values(values) for name, values in agents]
    run = run or run_of(resolved, attempts)[0]
    folder = trial_folder(task, repeat)
    task_dir = suite.tasks_dir / task
    return SweTrial(tuple(resolved), task_dir, suite.runs_dir / run / folder, STATE / "trials" / tier / run / folder,
                    task_image(task_dir, tier), suite.prove, attempts, run, repeat, tier)


def swe_trial_uptodate(agents: list[tuple[str, Mapping[str, str]]], task: str, attempts: int, run: str,
                       repeat: int = 1, tier: str = swebench.TIER) -> bool:
    """doit's up-to-date check of a swe trial: True exactly when ``state`` says ``current``; False when the
    trial cannot be made (a ConfigError: ``eval_swe_trial``, its action, then says why). The SweTrial built
    here is the one ``eval_swe_trial`` then runs (``rules.runs.trial_for``)."""
    try:
        st = trial_for(_key(agents, task, attempts, run, repeat, tier),
                       lambda: make_swe_trial(agents, task, attempts, run, repeat, tier), keep=True)
        return record_verdict(st.run_dir, st.state(stored_result(st.run_dir)) == "current")
    except ConfigError:
        return False


def _key(agents: list[tuple[str, Mapping[str, str]]], task: str, attempts: int, run: str, repeat: int,
         tier: str) -> tuple:
    """The doit task's identity of a swe trial (what ``trial_for`` keys it by)."""
    return ("swe", tier, tuple((name, tuple(sorted(values.items()))) for name, values in agents), task, attempts,
            run, repeat)


def eval_swe_trial(agents: list[tuple[str, Mapping[str, str]]], task: str, folders: list[str], since: float,
                   attempts: int, run: str, repeat: int = 1, backend: str = "local", cluster: str | None = None,
                   tier: str = swebench.TIER) -> dict:
    """Run the swe trial (a task of ``tier``) unless its stored result is current; re-grade it when only the
    held-out grading changed; write the run's ``run.json`` and predictions; print its line and the run's
    progress (``rules.runs.eval_kind``). Raises AgentError, ConfigError, BackendError."""
    st = trial_for(_key(agents, task, attempts, run, repeat, tier),
                   lambda: make_swe_trial(agents, task, attempts, run, repeat, tier), keep=False)
    return eval_kind(st, folders, since, backend, cluster)


def published_envs(suite: Suite, tasks: Iterable[str]) -> dict[str, str]:
    """The environment images the given published tasks run in: env name (task.json ``env``) → image tag."""
    out: dict[str, str] = {}
    for task in tasks:
        meta = read_json(suite.tasks_dir / task / "task.json") or {}
        if isinstance(meta.get("env"), str) and isinstance(meta.get("image"), str):
            out[meta["env"]] = meta["image"]
    return dict(sorted(out.items()))
