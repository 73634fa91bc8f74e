"""The swe tier (SWE-bench-style instances: a repository at the commit before a fix, the issue as the prompt,
held-out FAIL_TO_PASS / PASS_TO_PASS tests) as a ``rules.tier.Tier``.

The dataset, environments, rendering, proofs and predictions live in ``rules.tiers.swe.swebench``; the trial kind (attempts
across agents, retry until plausible) in ``rules.tiers.swe.swerun``. This module is the seam: which instances a command
chooses, how its runs are planned (``agent=NAME`` or ``agents=A,B``, ``attempts=N``, ``repeat=N``), the agent
images built FROM each task's environment image, and the report's profile (resolved per repository).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from rules.tiers.swe import swebench
from rules.tiers.swe.env import STAMP_PREFIX
from rules.config import TEMPLATES, ConfigError, Limits, Suite
from rules.files import files_below, read_json
from rules.records import TASK_FORMAT
from rules.tier import EvalContext, ImageSpec, Metric, Profile, Rejected, Selection, Step, TaskSpec, Tier

TIER = swebench.TIER
PROFILE = Profile(TIER, (Metric("resolved", "resolved", 1),), group="repo", groups="repos", passed="resolved",
                  failed="unresolved", free=False, records=False, attempts=True, verb="resolved",
                  rate_noun="resolved rate", rates="the resolved rate", passes="resolves", try_word="attempt")


class SweTrials(Tier):
    """The trial kind of a tier of SWE-bench instances (``rules.tiers.swe.swerun``: attempts across agents, retry
    until plausible), shared by the tiers whose tasks are such instances (``swe``, ``swe-multi``): its runs,
    their report's run, the agent images built FROM each task's environment image, what makes a stored result
    stale, and the pruning of environment images. What a tier says for it: its ``name`` (its suite, records and
    messages), ``groups`` and ``env_stamp_prefix`` (the stamp names of its environment images,
    ``.lab/images/<prefix><env>.json``); its task folders say the rest (task.json ``image`` and ``env``; the
    optional ``pretest.sh``, the pre-existing tests an attempt must not break)."""

    env_stamp_prefix: str = ""

    def eval_steps(self, ctx: EvalContext):
        """``eval:<run>/<task>[@k]``, ``eval:<run>`` and ``eval:<agent>`` of this tier: ``agent=NAME`` or
        ``agents=A,B`` (taking turns), ``attempts=N``, ``repeat=N``, ``backend=``. A trial needs its agents'
        images built FROM its task's environment image."""
        from rules.backends import check_nodes
        from rules.tiers.swe.swerun import eval_swe_trial, swe_trial_uptodate
        from rules.trial import trial_folder

        attempts, repeat = _attempts(ctx), ctx.whole("repeat", 1)
        backend, cluster = ctx.backend()
        suite = ctx.suite
        files = {t: files_below(os.path.join(suite.tasks_dir, t)) for t in ctx.tasks} if ctx.agents else {}
        envs = {t: (read_json(suite.tasks_dir / t / "task.json") or {}).get("env") for t in ctx.tasks}
        settings = {"attempts": attempts, "grade_limits": repr(suite.prove)}
        done: set[str] = set()
        for key, plan in _plans(ctx, attempts).items():
            if isinstance(plan, str):
                yield Step(key, fails=plan, doc=f"run {key} (needs: {plan})")
                continue
            run, chosen = plan
            if run in done:
                continue
            done.add(run)
            spec = [(a.name, dict(a.values)) for a in chosen]
            deps = [str(ctx.stamp(a, a.run)) for a in chosen]
            services = [image for a in chosen for image in a.service_images()]
            folders = [trial_folder(t, k) for t in ctx.tasks for k in range(1, repeat + 1)]
            setup = []
            if backend != "local":  # every node holds every image of the run, or no trial starts
                setup = [f"eval:{run}:nodes"]
                yield Step(f"{run}:nodes", action=(check_nodes, [backend, cluster, _run_images(ctx, chosen)]),
                           task_dep=sorted({ctx.agent_image(a.name, envs[t]) for a in chosen for t in ctx.tasks}),
                           doc=f"check every node of the cluster for the images of run {run}")
            for task in ctx.tasks:
                builds = [ctx.agent_image(a.name, envs[task]) for a in chosen] + services
                for k in range(1, repeat + 1):
                    folder = trial_folder(task, k)
                    yield Step(f"{run}/{folder}",
                               action=(eval_swe_trial, [spec, task, folders, ctx.since, attempts, run, k, backend,
                                                        cluster, self.name]),
                               file_dep=files[task] + deps, task_dep=builds,
                               targets=[os.path.join(suite.runs_dir, run, folder, "result.json")],
                               settings=settings,
                               current=(swe_trial_uptodate, [spec, task, attempts, run, k, self.name]),
                               setup=setup,
                               doc=f"{self.name} trial of {' + '.join(a.label for a in chosen)} on {folder}")
            yield Step(run, task_dep=[f"eval:{run}/{f}" for f in folders],
                       doc=f"run {' + '.join(a.label for a in chosen)} over the {self.name} tier ({len(ctx.tasks)} "
                           f"tasks, {attempts} attempt(s))")
            if key not in (run, "agents"):
                yield Step(key, task_dep=[f"eval:{run}"], doc=f"run {key}")

    def report_run(self, ctx: EvalContext, agent: str) -> str:
        """``agent=NAME`` or ``agents=A,B`` (with ``attempts=N``): the run to make before the report."""
        key = "agents" if ctx.var("agents") else agent
        problem = ctx.problem or (ctx.agent_problem(agent) if key == agent else None)
        plan = problem or _plans(ctx, _attempts(ctx))[key]
        if isinstance(plan, str):
            raise ConfigError(plan)
        return plan[0]

    def regrade(self, agent: str) -> str:
        raise ConfigError(f"the {self.name} tier re-grades by itself: `doit run suite={self.name} agent=NAME` (or "
                          "agents=... attempts=N) grades the kept attempts again when only the held-out grading "
                          "changed")

    def agent_bases(self, suite: Suite, tasks: list[str]) -> dict[str, str]:
        """Each environment image the published ``tasks`` run in (env name → tag): agents are built FROM it, so
        they run the repository's own tests with ``{test_cmd}``."""
        from rules.tiers.swe.swerun import published_envs

        return published_envs(suite, tasks)


    def stale_judge(self, suite: Suite, agents: dict) -> Callable[..., bool]:
        """``rules.tiers.swe.swerun.stale``: the task, the agents' definitions, the attempts or the grading changed. A lab
        without ``rules.tiers.swe.swerun`` judges nothing stale."""
        try:
            from rules.tiers.swe.swerun import stale
        except ImportError:
            return lambda result, task_dir, agent, trial_dir: False
        return lambda result, task_dir, agent, trial_dir: bool(stale(result, task_dir, agents, tier=self.name))

    def prune(self, suite: Suite, dry: bool) -> str:
        """The environment images no published task needs, and the agent images built FROM them, that this home
        built (``rules.tiers.swe.prune``). Raises SandboxError when the engine refuses a removal."""
        from rules import images
        from rules.tiers.swe.prune import prune

        return prune(suite, images.stamps_dir(), self.env_stamp_prefix, dry=dry)


class SweTier(SweTrials):
    """The swe tier through the seam of rules/tier.py: one environment image per repository and version, trials
    of ``attempts=N`` fresh attempts across agents taking turns (retry until plausible), the resolved rate per
    repository."""

    name = TIER
    groups = swebench.GROUPS
    profile = PROFILE
    selection_vars = ("instances", "limit", "all")
    # pythons=DIR: interpreters (pyenv's layout) for Pythons Debian does not ship; subset=verified: the instances
    # also in SWE-bench Verified (gen and report), their ids read from verified=PATH or the installed package
    variables = ("pythons", "subset", "verified")
    env_stamp_prefix = STAMP_PREFIX

    def tasks(self, suite: Suite, var: Callable) -> Selection:
        from rules import images

        data = swebench.load_dataset(swebench.dataset_path(suite, var))
        subset = self.subset(suite, var)

        def in_subset(ids: list[str], named: bool) -> list[str]:
            name, members = subset
            outside = [i for i in ids if i not in members]
            if named and outside:
                raise Rejected(f"instances=: not in subset={name}: {', '.join(outside[:5])}; leave them out, or drop "
                               "subset=")
            return [i for i in ids if i in members]

        ids = swebench.select(data, suite, var, in_subset if subset is not None else None)
        repos = var("repos") or suite.table.get("repos") or None
        templates = tuple(str(p) for p in sorted((TEMPLATES / "swe").glob("*.j2")))
        envs = swebench.environments(suite)
        pythons = Path(var("pythons") or suite.table.get("pythons") or swebench.default_pythons())
        specs = []
        for iid in ids:
            inst = data[iid]
            env = swebench.env_for(inst.repo, inst.version, envs, inst.id)
            env = swebench.with_interpreter(env, pythons) if env else None
            specs.append(TaskSpec(
                name=iid, groups={"repo": inst.repo},
                deps=templates, settings={"format": TASK_FORMAT, "instance": inst.digest,
                                          "env": env.digest() if env else None, "repos": repos},
                image=env.tag if env else "",
                image_stamp=images.stamp_path(env.stamp_name) if env else None,
                source=(inst, env, repos, float(suite.prove.timeout))))
        settings = {"dataset": str(swebench.dataset_path(suite, var)), "instances": ids, "repos": repos,
                    **({"subset": subset[0]} if subset else {})}
        return Selection(list(data), specs, settings, labels={i: {"repo": inst.repo} for i, inst in data.items()})

    def subset(self, suite: Suite, var: Callable) -> tuple[str, frozenset[str]] | None:
        """``subset=verified``: ("verified", the instance ids of SWE-bench Verified), read from ``verified=PATH``
        (or suite.toml's ``verified``) or the installed package (``rules.tiers.swe.subsets``); None without
        ``subset=``. Raises Rejected (one line: what was looked at, the fix)."""
        from rules.tiers.swe.subsets import subset_ids

        name = var("subset") or suite.table.get("subset") or None
        ids = subset_ids(name, var("verified") or suite.table.get("verified") or None)
        return None if ids is None else (name, ids)

    def render(self, suite: Suite, spec: TaskSpec):
        inst, env, repos, timeout = spec.source
        return swebench.render(inst, env, repos, test_timeout=int(timeout))

    def images(self, suite: Suite, specs: list[TaskSpec]) -> list[ImageSpec]:
        from rules import images

        out, seen = [], set()
        for spec in specs:
            inst, env, repos, _ = spec.source
            if env is None or env.name in seen:
                continue
            seen.add(env.name)
            out.append(ImageSpec(
                name=env.name, tag=env.tag, stamp=images.stamp_path(env.stamp_name),
                deps=(str(TEMPLATES / "swe" / "env.Dockerfile.j2"),), settings={"env": env.digest()},
                build=lambda env=env, inst=inst, repos=repos: swebench.build_env(env, swebench.repo_dir(inst.repo, repos),
                                                                        env.setup_commit or inst.setup_commit)))
        return out

    def prove(self, build: Path, image: str, limits: Limits) -> dict:
        from rules import images

        # the environment image's stamp: which build of it the proof ran in (part of the proof's inputs)
        ours = image.startswith(swebench.IMAGE_PREFIX + ":")
        stamp = images.stamp_path(f"{self.env_stamp_prefix}{image.split(':', 1)[1]}") if ours else None
        return swebench.prove_staged(build, image=image, limits=limits, stamp=stamp)

    def evaluate(self, predictions: str | None, dataset: str | None) -> str:
        """``doit evaluate predictions=FILE|gold|empty``: grade SWE-bench predictions with the held-out tests of
        the published tasks; writes evals/swe/evaluations/<name>/ and returns the summary. Raises Rejected or
        ConfigError with the one line."""
        from rules.config import load_suite

        if not predictions:
            raise ConfigError("give predictions=FILE (SWE-bench JSONL: instance_id, model_name_or_path, "
                              "model_patch), or predictions=gold / predictions=empty")
        suite = load_suite(self.name)
        if not swebench.published(suite):
            raise ConfigError(f"no published swe tasks in {suite.dir}: run `doit gen:swe` first (the held-out tests "
                              "grade only published tasks)")
        path = Path(predictions)
        if predictions in swebench.PSEUDO and not path.exists():
            path = swebench.pseudo_predictions(suite, predictions,
                                               swebench.dataset_path(suite, lambda n, d=None: dataset or d))
        return swebench.results_summary(swebench.evaluate(suite, path))

    def suspicions(self, meta: dict) -> tuple:
        """The table for Python patches (``rules.tiers.swe.suspicions``): every swe task is a patch to Python."""
        from rules.tiers.swe.suspicions import PYTHON

        return PYTHON



def _attempts(ctx: EvalContext) -> int:
    """``attempts=N`` (default 1); and ``tries=`` other than 1 stops the command: a swe attempt never gets a
    second try fed with test output, which would come from the held-out tests."""
    raw = ctx.var("tries")
    if raw not in (None, "1"):
        raise SystemExit(f"tries={raw}: a trial on SWE-bench instances makes one try per attempt (the held-out "
                         "tests' output is never shown to an agent); retry from a fresh work tree with attempts=N")
    return ctx.whole("attempts", 1)


def _plans(ctx: EvalContext, attempts: int) -> dict:
    """The swe runs this command can make: agent name → (run id, [agent]) for each agent, and ``"agents"`` →
    (run id, [agents]) for ``agents=a,b`` (they take turns); a run that cannot be made maps to its one-line
    reason."""
    from rules.tiers.swe.swerun import run_of

    plans: dict = {}
    for name, found in ctx.runs.items():
        if isinstance(found, str):
            plans[name] = found
        else:
            plans[name] = (found[1] if attempts == 1 else run_of([found[0]], attempts)[0], [found[0]])
    asked = ctx.var("agents")
    if asked:
        plans["agents"] = _turns(ctx, asked, attempts)
    return plans


def _turns(ctx: EvalContext, asked: str, attempts: int):
    """The plan of ``agents=asked``: (run id, [agents]) or the one-line reason it cannot be made."""
    from rules.tiers.swe.swerun import run_of

    names = [n.strip() for n in asked.split(",") if n.strip()]
    if not names:
        return "agents=: give the agents that take turns, e.g. agents=aider-a,aider-b"
    problems = [p for p in (ctx.agent_problem(n, settings=False) for n in names) if p]
    if not problems:  # a setting is fine when one of the agents taking turns declares it
        problems = [p for p in [ctx.settings_unused(names)] if p]
    if problems:
        return f"agents={asked}: {problems[0]}"
    chosen = [ctx.runs[n][0] for n in names]
    return (run_of(chosen, attempts)[0], chosen)


def _run_images(ctx: EvalContext, chosen: list) -> list[str]:
    """The image tags the trials of a run of the ``chosen`` agents need on the node that runs them: each
    published task's environment image (task.json ``image``: it grades and runs the pre-existing tests) and
    each agent's image built FROM it."""
    envs = sorted({image for t in ctx.tasks
                   if isinstance(image := (read_json(ctx.suite.tasks_dir / t / "task.json") or {}).get("image"), str)})
    return envs + [a.tag(image) for image in envs for a in chosen]
