"""The aider tier (the Aider polyglot benchmark: Exercism exercises in six languages) as a ``rules.tier.Tier``.

``python -m rules.tiers.aider UPSTREAM TRACK [SLUG ...]`` proves exercises straight from an upstream checkout,
outside doit, and prints one line each: a tool for working on a track's templates.

Discovery and rendering live in ``rules.tiers.aider.exercises``; this module is the tier's seam: which tasks a command chooses,
how they are proven (one grader image, batches per track), how its trials are planned (``eval:<run>/<task>``,
``tries=N`` with the test output fed back, ``repeat=N``, ``backend=``) and how its report reads (pass@1 and
pass@2 per language, free tasks apart, aider's leaderboard records).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable

from rules.tiers.aider import exercises as aider
from rules.config import Limits, Suite
from rules.prove import BatchRunner
from rules.records import TASK_FORMAT
from rules.tier import EvalContext, ImageSpec, Metric, Profile, Rejected, Selection, Step, TaskSpec, Tier, flag

TRIES = 2  # the polyglot benchmark's pass@2: a second try after a failed one, with the test output
def _top_modules(tree: Path) -> set[str]:
    """The module names a Python work tree puts on a shared ``sys.path``: its top-level *.py files and folders."""
    return {p.stem if p.suffix == ".py" else p.name for p in tree.iterdir()
            if (p.is_file() and p.suffix == ".py") or p.is_dir()}


def _go_module(tree: Path) -> set[str]:
    """The module path a Go work tree's go.mod declares (one name: two modules of one path cannot share a
    workspace); a tree without one gets a name no other has, so it is never batched."""
    try:
        for line in (tree / "go.mod").read_text(encoding="utf-8").splitlines():
            if line.startswith("module "):
                return {line.split()[1].strip('"')}
    except (OSError, IndexError, UnicodeDecodeError):
        pass
    return {"/"}  # "/" is in RESERVED: a tree without a module is proven alone



# besides the standard library's modules: what pytest imports while it runs the tests
PYTEST_MODULES = frozenset({"pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "conftest",
                            "exceptiongroup", "tomli", "pygments", "colorama"})
# language → its batch runner; a track not here is proven task by task (rules.grade.grade_proof)
BATCH_RUNNERS = {
    "java": BatchRunner("aider/java/batch.sh.j2"),  # a class loader per run in one JVM
    "javascript": BatchRunner("aider/javascript/batch.sh.j2"),
    "python": BatchRunner("aider/python/batch.sh.j2", _top_modules,
                          frozenset(getattr(sys, "stdlib_module_names", ())) | PYTEST_MODULES),
    "go": BatchRunner("aider/go/batch.sh.j2", _go_module, frozenset({"/", "std", "cmd"}), isolated=True),
}


def batch_runner(meta: dict) -> BatchRunner | None:
    """The batch runner of a rendered task of this tier (its ``task.json``), or None when its track proves task
    by task."""
    return BATCH_RUNNERS.get(meta.get("language"))


PROFILE = Profile("aider", (Metric("pass_1", "pass@1", 1), Metric("pass_2", "pass@2", 2)), group="language",
                  groups="languages", passed=None, failed="fail", free=True, records=True, attempts=False,
                  verb="passed", rate_noun="pass rate", rates="pass@k", passes="passes", try_word="try")


class AiderTier(Tier):
    """The aider tier (Exercism exercises, ``rules.tiers.aider.exercises``) through the seam: one grader image for all tasks,
    trials of up to ``tries=N`` tries (default 2: the polyglot benchmark's pass@2), reported as pass@1 and
    pass@2 per language."""

    name = "aider"
    groups = aider.GROUP_KEYS
    setup_copies = True  # templates/aider/setup.sh.j2 is `cp -R workspace/.` (no -p): rules.worktree copies instead
    profile = PROFILE
    selection_vars = ("langs", "limit", "all")

    def tasks(self, suite: Suite, var: Callable[..., Any]) -> Selection:
        from rules import images
        from rules.tiers.aider import exercises as aider

        langs = var("langs")
        languages = [x.strip() for x in langs.split(",") if x.strip()] if langs is not None else list(suite.languages)
        if not languages:  # `langs=` with nothing in it selects nothing, which would unpublish every task
            raise SystemExit(f"langs={langs}: name at least one track (for example langs={','.join(suite.languages[:2])}),"
                             " or leave langs= out for all of them; nothing was proven or run")
        raw = var("limit", suite.sample)
        try:
            limit = None if flag(var, "all") else int(raw)
        except ValueError:
            limit = -1
        if limit is not None and limit < 1:
            raise SystemExit(f"limit={raw}: give a whole number of exercises per track, 1 or more (or all=1)")
        unknown = set(languages) - set(suite.languages)
        if unknown:
            raise SystemExit(f"langs=: unknown language(s) {', '.join(sorted(unknown))}; this tier has "
                             f"{','.join(suite.languages)} (for example langs={','.join(suite.languages[:2])});"
                             " nothing was proven or run")
        everything = aider.discover(suite.checkout_dir, suite.languages)
        if not everything:  # publishing nothing would unpublish every task proven so far
            raise Rejected(self.upstream_problem(suite, suite.checkout_dir) + "; nothing was proven or published")
        chosen = aider.select([e for e in everything if e.track in languages], limit)
        stamp = images.stamp_path("grader")
        specs = [TaskSpec(name=ex.task, groups=dict(zip(self.groups, (ex.track, ex.slug))),
                          deps=tuple(ex.files() + [str(p) for p in aider.templates_for(ex.track)]),
                          settings={"format": TASK_FORMAT}, image=images.GRADER, image_stamp=stamp,
                          source=ex) for ex in chosen]
        return Selection([e.task for e in everything], specs, {"languages": languages, "limit": limit})

    def upstream_problem(self, suite: Suite, checkout: Path) -> str | None:
        """A checkout with no exercise of the suite's tracks is not the polyglot benchmark."""
        from rules.tiers.aider import exercises as aider

        if aider.discover(checkout, suite.languages):
            return None
        return (f"the upstream checkout {checkout} holds no exercise of the tracks {','.join(suite.languages)} "
                f"(<track>/exercises/practice/<slug>/.meta/config.json): is it the polyglot benchmark? Pass "
                f"upstream=URL_OR_PATH of one")

    def render(self, suite: Suite, spec: TaskSpec):
        from rules.tiers.aider import exercises as aider

        try:
            return aider.render(spec.source)
        except aider.ExerciseError as exc:
            raise Rejected(str(exc)) from None

    def images(self, suite: Suite, specs: list[TaskSpec]) -> list[ImageSpec]:
        return []  # the grader image is built by `doit image:grader`

    def prove(self, build: Path, image: str, limits: Limits) -> dict:
        from rules import images
        from rules.build import prove_staged

        return prove_staged(build, image=image, limits=limits, stamp=images.stamp_path("grader"), group_keys=self.groups)

    def batches(self, suite: Suite, specs: list[TaskSpec], jobs: int) -> dict[str, list[str]]:
        """Batch name → the chosen tasks it may prove together (``prove_batch``): each track with a batch
        runner (``BATCH_RUNNERS``) and two tasks or more, split into ``jobs`` batches, round robin, so
        they run side by side."""
        by_track: dict[str, list[str]] = {}
        for spec in specs:
            track = spec.groups["language"]
            if batch_runner({"language": track}):
                by_track.setdefault(track, []).append(spec.name)
        out = {}
        for track, names in by_track.items():
            if len(names) < 2:
                continue
            parts = max(1, min(jobs, len(names) // 2))
            for k in range(parts):
                out[f"{track}-{k + 1}"] = names[k::parts]
        return out

    def prove_batch(self, builds: list[Path], image: str, limits: Limits) -> int:
        from rules import images
        from rules.build import prove_batch_staged

        return prove_batch_staged(builds, batch_runner, image=image, limits=limits, stamp=images.stamp_path("grader"),
                                  group_keys=self.groups)

    def eval_steps(self, ctx: EvalContext):
        """``eval:<run>/<task>[@k]`` for each agent's run, ``eval:<run>`` (every trial of it) and
        ``eval:<agent>`` when the run has settings (``eval:aider model=X`` runs ``aider.X``)."""
        from rules import images
        from rules.files import files_below
        from rules.runs import eval_trial, trial_uptodate
        from rules.trial import trial_folder

        for name in ("agents", "attempts"):
            if ctx.var(name) is not None:
                raise SystemExit(f"{name}= is another tier's (retry until plausible; suite=swe has it): give "
                                 "agent=NAME alone for this tier")
        tries, repeat = ctx.whole("tries", TRIES), ctx.whole("repeat", 1)
        backend, cluster = ctx.backend()
        suite = ctx.suite
        files = {t: files_below(os.path.join(suite.tasks_dir, t)) for t in ctx.tasks} if ctx.agents else {}
        settings = {"tries": tries, "grade_limits": repr(suite.prove), "grader": images.GRADER}
        for name, found in ctx.runs.items():
            if isinstance(found, str):  # a setting without a value: `doit eval:<agent>` says which
                yield Step(name, fails=found, doc=f"run {name} (needs: {found})")
                continue
            agent, run = found
            deps = [str(ctx.stamp(agent, run))]
            folders = [trial_folder(t, k) for t in ctx.tasks for k in range(1, repeat + 1)]
            # the agent image is a task_dep, not a file_dep: rebuilding it changes nothing a trial's key holds
            builds = [ctx.agent_image(name, None)] + agent.service_images()
            for task in ctx.tasks:
                for k in range(1, repeat + 1):
                    folder = trial_folder(task, k)
                    args = [self.name, name, task, tries, dict(agent.values), k, run]
                    yield Step(f"{run}/{folder}",
                               action=(eval_trial, [self.name, name, task, folders, ctx.since, tries, dict(agent.values),
                                                k, run, backend, cluster]),
                               file_dep=files[task] + deps, task_dep=builds,
                               targets=[os.path.join(suite.runs_dir, run, folder, "result.json")],
                               settings=settings, current=(trial_uptodate, args), doc=f"trial of {agent.label} on {folder}")
            yield Step(run, task_dep=[f"eval:{run}/{f}" for f in folders],
                       doc=f"run {agent.label} over the {self.name} tier ({len(ctx.tasks)} tasks"
                           + (f", {repeat} times)" if repeat > 1 else ")"))
            if run != name:
                yield Step(name, task_dep=[f"eval:{run}"], doc=f"run {agent.label}")

    def regrade(self, agent: str) -> str:
        from rules.trial import regrade_agent

        counts = regrade_agent(self.name, agent)
        return (f"[{agent}] re-graded {counts['regraded']} trials ({counts['changed']} changed outcome), "
                f"{counts['rerun']} need a run (`doit run agent={agent}`), {counts['skipped']} skipped (errors)")

    def suspicions(self, meta: dict) -> tuple:
        """The track's table of ``rules.tiers.aider.suspicions`` (the task's ``language``)."""
        from rules.tiers.aider.suspicions import TABLE

        return TABLE.get(meta.get("language"), ())

    def conformance(self, meta: dict, task_dir: Path, stub: Path, graded: Path) -> list[dict]:
        """The ``signature`` flags of ``rules.tiers.aider.signatures`` for a typed track (Java, Rust, C++, Go):
        the graded tree's public signatures against the stub's, the reference's accepted too (the published
        answer beside the task: ``<home>/answers/<task>``, when there)."""
        from rules.tiers.aider.signatures import conformance

        reference = Path(task_dir).resolve().parent.parent / "answers" / Path(task_dir).resolve().name
        return conformance(meta.get("language", ""), stub, graded, list(meta.get("solution_files") or []),
                           reference if reference.is_dir() else None)

    def stale_judge(self, suite: Suite, agents: dict) -> Callable[..., bool]:
        """The judge of ``rules.trial.trial_state``: a finished result is stale when its state is not
        ``current`` for the run's current agent, the task and today's grader image and grading limits."""
        from rules import images
        from rules.trial import current_grader_id

        image, limits = images.GRADER, suite.prove
        grader_id = current_grader_id(image)
        return lambda result, task_dir, agent, trial_dir: _stale(result, task_dir, agent, trial_dir, image,
                                                                 grader_id, limits)


def _stale(result: dict, task_dir: Path, agent, trial_dir: Path, image: str, grader_id: str | None,
           limits: Limits) -> bool:
    """True when ``result`` finished but no longer counts as the current trial of ``agent`` (the run's current
    definition with its setting values; None when unknown) on the task in ``task_dir``:
    ``rules.trial.trial_state`` says ``rerun`` or ``regrade``. An ``error`` is never stale: it shows as the
    error it is (the report asks only about finished results). With no known agent only the task's side can
    be checked (its digest without grading files, and check.sh's)."""
    from rules.trial import GRADING_FILES, check_digest, result_state_for_report, task_digest

    if agent is None:
        key = result.get("key") or {}
        return ((key.get("run") or {}).get("task_digest") != task_digest(task_dir, without=GRADING_FILES)
                or (key.get("grade") or {}).get("check_digest") != check_digest(task_dir))
    return result_state_for_report(result, task_dir, agent, limits, trial_dir, image, grader_id) != "current"
