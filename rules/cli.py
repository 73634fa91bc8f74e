"""What a lab command asks for, and the policy around it, before any task is made.

lab's task loader (``rules.loader``) hands each doit command here once, as a ``Command`` (doit's sub-command,
the task names it asks for, its ``name=value`` variables): ``start`` checks the variables (doit would silently
ignore an unknown one and keep only the last of a repeated one) and, for a command that runs tasks, takes the
lab home's lock and installs the stop handler. The task creators (``rules.tasks``) then read the command
through ``current``, ``asked`` and ``tier_steps_only``, and the one-line messages about agents and whole
numbers come from here. Nothing here imports doit.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from rules.config import STATE, ConfigError

LAB_FOLDER = Path(__file__).resolve().parent.parent  # the folder of dodo.py and pyproject.toml
NOT_LOADED = (f"lab's task loader is not in use: run doit in the lab folder ({LAB_FOLDER}), whose pyproject.toml "
              "selects it (LAB_HOME=/another/folder picks another lab home); nothing was run")


@dataclass(frozen=True)
class Command:
    """One doit command as doit parsed it: ``name`` (doit's sub-command: run, list, info, help, ...),
    ``targets`` (the task names it names, in order; none means doit's default tasks), ``variables`` (its
    ``name=value`` pairs) and ``runs_tasks`` (whether it executes task actions: ``doit run``, also implied by a
    bare ``doit gen:aider``)."""

    name: str
    targets: tuple[str, ...] = ()
    variables: dict = field(default_factory=dict)
    runs_tasks: bool = False

    def var(self, name: str, default=None):
        """The value of ``name=`` on this command line, else ``default`` (as doit's ``get_var``)."""
        return self.variables.get(name, default)


_COMMAND: list[Command] = []  # the command of this process, set once by start() or use()
_HOME_LOCK: list[int] = []


def use(command: Command) -> None:
    """Make ``command`` the one the task creators read, without any check (tests; ``start`` for doit)."""
    _COMMAND[:] = [command]


def start(command: Command, argv: list[str]) -> None:
    """Check and record a doit ``command`` before its tasks are made: unknown and repeated variables stop it
    (SystemExit with one line; ``argv``, the command line without the program, is where a repeated one shows,
    as doit keeps only the last), and a command that runs tasks takes the home's lock (``hold_home``)."""
    check_variables(command.variables)
    check_repeated(argv)
    if command.runs_tasks and not serves_only(command):
        hold_home(argv)
    use(command)


def serves_only(command: Command) -> bool:
    """True for ``doit view`` alone: it serves the home's files and writes none, so it takes no home lock (a
    server left running must not block ``doit run``) and keeps doit's database in memory in a fresh home."""
    return command.targets == ("view",)


def current() -> Command:
    """The command of this process. Raises SystemExit with one line when lab's task loader did not start it
    (dodo.py loaded by doit's plain loader, which happens when doit starts outside the lab folder: doit reads
    the ``[tool.doit]`` table of lab's pyproject.toml, which selects the loader, from the folder it starts in)."""
    if not _COMMAND:
        raise SystemExit(NOT_LOADED)
    return _COMMAND[0]


def targets() -> list[str]:
    """This command's targets; none when lab's task loader did not start this process (a test calling a step's
    action itself)."""
    return list(_COMMAND[0].targets) if _COMMAND else []


def asked(basename: str) -> list[str]:
    """The names after ``<basename>:`` among this command's targets (``doit gen:aider`` → ``["aider"]``)."""
    return [t.split(":", 1)[1] for t in current().targets if t.startswith(f"{basename}:")]


def tier_steps_only(steps: tuple[str, ...]) -> bool:
    """True when this command runs tasks and names only tier steps (``doit gen:aider``, ``doit pull
    prove:aider/x``: basenames in ``steps``): then the creators of agents, trials and reports make no tasks.
    A command naming no task (the default tasks), another task, or running none (``doit list``) gives False."""
    command = current()
    names = command.targets
    return command.runs_tasks and bool(names) and all(n.split(":", 1)[0] in steps for n in names)


# ---- variables ----

MAX_JOBS = 256  # each task in flight is a thread of doit's and a container or a cluster slot: past this, threads run out


def jobs(raw: str | None) -> int:
    """``jobs=N``: how many tasks (proofs, trials) run at once; default (``raw`` None) the number of CPUs.
    Anything but a whole number from 1 to ``MAX_JOBS`` stops the command with one line (doit itself would run
    nothing at all for 0 or less, and fails to start a thread a task for tens of thousands)."""
    if raw is None:
        return os.cpu_count() or 1
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1 or value > MAX_JOBS:
        raise SystemExit(f"jobs={raw}: give a whole number of tasks to run at once, from 1 to {MAX_JOBS}; nothing "
                         f"was run")
    return value


def whole(name: str, default: int) -> int:
    """The variable ``name=`` of this command as a whole number of 1 or more (``default`` when not given);
    anything else stops the command with one line."""
    raw = current().var(name, default)
    try:
        value = int(raw)
    except (TypeError, ValueError):
        value = 0
    if value < 1:
        raise SystemExit(f"{name}={raw}: give a whole number, 1 or more; nothing was run")
    return value


def _setting_names() -> tuple[set[str], str]:
    """The names of every setting the agents declare, and why they are unknown ("" when agents.toml loads)."""
    from rules.agents import load_agents

    try:
        return {s.name for a in load_agents(broken={}).values() for s in a.settings}, ""
    except ConfigError as exc:
        return set(), f" (evals/agents.toml did not load, so its settings are unknown: {exc})"


def check_variables(given: dict | None) -> None:
    """Stop (SystemExit with one line) when the command line has a ``name=value`` that is neither one of lab's
    variables (``rules.agents.LAB_VARIABLES``) nor a setting an agent declares: doit would ignore it."""
    from rules.agents import LAB_VARIABLES

    if not given:
        return
    unknown = sorted(set(given) - set(LAB_VARIABLES))
    if not unknown:
        return
    settings, why = _setting_names()
    own = _tier_variables()
    unknown = [n for n in unknown if n not in settings and n not in own]
    if unknown:
        known = ", ".join(f"{n}=" for n in sorted(set(LAB_VARIABLES) | settings | own))
        raise SystemExit(f"unknown variable(s) {', '.join(f'{n}=' for n in unknown)}; lab knows {known}{why} "
                         "(README.md, Commands)")


def _tier_variables() -> set[str]:
    """The command-line variables the tiers of this home declare besides lab's (``rules.tier.Tier.variables``);
    asked only when a variable is not lab's, so a command does not import every tier. A tier that does not load
    declares none here (its own command says why)."""
    from rules import tiers
    from rules.config import ConfigError

    out: set[str] = set()
    for name in tiers.present():
        try:
            out |= set(getattr(tiers.get(name), "variables", ()))
        except ConfigError:
            pass
    return out


def check_repeated(argv: list[str]) -> None:
    """Stop (SystemExit with one line) when the command line ``argv`` gives one variable more than once
    (``agent=a agent=b``): doit keeps only the last, so the other would be dropped without a word."""
    seen: dict[str, list[str]] = {}
    for arg in argv:
        if "=" in arg and not arg.startswith("-"):
            name, value = arg.split("=", 1)
            seen.setdefault(name, []).append(value)
    twice = {n: v for n, v in seen.items() if len(v) > 1}
    if twice:
        name, values = next(iter(twice.items()))
        raise SystemExit(f"{name}= is given {len(values)} times ({', '.join(repr(v) for v in values)}); give it once "
                         f"(a list where lab takes one is comma-separated, e.g. langs=go,python)")


# ---- agents: why one cannot run ----

def settings_given(agents: dict) -> dict[str, str]:
    """The setting values given on the command line (``model=X``), by setting name."""
    names = {s.name for a in agents.values() for s in a.settings}
    return {n: current().var(n) for n in names if current().var(n)}


def settings_unused(names: list[str], agents: dict) -> str | None:
    """Why the settings given on the command line do not fit the agents ``names`` (all known): a setting none of
    them declares (``agent=noop model=X``) would be dropped without a word, and the run would not be the one
    asked for. None when every given setting is one of theirs."""
    held = {s.name for n in names for s in agents[n].settings}
    extra = sorted(set(settings_given(agents)) - held)
    if not extra:
        return None
    theirs = ", ".join(sorted(held)) or "none"
    return (f"{', '.join(f'{e}=' for e in extra)} is not a setting of {' or '.join(repr(n) for n in names)} "
            f"(its settings: {theirs}); leave it out, or pick an agent that declares it")


def agent_problem(name: str, agents: dict, runs: dict, problem: str | None, settings: bool = True) -> str | None:
    """Why ``agent=name`` cannot run here (a broken agents.toml, an unknown agent, a setting given that the
    agent does not declare (unless not ``settings``), a setting or a variable without a value). ``runs`` maps
    an agent's name to (agent with its values, run id) or to the one-line reason it cannot run."""
    if problem:
        return problem
    if name not in agents:
        if isinstance(runs.get(name), str):  # its table is there but broken: its own error says what to fix
            return runs[name]
        return f"unknown agent {name!r}; agents defined in evals/agents.toml: {', '.join(sorted(agents))}"
    unused = settings_unused([name], agents) if settings else None
    if unused:
        return unused
    if isinstance(runs[name], str):
        return runs[name]
    try:
        runs[name][0].environment()
    except ConfigError as exc:
        return str(exc)
    return None


def unknown_eval(asked: str, agents: dict, runs: dict, problem: str | None, tasks: list[str], runs_dir) -> str:
    """The one line for ``doit eval:<asked>`` when no such agent, run or trial exists: the known agents and
    runs (this command's and those with results in the folder ``runs_dir``)."""
    if problem:
        return problem
    here = {f[1] for f in runs.values() if not isinstance(f, str)}
    on_disk = {p.name for p in runs_dir.glob("*") if p.is_dir()} if runs_dir.is_dir() else set()
    run, _, trial = asked.partition("/")
    if trial and run in here:
        if not tasks:
            return f"eval:{asked}: no published tasks yet; run `doit gen:{Path(runs_dir).parent.name}` first"
        return (f"eval:{asked}: run {run!r} has no trial {trial!r}; its trials are eval:{run}/<task> for the "
                f"{len(tasks)} published tasks (`doit scenarios` lists them), <task>@<k> with repeat=N")
    if isinstance(runs.get(run), str):  # the agent's table is there but broken: its own error says what to fix
        return f"eval:{asked}: the agent {run!r} cannot run: {runs[run]}; fix its table in evals/agents.toml"
    from rules.files import read_json

    try:
        recorded = read_json(Path(runs_dir) / run / "run.json") if run in on_disk else None
    except ValueError:
        recorded = None
    if isinstance(recorded, dict) and recorded.get("agent") in agents and isinstance(recorded.get("settings"), dict):
        given = " ".join(f"{k}={v}" for k, v in recorded["settings"].items())
        return (f"eval:{asked}: {run!r} is the run of agent {recorded['agent']!r} with {given or 'no settings'}; "
                f"name the agent and give its settings: `doit eval:{recorded['agent']}{'/' + trial if trial else ''}"
                f"{' ' + given if given else ''}`")
    other = sorted((here | on_disk) - set(agents))
    return (f"eval:{asked}: unknown agent or run {run!r}; agents (evals/agents.toml): "
            f"{', '.join(sorted(agents)) or 'none'}" + (f"; other runs: {', '.join(other)}" if other else "")
            + " (an agent with settings takes them on the command line: eval:aider model=NAME)")


def repeats_left_out(asked: list[str], steps: set[str], repeat: int) -> dict[str, str]:
    """The one line for each trial named alone with ``repeat=N`` (``doit eval:<run>/<task> repeat=3``): that names
    the trial's first repeat only, and its others (``<task>@2`` ...) would not run without a word. ``asked``: the
    names after ``eval:`` on the command line, ``steps``: the eval task names there are. Trial → its refusal;
    nothing for a trial whose every repeat is named too (``eval:r/t eval:r/t@2 repeat=2``)."""
    out = {}
    for name in asked:
        run, _, trial = name.partition("/")
        if repeat < 2 or not trial or "@" in trial or name not in steps:
            continue
        left = [f"eval:{name}@{k}" for k in range(2, repeat + 1) if f"{name}@{k}" not in asked]
        if left:
            out[name] = (f"eval:{name} repeat={repeat}: eval:{name} is that trial's repeat 1 alone; name its other "
                         f"repeats too ({' '.join(left[:3])}{' ...' if len(left) > 3 else ''}) or run every trial of "
                         f"the run {repeat} times (eval:{run} repeat={repeat}); the trial was not run")
    return out


# ---- one task-running command per home, and how it stops ----

def hold_home(argv: list[str]) -> None:
    """Take this lab home's lock (``.lab/home.lock``, an exclusive ``flock`` held until this process ends) for a
    doit command ``argv`` (without the program, quoted in the lock for the next command to name) that runs
    tasks, making ``.lab`` when missing. Two such commands at once in one home removed each other's trial
    scratch folders and wrote one doit database, and a sound trial ended in an error counted as the agent's
    (seen by a newcomer); the second is refused instead. Raises SystemExit naming the command that holds the
    lock; the kernel drops it when that process ends, killed or not. Also installs the stop handler."""
    if _HOME_LOCK:
        return
    import fcntl

    STATE.mkdir(parents=True, exist_ok=True)
    fd = os.open(STATE / "home.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 1000, 0).decode("utf-8", "replace").strip() or "its process id is not recorded"
        os.close(fd)
        raise SystemExit(f"another lab command is running in this home ({STATE.parent}): {holder}. Wait for it to "
                         "end, or give this one a home of its own (LAB_HOME=/another/folder); nothing was run") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}, `doit {' '.join(argv)}`\n".encode(), 0)
    _HOME_LOCK.append(fd)
    import signal

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _stopped)


def _stopped(signum: int, _frame) -> None:
    """A task-running doit command told to stop (SIGTERM, Ctrl-C): remove the containers it started (an agent's
    would run on, and spend, until the next run's cleanup) and exit at once with 128 + the signal's number.
    Finished trials are kept (each wrote its result.json atomically); the trials it stops store nothing (no
    infrastructure error of the stop's making is counted until redone); the next run does them."""
    import signal
    import subprocess
    import time

    from rules import files, sandbox

    files.stop_writes()  # first: the trials whose containers go below must not store what they then see
    err = sys.stderr
    # the command's other threads see their containers go and would say so (Docker's 409s): theirs is no news now
    sys.stdout = sys.stderr = open(os.devnull, "w")
    targets = _COMMAND[0].targets if _COMMAND else ()
    proving = any(t.split(":")[0] in ("gen", "prove", "batch", "env") for t in targets)
    done = "finished proofs are kept, the next gen does the rest" if proving else \
        "finished trials are kept, the next run does the rest"
    print(f"\nlab: stopped ({signal.Signals(signum).name}); removing this command's containers; {done}", file=err,
          flush=True)
    n = sandbox.remove_own()
    time.sleep(0.3)  # a container whose creation was already under way when the first pass looked
    n += sandbox.remove_own()
    print(f"lab: {n} container(s) removed", file=err, flush=True)
    trials = str(STATE / "trials") + "/"
    try:  # the running trials' disk-capped scratch folders (``rules.disk``), which the exit below does not unmount
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            mounted = [line.split()[1].replace("\\040", " ") for line in f]
    except OSError:
        mounted = []
    for point in sorted((m for m in mounted if m.startswith(trials)), reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)
    os._exit(128 + signum)
