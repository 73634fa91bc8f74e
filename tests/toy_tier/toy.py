"""The toy tier: a tier defined entirely in its own folder, the worked example of README.md, Adding a tier.

Its source is a folder of topics, ``source`` in its suite.toml (relative to the tier's folder, default
``source``): ``<topic>/`` holds ``<topic>.py`` (the stub the agent edits), ``reference.py`` (the reference
solution), ``test_<topic>.py`` (its pytest tests) and ``about.md`` (the prompt). Each topic is a task,
``toy-<topic>``, labelled by its ``topic``; a folder without one of those files is rejected with the reason.
Tasks are proven and graded in lab's grader image with this folder's ``templates/check.sh.j2`` (the grading
contract of lab's grader: canaries, the JUnit report in ``$out``, the pristine test file laid back). A trial
is lab's own (``rules.trial``: ``tries=N``, default 1, ``repeat=N``); the report has one metric, pass@1.

Lab finds the class through this folder's suite.toml (``plugin = "toy:ToyTier"``) and imports this module
with the folder first on ``sys.path``; nothing under rules/ names it.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from rules.config import ConfigError, Limits, Suite
from rules.tier import EvalContext, Metric, Profile, Rejected, Selection, Step, TaskSpec, Tier

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
TASK_FORMAT = 1  # version of the toy's task.json
TEST_TIMEOUT = 60  # seconds check.sh gives pytest
PROFILE = Profile("toy", (Metric("pass_1", "pass@1", 1),), group="topic", groups="topics", passed=None,
                  failed="fail", free=True, records=False, attempts=False, verb="passed", rate_noun="pass rate",
                  rates="pass@1", passes="passes", try_word="try")


@dataclass
class Rendered:
    """A rendered toy task: ``task_files`` and ``answer_files`` (relative path → (content, mode)), ``meta``
    (its task.json)."""

    task_files: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    answer_files: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)


class ToyTier(Tier):
    """Tasks from a folder of topics, one Python function each (module doc)."""

    name = "toy"
    groups = ("topic",)
    profile = PROFILE

    def tasks(self, suite: Suite, var: Callable[..., Any]) -> Selection:
        """Every topic folder of the source, sorted; raises ConfigError naming ``source`` when it is missing."""
        from rules import images

        source = source_dir(suite)
        topics = sorted(p for p in source.iterdir() if p.is_dir())
        templates = tuple(str(p) for p in sorted(TEMPLATES.glob("*.j2")))
        specs = [TaskSpec(name=f"toy-{p.name}", groups={"topic": p.name},
                          deps=tuple(sorted(str(f) for f in p.rglob("*") if f.is_file())) + templates,
                          settings={"format": TASK_FORMAT}, image=images.GRADER,
                          image_stamp=images.stamp_path("grader"), source=p) for p in topics]
        return Selection([s.name for s in specs], specs, {"source": str(source)})

    def render(self, suite: Suite, spec: TaskSpec) -> Rendered:
        """The task of one topic folder (pure: reads it and the templates); raises Rejected naming a missing
        file."""
        folder, topic = Path(spec.source), spec.groups["topic"]
        stub, test = f"{topic}.py", f"test_{topic}.py"
        missing = [n for n in (stub, test, "reference.py", "about.md") if not (folder / n).is_file()]
        if missing:
            raise Rejected(f"malformed topic: missing {', '.join(missing)}")
        context = {"task": spec.name, "topic": topic, "solution_file": stub, "test_file": test,
                   "about": (folder / "about.md").read_text(encoding="utf-8"), "test_timeout": TEST_TIMEOUT}
        meta = {"version": TASK_FORMAT, "tier": self.name, "task": spec.name, "topic": topic,
                "solution_files": [stub], "test_files": [test], "report": "junit", "grader": "grader"}
        out = Rendered(meta=meta)
        for name, mode in (("prompt.txt", 0o644), ("setup.sh", 0o755), ("check.sh", 0o755)):
            out.task_files[name] = (_template(f"{name}.j2").render(**context).encode(), mode)
        out.task_files["task.json"] = ((json.dumps(meta, indent=2, sort_keys=True) + "\n").encode(), 0o644)
        for name in (stub, test):
            out.task_files[f"workspace/{name}"] = ((folder / name).read_bytes(), 0o644)
        out.answer_files[stub] = ((folder / "reference.py").read_bytes(), 0o644)
        return out

    def prove(self, build: Path, image: str, limits: Limits) -> dict:
        from rules import images
        from rules.build import prove_staged

        return prove_staged(build, image=image, limits=limits, stamp=images.stamp_path("grader"),
                            group_keys=self.groups)

    def eval_steps(self, ctx: EvalContext):
        """``eval:<run>/<task>[@k]``, ``eval:<run>`` and ``eval:<agent>`` (a run with settings), as lab's own
        trials (``rules.runs.eval_trial``) in the grader image: ``tries=N`` (default 1), ``repeat=N``."""
        from rules.trial import trial_folder

        tries, repeat = ctx.whole("tries", 1), ctx.whole("repeat", 1)
        for name, found in ctx.runs.items():
            if isinstance(found, str):
                yield Step(name, fails=found, doc=f"run {name} (needs: {found})")
                continue
            agent, run = found
            folders = [trial_folder(t, k) for t in ctx.tasks for k in range(1, repeat + 1)]
            for task in ctx.tasks:
                yield from (self._trial_step(ctx, name, agent, run, task, k, tries, folders)
                            for k in range(1, repeat + 1))
            yield Step(run, task_dep=[f"eval:{run}/{f}" for f in folders],
                       doc=f"run {agent.label} over the toy tier ({len(ctx.tasks)} tasks)")
            if run != name:
                yield Step(name, task_dep=[f"eval:{run}"], doc=f"run {agent.label}")

    def _trial_step(self, ctx: EvalContext, name: str, agent, run: str, task: str, k: int, tries: int,
                    folders: list[str]) -> Step:
        """The Step of repeat ``k`` of agent ``name``'s trial (run ``run``) on ``task``."""
        from rules import images
        from rules.files import files_below
        from rules.runs import eval_trial, trial_uptodate
        from rules.trial import trial_folder

        folder = trial_folder(task, k)
        args = [self.name, name, task, tries, dict(agent.values), k, run]
        service = agent.service_images()
        action = [self.name, name, task, folders, ctx.since, tries, dict(agent.values), k, run, *ctx.backend()]
        return Step(f"{run}/{folder}", action=(eval_trial, action),
                    file_dep=files_below(os.path.join(ctx.suite.tasks_dir, task)) + [str(ctx.stamp(agent, run))],
                    task_dep=[ctx.agent_image(name, None)] + service,
                    targets=[os.path.join(ctx.suite.runs_dir, run, folder, "result.json")],
                    settings={"tries": tries, "grade_limits": repr(ctx.suite.prove), "grader": images.GRADER},
                    current=(trial_uptodate, args), doc=f"toy trial of {agent.label} on {folder}")

    def regrade(self, agent: str) -> str:
        from rules.trial import regrade_agent

        counts = regrade_agent(self.name, agent)
        return f"[{agent}] re-graded {counts['regraded']} trials, {counts['rerun']} need a run"

    def stale_judge(self, suite: Suite, agents: dict) -> Callable[..., bool]:
        """A finished result is stale when ``rules.trial`` says it is not current for the run's agent (an
        unknown agent: never)."""
        from rules import images
        from rules.trial import current_grader_id, result_state_for_report

        grader_id = current_grader_id(images.GRADER)
        return lambda result, task_dir, agent, trial_dir: agent is not None and result_state_for_report(
            result, task_dir, agent, suite.prove, trial_dir, images.GRADER, grader_id) != "current"


def source_dir(suite: Suite) -> Path:
    """The topics folder: suite.toml's ``source`` (relative to the tier's folder; default ``source``)."""
    source = suite.dir / str(suite.table.get("source", "source"))
    if not source.is_dir():
        raise ConfigError(f"{suite.dir / 'suite.toml'}: source = {str(source)!r} is not a folder; give the "
                          "folder of topics (one folder per task)")
    return source


@lru_cache(maxsize=None)
def _template(name: str):
    """This folder's template ``name`` (undefined names are errors; ``q`` quotes for the shell)."""
    import shlex

    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False)
    env.filters["q"] = lambda s: shlex.quote(str(s))
    return env.get_template(name)


