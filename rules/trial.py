"""One trial: an agent tries one task, in its own container, and a fresh grader container grades the work.

A trial lays a fresh work tree with the task's ``setup.sh``, starts the agent's container with only the work
tree (``/work``, read-write), the prompt (``/lab/in``, read-only) and an empty private folder (``/lab/out``)
mounted, runs the agent in it, then grades the work tree with ``rules.grade`` (no network, pristine
non-solution files laid back, limits, a timeout that kills the container). After a failed try the agent runs
again in the same work tree with a follow-up prompt holding the end of the test output (``tries=2``: the
polyglot benchmark's pass@2). A try whose agent ran past its time limit is graded all the same (its work tree
as it was) and followed the same way. A try that leaves the work tree byte-identical to the last graded one
(``work_digest``: contents, modes, links) is not graded again: the earlier grading stands for it
(``reused_from_try`` in its grade), so an agent that changes nothing pays no second grading and gains no second
draw of a flaky test. The scratch folder (stub, work tree, in and out folders) is a filesystem
of the agent's ``disk`` limit (``rules.disk``), so an agent cannot fill the host's disk.

One agent container per trial (``AgentContainer``): each try is a command run in the container the first try started,
so what the agent leaves outside the work tree (``/tmp``, its home) is still there on the next try, as it is
for Aider's own benchmark, which keeps one aider process for both tries; nothing it started runs on after its
try, and the container is frozen between tries (nothing in it runs while lab archives, digests and grades the
work tree). A try that ran past its time limit (its container is killed with it) or ran out of memory leaves the next
try a fresh container, and that try's note says so. An agent defined with ``container = "try"`` gets a fresh
container for every try instead. The mode is part of the trial's key (``Trial.run_key``).

``error`` means the agent never had a fair chance: its command could not run (exit 126/127 in a fresh
container: in the container its last try left, where the agent may have removed what it needs, the command is
run again in a fresh one, and the try's note says so), or its container could not start or it reported a provider error with no tokens sent (``errors`` in agents.toml); rate limits
are retried a few times with a wait. Such a trial is kept apart from ``fail`` and redone by the next run.

The record goes to ``<runs>/<run>/<task>/`` (``<task>@<k>`` for repeat k >= 2; the run is the agent with its
settings' values, see rules.agents): ``result.json`` (written last, atomically; its fields are
documented in evals/README.md), ``agent-<try>.log``, ``grade-<try>.log``, ``prompt-<try>.txt`` for follow-up
prompts, ``out-<try>/`` (small files the agent left in ``/lab/out``), ``work-<try>.tar.gz`` (the work tree
after the try, as graded: re-grading needs no agent) and ``work.diff`` (``diff -ruN`` of the work tree against
the stub); the record is ``rules.records.TrialResult``. Tier-agnostic: a task is a folder with ``task.json``
(``task``, its tier and groups, ``solution_files``; ``graded``), ``prompt.txt``, ``setup.sh`` and ``check.sh``;
the work-tree tools are ``rules.worktree``'s.

Whether a stored result still counts is decided in one place, ``trial_state``: ``current``, ``regrade`` (only
the grading changed: ``check.sh``, the grader image, the grading limits; ``regrade_trial`` grades the kept work
trees again) or ``rerun`` (anything the agent saw or is changed). ``TrialKind`` is what every kind of trial
offers the orchestration (``rules.runs``, which runs them through ``rules.backends``: this module imports
neither); ``Trial`` is one agent's tries, ``rules.tiers.swe.swerun.SweTrial`` agents' attempts.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import json
import os
import re
import stat
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator, Mapping

from rules import disk, sandbox
from rules.agents import (IN_DIR, OUT_DIR, USAGE_FILE, WORK, Agent, add_usage, provider_error, try_trajectory,
                          try_usage)
from rules.config import STATE, ConfigError, Limits
from rules.files import read_json, sha256_bytes, tree_digest, write_atomic
from rules.grade import grade
from rules.services import GATEWAY_STATE
from rules.records import TRIAL_FORMAT, TRIAL_RECORD_FORMAT, TrialResult, TryRecord, now
from rules.render import render
from rules.scan import MAX_FLAGS, cut_flag, scan
from rules.tiers import conformance_of, groups_of, suspicions_of
from rules.worktree import (SCAN_CAP, archive_work, fresh_folder, graded_diff, graded_tree, lay_work_tree,
                            lay_work_tree_like, remove_special_files, remove_tree, tree_problem, tree_size, unpack_work,
                            work_diff, work_digest)

STATUSES = ("pass", "fail", "timeout", "over_budget", "tampered", "error")
FINISHED = ("pass", "fail", "timeout", "over_budget", "tampered")  # an `error` is retried by the next run
GRADING_FILES = ("check.sh",)  # the task files only the grader reads: a change to them re-grades, never re-runs
COULD_NOT_RUN = (126, 127)  # exit codes of a command that could not run (not executable, not found)
RATE_LIMIT_WAITS = (30.0, 60.0, 120.0)  # seconds before each retry of a rate-limited try (LAB_RATE_LIMIT_WAITS)
ARCHIVE_CAP = 64 * 1024 * 1024  # a work tree larger than this is graded but not kept (no re-grading then)
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASS|AUTH|CRED", re.I)  # variables whose values lab never stores
FOLLOWUP_LINES = 100  # the follow-up prompt holds at most the last 100 lines ...
FOLLOWUP_CHARS = 8000  # ... and 8000 characters of the test output
WORK_TREE_CAP = 256 * 1024 * 1024  # a work tree larger than this after the agent is not graded
OUT_FILE_CAP = 1024 * 1024  # files the agent leaves in /lab/out are kept up to this size, ...
OUT_FILES_MAX = 20  # ... and this many


class TrialError(Exception):
    """The trial could not be set up (an infrastructure problem: the trial's status is ``error``)."""


class TrialKind:
    """What every kind of trial offers the orchestration (``rules.runs``): its identity keys (``run_key``:
    what the agent's side depends on; ``grade_key``: what the grading depends on; ``key``: both, with the
    record's ``FORMAT``), whether a stored result still counts (``state``: ``trial_state``'s rule, with
    ``kept``: whether its work trees are kept), ``perform`` (run it, each of its one-agent trials through
    ``run_one``, and write its record), ``regrade`` (grade its kept work again), and what a run prints and
    keeps (``run_record``: the run's run.json; ``label``; ``summary``; ``after``: what follows a new result).
    A kind is a frozen dataclass with at least ``task_dir``, ``run_dir``, ``grade_limits``, ``run`` and
    ``repeat``: ``Trial`` is the kind of one agent making tries, ``rules.tiers.swe.swerun.SweTrial`` that of agents taking
    turns at attempts, each attempt a one-try ``Trial``."""

    FORMAT: ClassVar[int] = TRIAL_FORMAT
    run_dir: Path
    run: str

    @property
    def label(self) -> str:
        """The run's label, as progress lines show it."""
        raise NotImplementedError

    def run_key(self) -> dict:
        raise NotImplementedError

    def grade_key(self, grader_id: str) -> dict:
        raise NotImplementedError

    def key(self, grader_id: str) -> dict:
        """``{"format", "run": run_key(), "grade": grade_key(grader_id)}``: result.json's ``key``."""
        return {"format": self.FORMAT, "run": self.run_key(), "grade": self.grade_key(grader_id)}

    def kept(self, result: dict) -> bool:
        """Whether every graded try of the stored ``result`` has its work tree kept (``kept_work``)."""
        return kept_work(result, self.run_dir)

    def state(self, result: dict | None, grader_id: str | None = None) -> str:
        """``trial_state`` of the stored ``result`` for this trial: "current", "regrade" or "rerun"."""
        return trial_state(result, self, grader_id)

    def perform(self, run_one: Callable[["Trial"], dict]) -> dict:
        raise NotImplementedError

    def regrade(self, result: dict, grader_id: str) -> dict | None:
        raise NotImplementedError

    def run_record(self) -> dict:
        raise NotImplementedError

    def summary(self, result: dict, how: str, seconds: float | None = None) -> str:
        """The trial's line once settled (``how``: "ran" or "regraded"; ``seconds``: this command's re-grading)."""
        return summary_line(result, seconds if how == "regraded" else None) + (
            " (re-graded, the agent did not run)" if how == "regraded" else "")

    def after(self, result: dict) -> None:
        """What follows a new result of this trial (nothing, unless the kind keeps more)."""


@dataclass(frozen=True)
class Trial(TrialKind):
    """What one trial needs: the agent, the task folder, the record folder (``run_dir``), a scratch folder
    for the stub, the work tree and the in/out folders (wiped before and after; a filesystem of the agent's
    ``disk`` limit while the trial runs), the agent image tag, the grader image tag, the grading limits and
    the number of tries. Identity fields (what the agent saw or is) belong in ``run_key``, grading ones in
    ``grade_key``: ``trial_state`` compares exactly those."""

    agent: Agent
    task_dir: Path
    run_dir: Path
    scratch: Path
    agent_image: str
    grader_image: str
    grade_limits: Limits
    tries: int = 2
    run: str = ""  # the run id (the results folder's name); "" = the agent's own (``Agent.run``)
    repeat: int = 1  # which repeat of this task in the run (1-based; folder ``<task>@<repeat>`` from 2 on)
    gateway: Any = None  # the running gateway's sandbox.ServiceHandle (set by service_for), else None
    service: Any = None  # the running service's sandbox.ServiceHandle (set by service_for), else None
    # (fn, kwargs) the executor runs where the trial ran, after it: fn(task_dir, record_dir, result, scratch,
    # **kwargs) may write files into the record folder, which then travel with the record (rules.backends)
    followup: Any = None

    @property
    def cache_volume(self) -> str:
        """The grader's build-cache volume: the proofs' (``lab-cache-prove``), which only the tier's own
        reference and stub code ever wrote and which every trial's grading mounts read-only
        (``rules.grade.grade``), so no agent's code can plant a build result for another grading."""
        from rules.prove import CACHE_VOLUME

        return CACHE_VOLUME

    @property
    def label(self) -> str:
        return self.agent.label

    def run_key(self) -> dict:
        """What the agent's side of a result depends on (a change means the agent must run again): the task
        without its grading files (prompt, task.json, setup.sh, workspace/), the agent definition's digest,
        its image template's digest, the tries, and how its container ran (``agent_container``: "trial", one
        container for all the tries, or "try"; results from before the field ran a fresh one per try)."""
        return {"task_digest": task_digest(self.task_dir, without=GRADING_FILES), "agent_digest": self.agent.digest,
                "image_digest": template_digest(self.agent), "tries": self.tries,
                "agent_container": self.agent.container}

    def grade_key(self, grader_id: str) -> dict:
        """What the grading of a result depends on (a change means grading the kept work trees again):
        ``check.sh``'s digest, the grader image id ``grader_id`` and the grading limits."""
        return {"check_digest": check_digest(self.task_dir), "grader_image_id": grader_id,
                "grade_limits": dataclasses.asdict(self.grade_limits)}

    def perform(self, run_one: Callable[["Trial"], dict]) -> dict:
        """Run this trial through ``run_one`` (a backend's ``run_through``, which writes its record)."""
        return run_one(self)

    def regrade(self, result: dict, grader_id: str) -> dict | None:
        """``regrade_trial`` of the stored ``result``."""
        return regrade_trial(self, result, grader_id)

    def run_record(self) -> dict:
        """The run folder's ``run.json``: the agent's (``Agent.run_record``)."""
        return self.agent.run_record(self.run)

    def new_result(self, meta: dict) -> TrialResult:
        """The trial's result before anything ran (status ``error``, no tries), for the task whose task.json
        holds ``meta``: who runs what, its groups (its tier's ``group_keys``), the image tags."""
        tier = meta.get("tier")
        return TrialResult(
            task=meta.get("task", self.task_dir.name), agent=self.agent.name, tier=tier,
            groups={k: meta.get(k) for k in groups_of(tier)}, run=self.run or self.agent.run,
            settings=dict(self.agent.values), label=self.agent.label, repeat=self.repeat,
            tries_allowed=self.tries, started=now(),
            images={"agent": {"tag": self.agent_image, "id": ""}, "grader": {"tag": self.grader_image, "id": ""}})


def task_digest(task_dir: Path, without: tuple[str, ...] = ()) -> str:
    """SHA-256 (hex) over every file of the task folder (paths, contents, exec bits), leaving out the files
    named in ``without`` (paths relative to the task folder)."""
    files = {k: v for k, v in tree_digest(Path(task_dir)).items() if k not in without}
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()


def check_digest(task_dir: Path) -> str:
    """SHA-256 (hex) of the task's grading files (``check.sh``); "" when it has none."""
    parts = []
    for name in GRADING_FILES:
        p = Path(task_dir) / name
        parts.append(f"{name}:{sha256_bytes(p.read_bytes())}" if p.is_file() else f"{name}:-")
    return sha256_bytes("\n".join(parts).encode())


def template_digest(agent: Agent) -> str:
    """SHA-256 (hex) of what the agent's images are built from (``Agent.images_digest``: each rendered
    Dockerfile and every file it copies, for the agent's image, its service's and its gateway's); "" when its
    template is missing (the image cannot be built then, and its build says why)."""
    try:
        return agent.images_digest()
    except Exception:  # noqa: BLE001 - a template that does not render: the image cannot be built, the build says why
        return ""


def kept_work(result: dict, run_dir: Path) -> bool:
    """True when every graded try of ``result`` has its work tree kept in ``run_dir`` (so it can be graded
    again without the agent)."""
    for rec in result.get("tries") or []:
        if rec.get("grade") is not None:
            name = rec.get("work_archive")
            if not name or not (Path(run_dir) / name).is_file():
                return False
    return True


def trial_state(result: dict | None, trial: TrialKind, grader_id: str | None = None) -> str:
    """Whether the stored ``result`` (result.json's data, or None) still counts as ``trial``'s:

    ``"current"``: it finished (pass, fail, timeout, tampered) with this trial's key; ``"regrade"``: it
    finished and only the grading changed (``check.sh``, the grader image id, the grading limits) and every
    graded try's work tree is kept; ``"rerun"``: anything else (no result, an ``error``, another result format,
    task prompt/stub/setup/workspace, agent definition or image template, tries; or work trees not kept).
    ``grader_id`` is the current grader image id; None looks it up (the docker CLI, cached per process).
    The trial's kind gives its record's format (``FORMAT``) and whether its work trees are kept (``kept``).
    """
    if not isinstance(result, dict) or result.get("status") not in FINISHED:
        return "rerun"
    key = result.get("key")
    if not isinstance(key, dict) or key.get("format") != trial.FORMAT or key.get("run") != trial.run_key():
        return "rerun"
    if grader_id is None:
        grader_id = current_grader_id(trial.grader_image)
    if key.get("grade") == trial.grade_key(grader_id):
        return "current"
    return "regrade" if trial.kept(result) else "rerun"


_grader_ids: dict[str, str] = {}


def current_grader_id(tag: str, fresh: bool = False) -> str:
    """The local id of the grader image ``tag`` ("" when missing); looked up once per process unless
    ``fresh`` (doit's up-to-date checks ask for every trial). A fresh look-up asks the engine through the SDK
    (a few ms; a trial that runs loads it anyway), the cached one through the docker CLI (no SDK import for
    an up-to-date check)."""
    if fresh or tag not in _grader_ids:
        try:
            _grader_ids[tag] = (sandbox.image_id(tag) if fresh else sandbox.image_id_quick(tag)) or ""
        except sandbox.SandboxError:  # no engine: as a missing image (the trial's own start says why)
            _grader_ids[tag] = ""
    return _grader_ids[tag]


def result_state_for_report(result: dict | None, task_dir: Path, agent: Agent, grade_limits: Limits,
                            run_dir: Path, grader_image: str, grader_id: str | None = None,
                            **trial_fields) -> str:
    """``trial_state`` for the report, which has no Trial: the stored ``result`` of ``agent`` on the task in
    ``task_dir`` (record folder ``run_dir``), judged against the current task, definition, grader image
    (tag ``grader_image``, id ``grader_id`` or looked up) and grading limits; the tries are the result's own
    (the report does not know a run's ``tries=``). ``trial_fields`` go to ``Trial`` as they are (e.g. the
    settings of a run). Returns ``"current"``, ``"regrade"`` or ``"rerun"``."""
    tries = (result or {}).get("tries_allowed") if isinstance(result, dict) else None
    t = Trial(agent=agent, task_dir=Path(task_dir), run_dir=Path(run_dir), scratch=Path(run_dir),
              agent_image="", grader_image=grader_image, grade_limits=grade_limits,
              tries=tries if isinstance(tries, int) else 2, **trial_fields)
    return trial_state(result, t, grader_id)


def agent_problem(agent: Agent, exit_code: int | None, output: str, usage: dict | None) -> dict | None:
    """Why a try of ``agent`` gave it no fair chance, or None: ``{"kind", "message"}`` with kind
    ``could_not_run`` (exit code 126/127) or a provider error kind from its ``errors`` table (only when the
    try sent and received no tokens: an agent that got answers had its chance)."""
    if exit_code in COULD_NOT_RUN:
        last = next((ln.strip() for ln in reversed(output.splitlines()) if ln.strip()), "")
        return {"kind": "could_not_run",
                "message": f"the agent's command could not run (exit {exit_code}): {last[:300]}".rstrip(": ")}
    tokens = bool(usage and (usage.get("tokens_sent") or usage.get("tokens_received")))
    if agent.errors and not tokens:
        return provider_error(agent.errors, output)
    return None


def rate_limit_waits(environ: Mapping[str, str] = os.environ) -> tuple[float, ...]:
    """The waits (seconds) before each retry of a rate-limited try: ``LAB_RATE_LIMIT_WAITS`` (comma-separated
    seconds, e.g. ``"0.1,0.1"``; empty for no retry) or ``RATE_LIMIT_WAITS``. Raises ValueError naming the
    variable on a bad value."""
    raw = environ.get("LAB_RATE_LIMIT_WAITS")
    if raw is None:
        return RATE_LIMIT_WAITS
    try:
        waits = tuple(float(x) for x in raw.split(",") if x.strip())
    except ValueError:
        raise ValueError(f"LAB_RATE_LIMIT_WAITS={raw!r}: give comma-separated seconds, e.g. 30,60,120") from None
    if any(w < 0 for w in waits):
        raise ValueError(f"LAB_RATE_LIMIT_WAITS={raw!r}: waits must not be negative")
    return waits


def try_outcome(grade_json: dict | None, timed_out: bool, over_budget: bool = False) -> str:
    """A try's outcome from its grading (``Grade.to_json()``, None when not graded), whether its agent timed out
    and whether it went over its budget of model requests or tokens (the gateway refused a request past it):
    ``pass`` (even after a timeout or past the budget: the work passes), ``tampered``, ``over_budget`` (the
    budget ended the try, whether lab ended it or the agent gave up on the refusal), ``timeout`` or ``fail``.
    Both ``timeout`` and ``over_budget`` are the agent's own failure to finish within a limit, never an
    ``error``: its work tree is graded all the same."""
    if grade_json is not None and grade_json.get("passed"):
        return "pass"
    if grade_json is not None and grade_json.get("verdict") == "tampered":
        return "tampered"
    return "over_budget" if over_budget else "timeout" if timed_out else "fail"


def trial_status(tries: list[dict]) -> str:
    """A finished trial's status from its tries' outcomes: ``pass`` when a try passed, else ``tampered`` when
    a try was, else ``timeout`` or ``over_budget`` when the last try ended so, else ``fail``."""
    outcomes = [t.get("outcome") for t in tries]
    if "pass" in outcomes:
        return "pass"
    if "tampered" in outcomes:
        return "tampered"
    return outcomes[-1] if outcomes and outcomes[-1] in ("timeout", "over_budget") else "fail"


def spent_budget(t: Trial, n: int) -> bool:
    """Whether try ``n`` of trial ``t`` went over its budget at the gateway after the gateway had answered at
    least one of its requests: the refusals in its output are then its budget's, and a provider error read
    from them (``agent_problem``) would call a try that had its chance one that had none. A try whose every
    admitted request failed is judged by ``gateway_problem`` instead."""
    if t.gateway is None:
        return False
    try:
        counted = gateway_usage(t, n) or {}
    except sandbox.SandboxError:
        return False
    return bool(counted.get("over_budget")) and counted.get("requests", 0) > counted.get("failed", 0)


def budget_watch(t: Trial, n: int) -> Callable[[], str] | None:
    """The watch (``sandbox.box_exec``'s) that ends try ``n`` of trial ``t`` once its gateway refused a request
    past the try's budget (``gateway_usage``'s ``over_budget``): its reason, e.g. "over its requests budget",
    else "". None when the trial has no gateway or its
    agent no budget of requests or tokens. A gateway that cannot be read ends nothing (the try's own count,
    read after it, says why)."""
    budget = t.agent.budget
    if t.gateway is None or not (budget.requests or budget.tokens):
        return None

    def watch() -> str:
        try:
            counted = gateway_usage(t, n)
        except sandbox.SandboxError:
            return ""
        kind = (counted or {}).get("over_budget")
        if not kind:
            return ""
        return f"over its {kind} budget"
    return watch


def followup_prompt(prompt: str, test_output: str, files: list[str]) -> str:
    """The prompt of the next try: the task's prompt, the last ``FOLLOWUP_LINES`` lines (at most
    ``FOLLOWUP_CHARS`` characters) of the test output, and the instruction to fix ``files``."""
    lines = test_output.rstrip().splitlines()
    tail = "\n".join(lines[-FOLLOWUP_LINES:])
    if len(tail) > FOLLOWUP_CHARS:
        tail = tail[-FOLLOWUP_CHARS:].split("\n", 1)[-1]
    cut = len(tail) < len(test_output.rstrip())
    return render("trial/followup.txt.j2", prompt=prompt, output=tail, cut=cut, files=files)


def secret_env(agent: Agent, env: Mapping[str, str]) -> dict[str, str]:
    """The variables of the container's environment ``env`` whose values lab never stores: every one passed
    through from the caller's shell (the agent's ``env`` and ``env_optional``: README promises they are never
    written to disk, whatever their names) and any other whose name looks secret (``*_API_KEY``, tokens,
    passwords). ``env_set`` values and settings (a model's name) are kept as they are."""
    passed = set(agent.env) | set(agent.env_optional)
    return {k: v for k, v in env.items() if k in passed or _SECRET_NAME.search(k)}


def _keep_out_files(out_dir: Path, dest: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """Copy up to ``OUT_FILES_MAX`` small regular files from ``out_dir`` to ``dest``, with the values of
    ``env`` (``secret_env``'s variables) replaced by ``***``; returns their relative paths."""
    secrets = [v.encode() for v in (env or {}).values() if len(v) >= 4]
    kept = []
    for p in sorted(out_dir.rglob("*")):
        if len(kept) >= OUT_FILES_MAX:
            break
        st = p.lstat()
        if stat.S_ISREG(st.st_mode) and st.st_size <= OUT_FILE_CAP:
            rel = p.relative_to(out_dir).as_posix()
            data = p.read_bytes()
            for secret in secrets:
                data = data.replace(secret, b"***")
            write_atomic(dest / rel, data)
            kept.append(rel)
    return kept


def _grader_facts(image: str) -> tuple[str, dict]:
    labels = sandbox.image_labels(image)
    try:
        toolchains = json.loads(labels.get("lab.toolchains", "{}"))
    except ValueError:
        toolchains = {}
    return sandbox.image_id(image) or "", toolchains


class NoFairChance(Exception):
    """The agent never had a fair chance (its command could not run, its container could not start, its
    provider refused): the trial's status is ``error`` with ``error_kind`` "agent"."""


def _redact(text: str, env: Mapping[str, str]) -> str:
    """``text`` with the values of ``env`` (``secret_env``'s variables; values shorter than 4 characters are
    left) replaced by ``***``: a log or error message lab stores or prints never holds a key."""
    for value in sorted(env.values(), key=len, reverse=True):
        if len(value) >= 4:
            text = text.replace(value, "***")
    return text


def _test_cmd(task_dir: Path) -> str:
    """The task's command for its pre-existing tests (task.json ``test_cmd``; "" when it has none)."""
    value = (read_json(Path(task_dir) / "task.json") or {}).get("test_cmd")
    return value if isinstance(value, str) else ""


class AgentContainer:
    """The agent's container of one trial (``agent_container``). In mode "trial" (the default) one box
    (``sandbox.start_box``) serves all the tries: started at the first run, each run (a try, or a rate-limit
    retry) is a command run in it (``sandbox.box_exec``), so files outside the work tree, ``/tmp`` and the agent's
    home last from one try to the next. A run that timed out (the box is killed with it), was OOM-killed or
    found the box stopped leaves the next run a fresh box, and that try's note says so. In mode "try"
    (``container = "try"`` in the agent's definition) every run has a fresh container (``sandbox.run``).

    The mounts are the same for every run: the work tree at ``WORK``, ``<scratch>/in`` at ``IN_DIR``
    (read-only; the host writes the run's ``prompt.txt`` there) and ``<scratch>/out`` at ``OUT_DIR`` (emptied by
    the host before each run, after the last run's files were kept)."""

    def __init__(self, t: Trial, env: dict[str, str]):
        self.t, self.env, self.mode = t, env, t.agent.container
        self.in_dir, self.out_dir = t.scratch / "in", t.scratch / "out"
        self.box: sandbox.Box | None = None
        self.held: list[int] = []  # open descriptors of the box's mounted folders (their inodes stay taken)
        self.why_fresh = ""  # why the next run gets a fresh box ("" before the first)
        self.fresh: bool | None = None  # whether the current try's first run started a new container
        self.note = ""  # what the current try's record says about its container

    def begin_try(self) -> None:
        """Forget the last try's container facts (``fresh``, ``note``)."""
        self.fresh, self.note = None, ""

    def run(self, argv: list[str], work: Path, log_path: Path, labels: dict[str, str],
            last: bool = False, watch: Callable[[], str] | None = None) -> sandbox.RunResult:
        """Run ``argv`` as the agent (its env, network and limits; ``limits.timeout`` per run). ``last``: the
        trial's last try, after which no run is foreseen: the box is removed right after the command instead of
        frozen (a rate-limit retry then gets a fresh one). ``watch``: as ``sandbox.box_exec``'s (a reason it gives
        kills the container, as the timeout does). Raises StartError when a container cannot start,
        SandboxError when the engine fails."""
        agent = self.t.agent
        network = agent_network(agent.network, self.t.grader_image)
        mounts = [sandbox.Mount(str(work), WORK), sandbox.Mount(str(self.in_dir), IN_DIR, read_only=True),
                  sandbox.Mount(str(self.out_dir), OUT_DIR)]
        if self.mode == "try":
            self.fresh = True
            return sandbox.run(self.t.agent_image, argv, mounts=mounts, env=self.env, network=network,
                               limits=agent.limits, workdir=WORK, log_path=log_path, labels=labels, watch=watch)
        if self.box is not None and ([os.stat(m.source).st_ino for m in mounts]
                                     != [os.fstat(fd).st_ino for fd in self.held]):
            self.why_fresh = "the work tree or the in/out folders were made anew"  # the box would see the old ones
            self.close()
        new = self.box is None
        if new:
            self.held = [os.open(m.source, os.O_RDONLY | os.O_DIRECTORY) for m in mounts]
            self.box = sandbox.start_box(self.t.agent_image, mounts=mounts, env=self.env, network=network,
                                         limits=agent.limits, workdir=WORK, labels=labels)
            if self.why_fresh:
                self.note = self.note or f"a fresh agent container for this try ({self.why_fresh})"
        self.fresh = new if self.fresh is None else self.fresh
        res = sandbox.box_exec(self.box, argv, timeout=agent.limits.timeout, log_path=log_path, last=last,
                               watch=watch)
        if not new and res.exit_code in COULD_NOT_RUN:
            # the agent may have broken the container its last try left (removed or replaced a program its
            # command needs): run the command again in a fresh one, so that is neither an error the next run
            # would redo nor an infrastructure fault counted as the agent's
            self.why_fresh = f"its command could not run in the last one (exit {res.exit_code})"
            self.close()
            self.fresh = None
            return self.run(argv, work, log_path, labels, last, watch)
        why = ("the last one was killed at its time limit" if res.timed_out
               else f"the last one was killed {res.stopped}" if res.stopped
               else "the last one ran out of memory" if res.oom_killed
               else f"the last one was killed: {self.box.why_dead}" if self.box.why_dead
               else "the last one had stopped" if self.box.dead else "")
        if why:
            self.why_fresh = why
            self.close()
        return res

    def close(self) -> None:
        """Remove the box, if one runs (idempotent)."""
        held, self.held = self.held, []
        for fd in held:
            os.close(fd)
        if self.box is not None:
            box, self.box = self.box, None
            sandbox.stop_box(box)


def agent_network(network: str, grader_image: str) -> str:
    """The network mode an agent's container runs with, for the agent's ``network`` setting: a network-less agent
    ("none") gets ``sandbox.null_network(grader_image)``, no network in a namespace lent from one container to the
    next and held by a container of the grader's image (lab's own), never ``sandbox.NULL``, whose holder would
    run the agent image's own /bin/sh in the namespace later agents' containers join (the red team's finding);
    any other setting is the agent's own."""
    return sandbox.null_network(grader_image) if network == "none" else network


@contextlib.contextmanager
def agent_container(t: Trial, env: dict[str, str]) -> Iterator[AgentContainer]:
    """The trial's ``AgentContainer``; its box is removed on exit, whatever happened."""
    holder = AgentContainer(t, env)
    try:
        yield holder
    finally:
        holder.close()


def _empty(folder: Path) -> None:
    """Remove everything inside ``folder`` (symlinks are removed, never followed); the folder stays (a running
    container has it mounted). Raises TrialError when something cannot be removed."""
    try:
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                remove_tree(Path(entry.path))
                if os.path.lexists(entry.path):
                    raise OSError(f"{entry.path} is still there")
            else:
                os.unlink(entry.path)
    except OSError as exc:
        raise TrialError(f"cannot empty {folder} for the agent's next run ({exc}); lab must be able to remove what "
                         "the agent's container writes there (run lab as root, or rootless Docker)") from None


def _run_agent(t: Trial, n: int, text: str, env: dict[str, str], files: list[str], work: Path,
               result: TrialResult, box: AgentContainer
               ) -> tuple[sandbox.RunResult, dict | None, Path, dict | None, list[dict]]:
    """Run the agent for try ``n`` with prompt ``text`` in the trial's container ``box``; a rate-limited run is
    run again after each of ``rate_limit_waits()``. Returns (run result, usage, out folder, problem or None,
    retries); adds the agent seconds and usage of every run to ``result``. Raises NoFairChance when the
    container cannot start."""
    waits = rate_limit_waits()
    hidden = secret_env(t.agent, env)  # (redacted from what is kept of each run)
    retries: list[dict] = []
    box.begin_try()
    in_dir, out_dir = box.in_dir, box.out_dir
    in_dir.mkdir(parents=True, exist_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    out_dir.chmod(0o777)
    gateway_mark(t, n)
    while True:
        _empty(out_dir)
        write_atomic(in_dir / "prompt.txt", text)
        try:
            res = box.run(t.agent.argv(files, n, _test_cmd(t.task_dir)), work, t.run_dir / f"agent-{n}.log",
                          labels={"lab.role": "agent", "lab.agent": t.agent.name, "lab.task": result.task},
                          last=n == t.tries, watch=budget_watch(t, n))
        except sandbox.StartError as exc:
            raise NoFairChance(f"the agent's container could not start: {exc}") from None
        result.images["agent"]["id"] = res.image_id
        redacted = _redact(res.output, hidden)
        if redacted != res.output:  # a provider echoed a key: it stays out of the agent's log
            write_atomic(t.run_dir / f"agent-{n}.log", redacted)
        usage = try_usage(t.agent, res.output, out_dir / USAGE_FILE)
        result.usage = add_usage(result.usage, usage)
        result.agent_seconds = round(result.agent_seconds + res.seconds, 3)
        problem = agent_problem(t.agent, res.exit_code, res.output, usage)
        if problem is not None and problem["kind"] != "could_not_run" and (res.stopped or spent_budget(t, n)):
            problem = None  # the refusals it met were its budget's, after answers: no provider error to retry
        if problem is not None:
            problem["message"] = _redact(problem["message"], hidden)
        if problem is None or problem["kind"] != "rate_limit" or len(retries) >= len(waits):
            return res, usage, out_dir, problem, retries
        wait = waits[len(retries)]
        retries.append({**problem, "waited": wait})
        print(f"{result.task}: rate limited on try {n} ({problem['message'][:120]}); "
              f"again in {wait:g} s ({len(retries)}/{len(waits)})", file=sys.stderr, flush=True)
        time.sleep(wait)


def _keep_trajectory(t: Trial, n: int, output: str, out_dir: Path, hidden: Mapping[str, str]) -> str | None:
    """Write try ``n``'s trajectory (its agent's adapter's reading of its output and ``/lab/out``, secrets
    redacted) as ``trajectory-<n>.json`` in the trial's folder; returns that file name, or None when there is
    none."""
    found = try_trajectory(t.agent, output, out_dir)
    if not found:
        return None
    name = f"trajectory-{n}.json"
    write_atomic(t.run_dir / name, _redact(json.dumps(found, indent=1, ensure_ascii=False), hidden) + "\n")
    return name


def _run_tries(t: Trial, env: dict[str, str], files: list[str], result: TrialResult, capped: bool,
               box: AgentContainer) -> None:
    """The tries of trial ``t`` in its scratch folder (a ``disk``-capped filesystem when ``capped``), the agent
    running in ``box``; fills ``result`` in place (tries, status, usage, ...). Raises NoFairChance when the
    agent had no fair chance, SandboxError or TrialError on infrastructure problems."""
    stub, work = t.scratch / "stub", t.scratch / "work"
    hidden = secret_env(t.agent, env)  # (redacted from the /lab/out files kept)
    try:
        lay_work_tree(t.task_dir, stub)
        lay_work_tree_like(t.task_dir, stub, work)
    except RuntimeError as exc:
        raise TrialError(str(exc)) from None
    prompt = (t.task_dir / "prompt.txt").read_text(encoding="utf-8")
    text = prompt
    last = None  # (tree digest, try, Grade) of the last grading that ran
    for n in range(1, t.tries + 1):
        if n > 1:
            write_atomic(t.run_dir / f"prompt-{n}.txt", text)
        before = len(server_errors(t))  # the model server's errors of this try are those after these
        res, usage, out_dir, problem, retries = _run_agent(t, n, text, env, files, work, result, box)
        unreadable, out_unreadable = tree_problem(work), tree_problem(out_dir)
        record = TryRecord(
            number=n, note=box.note, usage=usage,
            agent={"exit_code": res.exit_code, "timed_out": res.timed_out, "oom_killed": res.oom_killed,
                   "seconds": round(res.seconds, 3), "output_bytes": res.output_bytes, "fresh_container": box.fresh,
                   "stopped": res.stopped or None},
            removed_special_files=[] if unreadable else remove_special_files(work),
            out_files=[] if out_unreadable else _keep_out_files(out_dir, t.run_dir / f"out-{n}", hidden),
            rate_limit_retries=retries or None,
            trajectory=_keep_trajectory(t, n, res.output, out_dir, hidden),
            gateway_usage=gateway_usage(t, n))
        result.tries.append(record)
        problem = problem or gateway_problem(record.gateway_usage, lambda: (server_errors(t)[before:] or [""])[-1])
        if problem is not None:
            record.outcome, record.note = "error", f"{problem['kind']}: {problem['message']}"
            raise NoFairChance(f"try {n}: {problem['kind']}: {problem['message']}")
        notes = [box.note] if box.note else []
        notes += usage_notes(usage, record.gateway_usage, t.agent)
        over = (record.gateway_usage or {}).get("over_budget")  # the gateway refused a request past the budget
        if res.stopped:
            notes.append(f"lab ended the agent {res.seconds:.0f} s in, {res.stopped}")
        if res.timed_out:
            notes.append(f"the agent ran past its {t.agent.limits.timeout:g} s")
        ended = "timeout" if res.timed_out and not over else "over_budget" if over else None  # by a limit, not its own end
        if out_unreadable:
            notes.append(f"lab cannot read /lab/out ({out_unreadable}): no file of it kept")
        if unreadable:
            record.outcome = ended or "fail"
            record.note = "; ".join(notes + [f"lab cannot read the work tree ({unreadable}); not graded"])
            break
        size = tree_size(work)
        if size > WORK_TREE_CAP:
            record.outcome = ended or "fail"
            record.note = "; ".join(notes + [f"the work tree grew to {size} bytes (cap {WORK_TREE_CAP}); not graded"])
            break
        if capped and disk.is_full(t.scratch):
            record.note = "; ".join(notes + [f"the agent filled its disk (cap {t.agent.limits.disk} bytes: the "
                                                f"work tree and /lab/out); not graded"])
            break
        graded, note = graded_tree(t.task_dir, work, t.scratch / f"graded-{n}")
        if note:
            notes.append(note)
        digest = work_digest(graded) if t.tries > 1 else None  # one try: nothing to compare with
        if digest is not None and last is not None and digest == last[0]:
            # The very tree the last grading read (every byte, mode and link): its grading stands for this try.
            # A fresh grading could differ only by chance (a flaky test): no try is credited for re-rolling it.
            k, g = last[1], last[2]
            record.grade = {**result.tries[k - 1].grade, "reused_from_try": k}
            record.work_archive = result.tries[k - 1].work_archive
            record.suspicions = result.tries[k - 1].suspicions
            record.work_digest = digest
            notes.append(f"the work tree is byte-identical to try {k}'s: its grading stands (grade-{k}.log)")
            write_atomic(t.run_dir / f"grade-{n}.log", f"lab: the work tree after try {n} is byte-identical to the one "
                                                        f"graded after try {k} (sha256 {digest}); try {k}'s grading "
                                                        f"stands, see grade-{k}.log\n")
        else:
            if size <= ARCHIVE_CAP:
                archive_work(work, t.run_dir / f"work-{n}.tar.gz")
                record.work_archive = f"work-{n}.tar.gz"
            else:
                notes.append(f"the work tree ({size} bytes) is over {ARCHIVE_CAP} bytes: not kept, cannot be re-graded")
            g = grade(t.task_dir, graded, image=t.grader_image, limits=t.grade_limits, cache_volume=t.cache_volume,
                      log_path=t.run_dir / f"grade-{n}.log")
            record.grade = g.to_json()
            record.work_digest = digest
            record.suspicions = suspicions(t.task_dir, stub, graded)
            last = (digest, n, g)
            result.grading_seconds = round(result.grading_seconds + g.seconds, 3)
        record.outcome = try_outcome(record.grade, res.timed_out, bool(over))
        if g.timed_out:
            notes.append(f"the tests ran past the grader's {t.grade_limits.timeout:g} s")
        record.note = "; ".join(notes)
        result.tests = {"ran": g.ran, "passed": g.passed_tests, "failed": g.failed_tests}
        if g.passed:
            result.passed_try = n
            break
        text = followup_prompt(prompt, g.output, files)
    result.status = trial_status([{"outcome": r.outcome} for r in result.tries])
    if tree_problem(work) is None and tree_size(work) <= WORK_TREE_CAP:
        write_atomic(t.run_dir / "work.diff", work_diff(stub, work))


def suspicions(task_dir: Path, stub: Path, graded: Path) -> list[dict] | None:
    """The suspicion scan's flags (``rules.scan.scan``) on the change a grading of the task in ``task_dir``
    read: the ``graded`` tree against the ``stub`` (``rules.worktree.graded_diff``), with the table of the
    task's tier (``rules.tiers.suspicions_of``), then the tier's API conformance flags (``rules.tiers.conformance_of``:
    the aider tier's ``signature`` flags). Evidence for a reviewer; no verdict depends on it. None (not
    scanned) when the tier cannot be loaded here (a plug-in tier a cluster node's home lacks) or the change
    cannot be read (git or diff failed on the tree); a conformance check that cannot run (its parser missing on
    a node) leaves the scan's flags alone."""
    meta = read_json(Path(task_dir) / "task.json") or {}
    try:
        table = suspicions_of(meta)
        diff = graded_diff(task_dir, stub, graded)
        flags = cut_flag(diff, SCAN_CAP) + scan(diff, table) if table else []
    except Exception:  # noqa: BLE001 - evidence that decides nothing must never cost the trial its verdict
        return None
    try:
        flags += conformance_of(meta, task_dir, stub, graded)
    except Exception:  # noqa: BLE001 - as above; the scan's flags stand without the conformance check's
        pass
    return flags[:MAX_FLAGS]


def _graded(grader_id: str, check: str, regraded: bool) -> dict:
    return {"grader_image_id": grader_id, "check_digest": check, "regraded": regraded, "at": now()}


def gateway_mark(t: Trial, n: int) -> None:
    """Tell the trial's gateway (if any) that try ``n`` begins: its requests and tokens count for try ``n``,
    and its budget starts afresh. Raises SandboxError when the gateway cannot be reached."""
    if t.gateway is not None:
        code, out = sandbox.service_exec(t.gateway, ["sh", "-c", f"echo {int(n)} > {GATEWAY_STATE}/try"])
        if code != 0:
            raise sandbox.SandboxError(f"cannot tell the gateway that try {n} begins: {out[-300:]}")


def gateway_usage(t: Trial, n: int) -> dict | None:
    """What the trial's gateway counted for try ``n`` (None without a gateway): ``{"requests": admitted
    requests, "failed": those the upstream refused or failed, "tokens_sent", "tokens_received": None (unknown)
    when the upstream told the tokens of any answered request not (its ``untold``; the gateway logs them null, never
    0), "untold", "refused": requests refused past the budget, "over_budget": "requests" | "tokens" | None,
    "errors": the first few failures' messages}``. Raises SandboxError when the gateway's log cannot be read."""
    if t.gateway is None:
        return None
    code, out = sandbox.service_exec(t.gateway, ["sh", "-c", f"cat {GATEWAY_STATE}/usage.jsonl 2>/dev/null; true"])
    if code != 0:
        raise sandbox.SandboxError(f"cannot read the gateway's usage log: {out[-300:]}")
    rows = []
    for line in out.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and str(row.get("try")) == str(n):
            rows.append(row)
    calls = [r for r in rows if "ok" in r]
    refused = [r["refused"] for r in rows if "refused" in r]
    answered = sum(1 for r in calls if r["ok"])
    # one route (Gemini's) passes litellm's pre-call hook by, so a request may be answered unadmitted
    admitted = max(sum(1 for r in rows if r.get("admitted")), answered)
    untold = sum(1 for r in calls if r["ok"] and r.get("prompt_tokens") is None)
    return {"requests": admitted, "failed": max(0, admitted - answered),
            "tokens_sent": None if untold else sum(int(r.get("prompt_tokens") or 0) for r in calls),
            "tokens_received": None if untold else sum(int(r.get("completion_tokens") or 0) for r in calls),
            "untold": untold,
            "refused": len(refused), "over_budget": refused[0] if refused else None,
            "errors": [str(r.get("error", ""))[:300] for r in calls if not r.get("ok")][:3],
            "dropped": sorted({str(f) for r in rows if isinstance(r.get("dropped"), list) for f in r["dropped"]})}


# the last error a model server wrote in its output, e.g. llama-cpp-python's
# "ValueError: Requested tokens (9219) exceed context window of 8192"
SERVER_ERROR = re.compile(r"^\s*(?:[\w.]+(?:Error|Exception)): .+$", re.M)
CONTEXT_OVERFLOW = re.compile(r"context window|context length|maximum context", re.I)


def error_lines(output: str) -> list[str]:
    """The error lines (``SERVER_ERROR``) of a model server's ``output``, in order, each at most 300
    characters."""
    return [line.strip()[:300] for line in SERVER_ERROR.findall(output)]


def server_errors(t: Trial) -> list[str]:
    """The error lines in the output of trial ``t``'s running service (its model server) so far; [] when it has
    no service or its output cannot be read."""
    if t.service is None:
        return []
    try:
        return error_lines(sandbox.service_output(t.service))
    except sandbox.SandboxError:
        return []


def gateway_problem(counted: dict | None, reason: Callable[[], str] = lambda: "") -> dict | None:
    """Why a try had no fair chance by the gateway's count, or None: every request it made failed at the
    upstream (none answered; e.g. a refused key: kind ``auth``; a request longer than the model's window:
    ``context``; else ``provider``). When no error text reached the gateway (a stream that failed after its
    start), ``reason()`` gives the model server's own error line of this try (``server_errors``), else the
    message names service.log; a try of which the gateway counted no request at all, while the model server
    failed one, had no fair chance either."""
    if not counted:
        return None
    if not counted["requests"]:
        if counted["refused"]:
            return None  # over its budget from the first request: it had its chance
        # nothing counted, yet the model server failed a request of the try: the Gemini route passes the
        # gateway's hooks by when its request fails (gemini-cli's 10444-token prompt: 'fail', not 'error')
        server = reason()
        if not server:
            return None
        kind = "context" if CONTEXT_OVERFLOW.search(server) else "provider"
        return {"kind": kind, "message": "every request of the try failed at the model server, the gateway counting "
                                         f"none answered; the model server said: {server} (the trial's service.log)"}
    if counted["failed"] < counted["requests"]:
        return None
    first = counted["errors"][0] if counted["errors"] else ""
    server = "" if first else reason()
    kind = ("auth" if re.search(r"401|AuthenticationError|api key", first, re.I)
            else "context" if CONTEXT_OVERFLOW.search(first or server) else "provider")
    why = (f": {first}" if first else f"; the model server said: {server} (the trial's service.log)" if server
           else " and no error text reached it (a failed stream tells it none): the model server's reason is in "
                "the trial's service.log")
    return {"kind": kind, "message": f"the gateway saw all {counted['requests']} request(s) fail{why}"}


def usage_notes(reported: dict | None, counted: dict | None, agent: Agent) -> list[str]:
    """The notes a try's record gets from its gateway's count: over its budget, and a disagreement (more
    than 10 %, or one side missing) between the tokens the agent reports and those the gateway counted."""
    if not counted:
        return []
    notes = []
    if counted["over_budget"]:
        kind = counted["over_budget"]
        notes.append(f"over its {kind} budget ({getattr(agent.budget, kind)} {kind} per try): the gateway refused "
                     f"{counted['refused']} request(s)")
    if counted.get("untold"):
        notes.append(f"the model server told no tokens for {counted['untold']} answered request(s): the gateway's "
                     "count is unknown")
    for key in ("tokens_sent", "tokens_received"):
        mine, theirs = (reported or {}).get(key), counted[key]
        if theirs is None:
            continue
        if (mine or 0) != theirs and abs((mine or 0) - theirs) > 0.1 * max(mine or 0, theirs):
            notes.append(f"usage disagrees: the agent reports {key} {mine}, the gateway counted {theirs}")
    return notes


@contextlib.contextmanager
def service_for(t: Trial, result: TrialResult) -> Iterator[Trial]:
    """Yield the trial to run: ``t`` itself, or, when its agent declares a service (``rules.services``), ``t``
    with the agent's network set to the namespace of the service's container, started (and waited for) here
    and removed on exit. Records ``result.service`` (``{"image", "id", "ready_seconds"}``) and the
    service's output in ``service.log``; a service with a ``cache`` gets its folder (``Service.cache_dir``, made
    here; recorded as ``result.service["cache"]``) mounted at it as its working directory. Raises SandboxError
    when the service does not come up, or stopped before the tries were over (the agent did not have a fair
    chance: an infrastructure error)."""
    service = t.agent.service
    if service is None:
        yield t
        return
    log = t.run_dir / "service.log"
    start = time.monotonic()
    labels = {"lab.agent": t.agent.name, "lab.task": str(result.task)}
    cache = service.cache_dir()
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
    handle = sandbox.start_service(service.tag(), service.argv(), limits=service.limits, ready=service.probe(),
                                   labels=labels, log_path=log, workdir=service.cache,
                                   mounts=[sandbox.Mount(str(cache), service.cache)] if cache is not None else ())
    result.service = {"image": service.tag(), "id": handle.image_id,
                      "ready_seconds": round(time.monotonic() - start, 3),
                      **({"cache": cache.relative_to(STATE.parent).as_posix()} if cache is not None else {})}
    gateway = None
    try:
        if t.agent.gateway is not None:
            gw = t.agent.gateway
            gateway = sandbox.start_service(gw.tag(), gw.argv(), limits=gw.limits, ready=gw.probe(), labels=labels,
                                            log_path=t.run_dir / "gateway.log", network=handle.network)
            result.service["gateway"] = {"image": gw.tag(), "id": gateway.image_id, "port": gw.port,
                                         "ready_seconds": round(time.monotonic() - start, 3)}
        yield dataclasses.replace(t, agent=dataclasses.replace(t.agent, network=handle.network), gateway=gateway,
                                  service=handle)
        ended = sandbox.service_ended(handle)
        if ended:
            raise sandbox.SandboxError(f"the service {service.tag()} stopped during the trial ({ended}); "
                                       "its output is in service.log")
    finally:
        if gateway is not None:
            sandbox.stop(gateway, t.run_dir / "gateway.log")
        sandbox.stop(handle, log)


def run_trial(t: Trial, environ: Mapping[str, str] = os.environ) -> dict:
    """Run trial ``t`` and write its record (see the module doc); returns the result (the ``result.json``
    data). A trial in which the agent had no fair chance gives status ``error`` with ``error_kind`` "agent";
    an infrastructure failure (SandboxError, a failing setup.sh) ``error`` with ``error_kind``
    "infrastructure"; the message is in ``error``. Raises AgentError before anything runs when a required
    variable is missing."""
    env = t.agent.environment(environ)
    meta = read_json(t.task_dir / "task.json") or {}
    files = list(meta.get("solution_files", []))
    start = time.monotonic()
    fresh_folder(t.run_dir)
    result = t.new_result(meta)
    result.disk, result.agent_container = {"cap": t.agent.limits.disk, "enforced": False}, t.agent.container
    try:
        grader_id, result.toolchains = _grader_facts(t.grader_image)
        result.images["grader"]["id"] = grader_id
        result.key = t.key(grader_id)
        with disk.capped_folder(t.scratch, t.agent.limits.disk) as not_capped:
            result.disk["enforced"] = not_capped is None
            if not_capped:
                result.notes.append(f"disk cap not enforced: {not_capped}")
            with service_for(t, result) as t_in_service, agent_container(t_in_service, env) as box:
                _run_tries(t_in_service, env, files, result, capped=not_capped is None, box=box)
        result.graded = _graded(grader_id, result.key["grade"]["check_digest"], False)
    except NoFairChance as exc:
        result.status, result.error, result.error_kind = "error", str(exc), "agent"
    except (sandbox.SandboxError, TrialError) as exc:
        result.status, result.error, result.error_kind = "error", str(exc), "infrastructure"
    finally:
        remove_tree(t.scratch)
    result.seconds = round(time.monotonic() - start, 3)
    result.finished = now()
    return result.save(t.run_dir / "result.json")


def write_result(run_dir: Path, data: dict) -> dict:
    """Write ``data`` (a trial's result) as ``run_dir``'s ``result.json`` through ``rules.records.TrialResult``
    (atomically); returns the data written."""
    path = Path(run_dir) / "result.json"
    return TrialResult.from_json(data, groups_of(data.get("tier")), path, check=False).save(path)


# ---- grading kept work trees again ----

def regrade_trial(t: Trial, result: dict, grader_id: str | None = None) -> dict | None:
    """Grade the work trees kept in ``t.run_dir`` (``work-<try>.tar.gz``) again with ``t``'s grader image,
    ``check.sh`` and grading limits, rewrite ``result.json`` (atomically; grade logs too) and return the new
    result: outcomes, status, passed_try, tests, grading_seconds, ``key.grade`` and ``graded`` (``regraded``
    true) follow the new gradings; the agent's side (tries, usage, logs, ``key.run``) is kept as it was.

    Returns None, writing nothing, when the stored trial cannot stand for a run with this grading: a graded
    try's work tree is not kept, or a try that passed no longer does and tries were left that never ran (the
    agent must run again). Never starts an agent container. Raises SandboxError when the grader cannot run
    (nothing is rewritten then).
    """
    if not kept_work(result, t.run_dir):
        return None
    grader_id = grader_id if grader_id is not None else (sandbox.image_id(t.grader_image) or "")
    new = copy.deepcopy(result)
    logs: list[tuple[Path, Path]] = []
    seconds = 0.0
    last = None
    try:
        for rec in new["tries"]:
            if rec.get("grade") is None:
                continue
            n = rec["try"]
            k = rec["grade"].get("reused_from_try")
            if isinstance(k, int) and 1 <= k < n and (new["tries"][k - 1].get("grade") or {}).get("reused_from_try") is None:
                # the same tree as try k's (see _run_tries): its new grading stands for this try too
                rec["grade"] = {**new["tries"][k - 1]["grade"], "reused_from_try": k}
                rec["suspicions"] = new["tries"][k - 1].get("suspicions")
                rec["outcome"] = try_outcome(rec["grade"], bool(rec.get("agent", {}).get("timed_out")))
                continue
            with tempfile.TemporaryDirectory(prefix="lab-regrade-") as tmp:
                work, stub = Path(tmp) / "work", Path(tmp) / "stub"
                unpack_work(t.run_dir / rec["work_archive"], work)
                log = t.run_dir / f".grade-{n}.log.new"
                graded, _ = graded_tree(t.task_dir, work, Path(tmp) / "graded" / "tree")
                g = grade(t.task_dir, graded, image=t.grader_image, limits=t.grade_limits,
                          cache_volume=t.cache_volume, log_path=log)
                if graded == work:  # a tree graded as it is: its change is against the stub (a patch holds its own)
                    lay_work_tree(t.task_dir, stub)
                rec["suspicions"] = suspicions(t.task_dir, stub, graded)
            logs.append((log, t.run_dir / f"grade-{n}.log"))
            seconds += g.seconds
            rec["grade"] = g.to_json()
            rec["outcome"] = try_outcome(rec["grade"], bool(rec.get("agent", {}).get("timed_out")))
            last = g
    except BaseException:
        for log, _ in logs:
            log.unlink(missing_ok=True)
        raise
    passed = next((r["try"] for r in new["tries"] if r["outcome"] == "pass"), None)
    stopped_by_pass = bool(result.get("passed_try")) and len(new["tries"]) < (new.get("tries_allowed") or 0)
    if passed is None and stopped_by_pass:
        for log, _ in logs:
            log.unlink(missing_ok=True)
        return None
    after = "ran after a try that passes on re-grading"
    for rec in new["tries"]:
        if passed is not None and rec["try"] > passed and after not in (rec.get("note") or ""):
            rec["note"] = "; ".join(x for x in (rec.get("note"), after) if x)
    graded_until = [r for r in new["tries"] if r.get("grade") is not None and (passed is None or r["try"] <= passed)]
    if graded_until:
        g = graded_until[-1]["grade"]
        new["tests"] = {"ran": g["ran"], "passed": g["passed_tests"], "failed": g["failed_tests"]}
    new["passed_try"] = passed
    new["status"] = trial_status(new["tries"])
    new["version"] = TRIAL_RECORD_FORMAT  # its tries carry the suspicion scan's flags now
    new["grading_seconds"] = round(seconds, 3)
    new["key"]["grade"] = t.grade_key(grader_id)
    new["graded"] = _graded(grader_id, new["key"]["grade"]["check_digest"], True)
    new["images"]["grader"] = {"tag": t.grader_image, "id": grader_id}
    if last is not None:
        new["toolchains"] = _grader_facts(t.grader_image)[1]
    for log, dest in logs:
        os.replace(log, dest)
    return write_result(t.run_dir, new)


def regrade_agent(tier: str, agent_name: str, log=sys.stdout) -> dict:
    """``doit regrade agent=NAME``: grade every stored trial of the agent (every run folder of it, every
    repeat) again with the current grader image, ``check.sh`` and grading limits, without running the agent.

    A trial is re-graded when it finished and the task the agent saw is unchanged (prompt, stub, setup,
    workspace); others are listed as needing a run. Returns counts ``{"regraded", "changed", "rerun",
    "skipped"}``. Raises ConfigError for an unknown tier or an agent with no stored trials; SandboxError when
    the grader cannot run.
    """
    from rules import images
    from rules.config import load_suite

    suite = load_suite(tier)
    grader_id = sandbox.image_id(images.GRADER)
    if not grader_id:
        raise sandbox.SandboxError(f"grader image {images.GRADER!r} is missing; build it with `doit image`")
    counts = {"regraded": 0, "changed": 0, "rerun": 0, "skipped": 0}
    runs = sorted(p for p in suite.runs_dir.glob("*") if p.is_dir()) if suite.runs_dir.is_dir() else []
    mine = [run for run in runs if ((read_json(run / "run.json") or {}).get("agent") or run.name) == agent_name]
    if not mine:
        raise ConfigError(f"no stored trials of agent {agent_name!r} in {suite.runs_dir} (runs there: "
                          f"{', '.join(r.name for r in runs) or 'none'}); `doit run agent={agent_name}` makes some")
    for run in mine:
        for path in sorted(run.glob("*/result.json")):
            result = stored_result(path.parent)
            task = path.parent.name.split("@", 1)[0]
            task_dir = suite.tasks_dir / task
            where = f"{run.name}/{path.parent.name}"
            if not isinstance(result, dict) or result.get("status") not in FINISHED or not task_dir.is_dir():
                counts["skipped"] += 1
                continue
            key = result.get("key") or {}
            run_key = key.get("run") or {}
            if key.get("format") != TRIAL_FORMAT or run_key.get("task_digest") != task_digest(task_dir, GRADING_FILES):
                print(f"{where}: the task the agent saw changed (or an older record): run it again", file=log)
                counts["rerun"] += 1
                continue
            agent = _StoredAgent(result.get("agent") or agent_name)
            t = Trial(agent=agent, task_dir=task_dir, run_dir=path.parent, scratch=path.parent,  # type: ignore[arg-type]
                      agent_image="", grader_image=images.GRADER, grade_limits=suite.prove,
                      tries=result.get("tries_allowed") or 1, run=run.name,
                      repeat=int(result.get("repeat") or 1))
            before = result["status"], result.get("passed_try")
            new = regrade_trial(t, result, grader_id)
            if new is None:
                print(f"{where}: cannot be re-graded alone (a work tree not kept, or a pass lost with tries "
                      "left): run it again", file=log)
                counts["rerun"] += 1
                continue
            after = new["status"], new.get("passed_try")
            counts["regraded"] += 1
            counts["changed"] += before != after
            print(f"{where}: {_outcome(*before)} -> {_outcome(*after)} (re-graded)", file=log, flush=True)
    return counts


@dataclass(frozen=True)
class _StoredAgent:
    """The little of an agent re-grading needs: its name (for its build-cache volume)."""

    name: str


def _outcome(status: str, passed_try: int | None) -> str:
    return f"pass@{passed_try}" if status == "pass" and passed_try else status


def stored_result(run_dir: Path) -> dict | None:
    """The trial's stored ``result.json`` in ``run_dir``, or None when there is none or it does not parse (a
    damaged record counts as missing: the trial runs again and replaces it)."""
    try:
        result = read_json(Path(run_dir) / "result.json")
    except ValueError:
        return None
    return result if isinstance(result, dict) else None


def trial_folder(task: str, repeat: int = 1) -> str:
    """The trial's folder name in its run folder: ``<task>`` for repeat 1, ``<task>@<repeat>`` from 2 on."""
    return task if repeat == 1 else f"{task}@{repeat}"


def summary_line(result: dict, regraded: float | None = None) -> str:
    """One line for a finished trial: task, status, the try that passed, seconds (the trial's; with ``regraded``,
    the seconds this command's re-grading took, and the stored trial's apart)."""
    how = f" (try {result['passed_try']})" if result.get("passed_try") else ""
    err = f": {result['error'][:200]}" if result.get("error") else ""
    name = trial_folder(result["task"], result.get("repeat") or 1)
    took = (f"in {result['seconds']:.1f} s" if regraded is None else
            f"re-graded in {regraded:.1f} s (the trial it grades took {result['seconds']:.1f} s)")
    return f"{name}: {result['status']}{how} {took}{err}"
