"""The tier seam: everything lab's generic modules need from a tier, and nothing more.

A tier turns some source (an upstream benchmark checkout, a dataset of instances) into tasks, says how its trials
are run and graded, and how its report reads. Generic code (``rules.tasks``, ``rules.report``, ``rules.build``)
names no tier: it asks ``rules.tiers.get(name)`` for a ``Tier`` and calls these:

- gen and prove: ``tasks(suite, var)`` (a ``Selection``), ``render(suite, spec)`` (pure; raises ``Rejected``),
  ``images(suite, specs)`` (the environment images it builds: ``ImageSpec``), ``prove(build, image, limits)``,
  and optionally ``batches(suite, specs, jobs)`` / ``prove_batch(builds, image, limits)``;
- its groups: ``groups`` (the task labels its records carry, e.g. ``("language", "exercise")``) and ``profile``
  (the report's metrics and the group it breaks them down by: a ``Profile``);
- its trials: ``eval_steps(ctx)`` (the trials of a run, as ``Step`` records the doit creators turn into tasks),
  ``report_run(ctx, agent)`` (which run ``doit run agent=X`` makes before the report), ``regrade(agent)``,
  ``agent_bases(suite, tasks)`` (the images agents are built on for its tasks, besides the grader image),
  ``stale_judge(suite, agents)`` (whether a stored result no longer counts, for the report) and
  ``suspicions(meta)`` (the patterns the suspicion scan looks for in a task's graded change: ``rules.scan``) and
  ``conformance(meta, task_dir, stub, graded)`` (flags of the graded tree's public API against the stub's).

A ``TaskSpec`` names its own image (the tag every stage runs it in) and the stamp that says which build of the
image it was proven with, so a tier with one image per repository and version needs no global grader.
Nothing here imports doit: the creators turn these records into task dicts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from rules.config import Limits, Suite


class Rejected(Exception):
    """A task cannot be rendered; the message is the reason recorded in its proof and the manifest."""


class Unavailable(Exception):
    """A task's source cannot be reached here (a repository that does not clone): nothing is recorded, the
    command fails with the message (naming the fix), and the next command tries again."""


@dataclass(frozen=True)
class TaskSpec:
    """One task a tier can render: its stable ``name``; ``groups`` (labels such as ``{"language": "go"}`` or
    ``{"repo": "pallets/flask"}``, also the render's fallback meta when it is rejected); ``deps`` (the files
    its render reads: doit ``file_dep``); ``settings`` (anything else whose change must re-render it: doit
    ``config_changed``); ``image`` (the image tag it is proven and graded in) and ``image_stamp`` (the stamp
    file of that image's build); ``source`` (what ``render`` needs: an exercise, a dataset record)."""

    name: str
    groups: dict[str, str]
    deps: tuple[str, ...]
    settings: dict
    image: str
    image_stamp: Path
    source: Any = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class ImageSpec:
    """An environment image a tier builds: ``name`` (``env:<tier>/<name>`` in doit), ``tag``, ``stamp`` (its
    stamp file, the target), ``deps`` (template files), ``settings`` (what else rebuilds it) and ``build`` (a
    callable taking no arguments that builds, stamps and returns the stamp; raises SandboxError)."""

    name: str
    tag: str
    stamp: Path
    deps: tuple[str, ...]
    settings: dict
    build: Callable[[], dict] = field(compare=False, hash=False)


@dataclass
class Selection:
    """A tier's answer to the command line: ``every`` task name it has, the ``chosen`` specs, a record of
    the ``settings`` in force (written into the manifest) and, optionally, ``labels``: the group labels of
    tasks it knows without rendering them (task → {group key: label}), so that the manifest and gen's summary
    count unproven tasks by label (the swe tier: per repository)."""

    every: list[str]
    chosen: list[TaskSpec]
    settings: dict
    labels: dict = field(default_factory=dict)


def flag(var: Callable[..., Any], name: str) -> bool:
    """A command-line switch such as ``all=1``: true for 1, true, yes, on; false for 0, false, no, off or when
    not given. Any other value stops the command with one line (``all=2`` must not mean "no" quietly)."""
    raw = str(var(name, "0"))
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise SystemExit(f"{name}={raw}: give 1 (or true, yes, on) or 0 (or false, no, off); nothing was run")



@dataclass(frozen=True)
class Metric:
    """A rate the report gives per run: ``key`` (its field in a row and in report.json: ``pass_2``), ``name``
    (what the pages call it: ``pass@2``) and ``tries`` (a trial counts when its outcome word says it passed on
    this try or earlier, see ``rules.report.passed_within``)."""

    key: str
    name: str
    tries: int


@dataclass(frozen=True)
class Profile:
    """What a tier's report measures and how it groups: its ``metrics`` (the last one is the headline: the
    leaderboard's bars and order, the heat map), the task label it groups by (``group``, one of the tier's
    ``groups``) and the report.json field of those groups (``groups``), the outcome words of a passed
    (``passed``; None: ``pass@<try>``) and a failed trial, whether the tier has ``free`` tasks (rates without
    them) and aider's leaderboard ``records``, and whether its trials make ``attempts`` (retry until plausible:
    attempt statistics); ``verb``, ``rate_noun``, ``rates``, ``passes`` and ``try_word`` are the words the
    pages use ("not passed", "its pass rate", "pass@k ... use", "only A passes", "try")."""

    tier: str
    metrics: tuple[Metric, ...]
    group: str
    groups: str
    passed: str | None
    failed: str
    free: bool
    records: bool
    attempts: bool
    verb: str
    rate_noun: str
    rates: str
    passes: str
    try_word: str

    @property
    def headline(self) -> Metric:
        return self.metrics[-1]


@dataclass
class Step:
    """One doit task a tier's trials need, without doit: ``name`` (below ``eval:``), ``action`` (a callable and
    its arguments; it raises ``rules.config.ConfigError`` or ``rules.backends.BackendError`` to fail with that
    message), ``file_dep``, ``task_dep``, ``targets``, ``settings`` (what else makes it run again: one
    ``config_changed``), ``current`` (a callable and its arguments: True when the stored result still counts),
    ``doc``, ``setup`` (doit names of steps run before it only when it is not current); or ``fails``, the one
    line a step that cannot run prints."""

    name: str
    action: tuple | None = None
    file_dep: list = field(default_factory=list)
    task_dep: list = field(default_factory=list)
    targets: list = field(default_factory=list)
    settings: dict | None = None
    current: tuple | None = None
    doc: str = ""
    fails: str | None = None
    setup: list = field(default_factory=list)  # steps run first only when this one runs (not current)


@dataclass
class EvalContext:
    """What a tier's ``eval_steps`` and ``report_run`` get from the command: the tier's ``suite``, the
    ``agents`` of evals/agents.toml (name → Agent) and the ``problem`` that stopped loading them (or None),
    ``runs`` (agent name → (agent with its settings' values, run id), or → the reason it cannot run),
    ``tasks`` (the published task names), ``var`` (reads a command-line variable: ``var(name, default)``) and
    the command's shared rules: ``whole(name, default)`` (a whole number ≥ 1 or SystemExit), ``backend()``
    (``(name, cluster)``), ``stamp(agent, run)`` (the agent definition's stamp file: a trial's file_dep),
    ``agent_problem(name, settings=True)`` and ``settings_unused(names)`` (the one-line reasons an agent
    cannot run, or None), ``agent_image(agent_name, base)`` (the doit task that builds that agent's image on
    ``base``, None: the grader image) and ``since`` (when the command started, seconds since the epoch)."""

    suite: Suite
    agents: dict
    problem: str | None
    runs: dict
    tasks: list[str]
    var: Callable[..., Any]
    whole: Callable[[str, int], int]
    backend: Callable[[], tuple[str, str | None]]
    stamp: Callable[[Any, str], Path]
    agent_problem: Callable[..., str | None]
    settings_unused: Callable[[list[str]], str | None]
    agent_image: Callable[[str, str | None], str]
    since: float


class Tier:
    """The defaults of a tier (see the module docstring); a tier subclasses this and sets ``name``, ``groups``
    and ``profile`` and the gen/prove methods. ``selection_vars`` are the command-line variables that choose
    what its gen proves (refused on a run, which covers every published task)."""

    name: str = ""
    groups: tuple[str, ...] = ()
    profile: Profile
    selection_vars: tuple[str, ...] = ()
    variables: tuple[str, ...] = ()  # command-line variables of its own, besides lab's (rules.agents.LAB_VARIABLES)
    setup_copies: bool = False  # True: its setup.sh only copies workspace/ (`cp -R`), so a laid tree may be copied

    def tasks(self, suite: Suite, var: Callable[..., Any]) -> Selection:
        raise NotImplementedError

    def render(self, suite: Suite, spec: TaskSpec):
        raise NotImplementedError

    def upstream_problem(self, suite: Suite, checkout: Path) -> str | None:
        """Why the pulled ``checkout`` is not this tier's upstream (one line naming the fix), or None. A pull
        whose checkout has a problem is not remembered for later commands."""
        return None

    def images(self, suite: Suite, specs: list[TaskSpec]) -> list[ImageSpec]:
        return []

    def prove(self, build: Path, image: str, limits: Limits) -> dict:
        raise NotImplementedError

    def batches(self, suite: Suite, specs: list[TaskSpec], jobs: int) -> dict[str, list[str]]:
        return {}

    def eval_steps(self, ctx: EvalContext):
        """The trials of this command's runs as ``Step`` records (an iterable)."""
        raise NotImplementedError

    def report_run(self, ctx: EvalContext, agent: str) -> str:
        """The run (its ``eval:`` name) that ``doit run agent=NAME`` makes before the report; raises
        ``rules.config.ConfigError`` with the one line when it cannot run."""
        from rules.config import ConfigError

        problem = ctx.agent_problem(agent)
        if problem:
            raise ConfigError(f"agent={agent}: {problem}; nothing was run")
        return ctx.runs[agent][1]

    def regrade(self, agent: str) -> str:
        """Grade ``agent``'s stored trials again; returns the summary line. Raises ConfigError or SandboxError."""
        raise NotImplementedError

    def agent_bases(self, suite: Suite, tasks: list[str]) -> dict[str, str]:
        """The images agents are built on for ``tasks`` besides the grader image: env name → image tag."""
        return {}

    def suspicions(self, meta: dict) -> tuple:
        """The suspicion scan's table for a task whose task.json holds ``meta``: ``rules.scan.Suspicion``
        patterns of what no solution of it needs (the test framework reached, equality that says yes to
        anything, the tests or descriptors read, output redirected); () scans nothing."""
        return ()

    def conformance(self, meta: dict, task_dir: Path, stub: Path, graded: Path) -> list[dict]:
        """Flags, shaped as the suspicion scan's (``rules.scan.scan``), where the ``graded`` tree's public API
        departs from the one the ``stub`` tree declares for the task in ``task_dir`` (whose task.json holds
        ``meta``): evidence beside the scan's, no verdict depends on it; [] checks nothing."""
        return []

    def prune(self, suite: Suite, dry: bool) -> str:
        """``doit prune:<tier>``: remove (``dry``: list) the images this tier built that no published task needs;
        returns the lines to print (what went, the bytes freed). Raises ConfigError when the tier builds none."""
        from rules.config import ConfigError

        raise ConfigError(f"the {self.name} tier builds no images of its own to prune (its tasks run in the grader "
                          "image)")

    def subset(self, suite: Suite, var: Callable[..., Any]) -> tuple[str, frozenset[str]] | None:
        """The subset of the tier's tasks this command asks for, as ``(name, task names)`` (the report then covers
        only those, written as ``report.<name>.*``), or None: every task. Raises Rejected with one line when the
        subset cannot be read."""
        return None

    def stale_judge(self, suite: Suite, agents: dict) -> Callable[..., bool]:
        """``judge(result, task_dir, agent, trial_dir) -> bool``: True when a stored trial result no longer
        counts (the report shows it as stale); ``agent`` is the run's current definition or None."""
        return lambda result, task_dir, agent, trial_dir: False
