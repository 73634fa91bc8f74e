"""The doit task creators: the only module that imports doit.

Each creator is short and reads like a table of what invalidates what; the work happens in plain functions
elsewhere (rules.aider, rules.prove, rules.trial, rules.report) that know nothing of doit. Command-line
variables (``agent=``, ``langs=``, ``limit=``, ``all=``, ``upstream=``, ``ref=``, ``jobs=``, ``strict=``,
``tries=``) are read here with ``doit.get_var`` and passed to actions as arguments.
"""
from __future__ import annotations

import os
from pathlib import Path

from doit import get_var

from rules.config import STATE

STATE.mkdir(parents=True, exist_ok=True)

DOIT_CONFIG = {
    "backend": "sqlite3",
    "dep_file": str(STATE / "doit.sqlite3"),
    "check_file_uptodate": "md5",
    "default_tasks": ["report"],
    "verbosity": 2,
    # jobs=N runs N tasks (proofs, trials) at once; threads suffice, the work happens in containers
    "num_process": int(get_var("jobs", os.cpu_count() or 1)),
    "par_type": "thread",
}

# ---- pull, image, gen, prove, scenarios (the tier) ----

from doit import create_after, get_var  # noqa: E402
from doit.exceptions import TaskFailed  # noqa: E402
from doit.tools import config_changed  # noqa: E402

from rules.config import Suite, load_suite  # noqa: E402
from rules.files import files_below, read_json, write_json  # noqa: E402
from rules.swebench import SweTier  # noqa: E402
from rules.tier import AiderTier  # noqa: E402

TIERS = {"aider": AiderTier(), "swe": SweTier()}  # tier name → its seam (rules/tier.py)
GENERATOR_VERSION = 1  # bump to re-render every task after a change the templates do not show


def _flag(name: str) -> bool:
    return str(get_var(name, "0")).lower() in ("1", "true", "yes", "on")


def _upstream_settings(suite: Suite) -> tuple[str, str]:
    """The upstream URL and ref in force: ``upstream=``/``ref=`` on the command line, else the ones the
    last successful pull used (``.lab/upstream/<tier>.json``), else suite.toml's."""
    saved = read_json(STATE / "upstream" / f"{suite.name}.json") or {}
    url_var, ref_var = get_var("upstream"), get_var("ref")
    if url_var or ref_var:
        url = url_var or saved.get("upstream") or suite.upstream
        ref = ref_var or (saved.get("ref") if not url_var else None) or suite.ref
        return url, ref
    return saved.get("upstream") or suite.upstream, saved.get("ref") or suite.ref


def _pull(tier: str, url: str, ref: str):
    from rules.upstream import UpstreamError, checkout

    suite = load_suite(tier)
    try:
        commit = checkout(url, ref, suite.checkout_dir, settings=str(suite.dir / "suite.toml"))
    except UpstreamError as exc:
        return TaskFailed(str(exc))
    # remembered only once it worked, for later commands without upstream=/ref=
    write_json(STATE / "upstream" / f"{tier}.json", {"upstream": url, "ref": ref}, only_if_changed=True)
    print(f"{tier}: {url} at {commit}")
    return None


def task_pull():
    """Clone or fetch each tier's upstream and check out its pinned ref (upstream=, ref= override)."""
    from rules.config import ConfigError
    from rules.upstream import is_current

    for tier in TIERS:
        try:
            suite = load_suite(tier)
        except ConfigError:
            continue  # a lab home without this tier; `doit gen:<tier>` says what is missing
        if not suite.upstream:
            continue  # a tier without one upstream checkout (the swe tier reads a dataset and many repositories)
        url, ref = _upstream_settings(suite)
        yield {
            "name": tier,
            "actions": [(_pull, [tier, url, ref])],
            "uptodate": [lambda d=suite.checkout_dir, u=url, r=ref: is_current(d, u, r)],
            "doc": f"check out the {tier} tier's upstream",
        }


def _build_grader(base_image: str) -> None:
    from rules import images

    stamp = images.build_grader(base_image)
    print(f"grader image {stamp['image']} {stamp['id'][:19]}: {stamp['toolchains']}")


def task_image():
    """Build the images: ``image:grader`` (all toolchains, offline grading)."""
    from rules import images

    suite = load_suite("aider")
    yield {
        "name": "grader",
        "actions": [(_build_grader, [suite.base_image])],
        "file_dep": images.grader_templates(),
        "targets": [images.stamp_path("grader")],
        "uptodate": [config_changed({"base_image": suite.base_image, "tag": images.GRADER}),
                     lambda: images.stamp_current("grader")],
        "doc": "build the grader image",
    }


def _render(tier: str, spec) -> None:
    from rules.build import stage
    from rules.tier import Rejected

    suite = load_suite(tier)
    try:
        r = TIERS[tier].render(suite, spec)
        stage(suite.build_dir / spec.name, r.task_files, r.answer_files, None, r.meta)
    except Rejected as exc:
        stage(suite.build_dir / spec.name, None, None, str(exc), {"task": spec.name, **spec.groups})


_progress: dict = {}  # tier → Progress of this run's proofs


def _prove(tier: str, task: str, image: str, limits) -> None:
    record = TIERS[tier].prove(load_suite(tier).build_dir / task, image, limits)
    if tier in _progress:
        _progress[tier].done(record)


def _not_environmental(proof: str) -> bool:
    """False when the last proof was rejected for the machine's sake (a timeout or out of memory): such a
    rejection is never kept, the next gen proves the task again."""
    record = read_json(Path(proof)) or {}
    return not record.get("environmental")


def _publish(tier: str, tasks: list[str], strict: bool, selection: dict) -> None:
    from rules.build import publish, summary

    print(summary(publish(load_suite(tier), tasks, strict=strict, selection=selection)))


def _build_env(build) -> None:
    from rules.sandbox import SandboxError
    from rules.upstream import UpstreamError

    try:
        stamp = build()
    except (SandboxError, UpstreamError) as exc:
        return TaskFailed(str(exc))
    print(f"environment image {stamp['image']} {stamp['id'][:19]}")
    return None


def _tier_failed(message: str):
    return TaskFailed(message)


def _stale(render: Path, proof: Path, stamp: Path) -> bool:
    try:
        return proof.stat().st_mtime < max(render.stat().st_mtime, stamp.stat().st_mtime if stamp.exists() else 0)
    except FileNotFoundError:
        return True


@create_after(executed="pull", creates=["gen", "prove", "env"])
def task_gen():
    """Render and prove a tier's tasks: ``doit gen:aider`` (a sample), ``langs=go,python``, ``limit=N``,
    ``all=1``, ``strict=1`` (leave free tasks out); ``doit gen:swe`` (``dataset=``, ``repos=``,
    ``instances=``, ``limit=``, ``all=1``). Each tier says which tasks exist and which image each one runs in
    (rules/tier.py); environment images a tier builds are ``env:<tier>/<name>`` tasks."""
    from rules.build import Progress
    from rules.config import EVALS, ConfigError
    from rules.tier import Rejected

    for tier, module in TIERS.items():
        if not (EVALS / tier / "suite.toml").is_file():
            continue  # a lab home without this tier
        try:
            suite = load_suite(tier)
            selection = module.tasks(suite, get_var)
            envs = module.images(suite, selection.chosen)
        except (ConfigError, Rejected) as exc:
            yield {"basename": "gen", "name": tier, "actions": [(_tier_failed, [f"{tier}: {exc}"])],
                   "uptodate": [False], "doc": f"render, prove and publish the {tier} tier"}
            continue
        for env in envs:
            yield {
                "basename": "env", "name": f"{tier}/{env.name}",
                "actions": [(_build_env, [env.build])],
                "file_dep": list(env.deps),
                "targets": [env.stamp],
                "uptodate": [config_changed({"tag": env.tag, **env.settings}),
                             lambda s=env.stamp: _image_current(s)],
                "doc": f"build the {env.name} environment image",
            }
        proofs = []
        stale = 0
        for spec in selection.chosen:
            build = suite.build_dir / spec.name
            render, proof = build / "render.json", build / "proof.json"
            yield {
                "basename": "gen", "name": f"{tier}/{spec.name}",
                "actions": [(_render, [tier, spec])],
                "file_dep": list(spec.deps),
                "targets": [render],
                "uptodate": [config_changed({"generator": GENERATOR_VERSION, **spec.settings})],
                "doc": f"render {spec.name}",
            }
            yield {
                "basename": "prove", "name": f"{tier}/{spec.name}",
                "actions": [(_prove, [tier, spec.name, spec.image, suite.prove])],
                "file_dep": [render] + ([spec.image_stamp] if spec.image_stamp else []),
                "targets": [proof],
                "uptodate": [config_changed({"limits": repr(suite.prove), "image": spec.image}),
                             (_not_environmental, [str(proof)])],
                "doc": f"prove {spec.name}",
            }
            proofs.append(proof)
            stale += _stale(render, proof, spec.image_stamp or render)
        _progress[tier] = Progress(stale)
        strict = _flag("strict")
        yield {
            "basename": "gen", "name": tier,
            "actions": [(_publish, [tier, selection.every, strict, selection.settings])],
            "file_dep": proofs,
            "task_dep": [f"prove:{tier}/{spec.name}" for spec in selection.chosen],
            "targets": [suite.manifest_path],
            "uptodate": [config_changed({"strict": strict, "tasks": selection.every, "selection": selection.settings})],
            "doc": f"render, prove and publish the {tier} tier",
        }


def _image_current(stamp: Path) -> bool:
    from rules import images

    return images.stamp_current(stamp.stem)


def _evaluate(predictions: str | None, dataset: str | None) -> None:
    from rules import swebench
    from rules.tier import Rejected

    if not predictions:
        return TaskFailed("give predictions=FILE (SWE-bench JSONL: instance_id, model_name_or_path, model_patch), "
                          "or predictions=gold / predictions=empty")
    suite = load_suite("swe")
    try:
        path = Path(predictions)
        if predictions in swebench.PSEUDO and not path.exists():
            path = swebench.pseudo_predictions(suite, predictions,
                                               swebench.dataset_path(suite, lambda n, d=None: dataset or d))
        results = swebench.evaluate(suite, path)
    except Rejected as exc:
        return TaskFailed(str(exc))
    print(swebench.results_summary(results))
    return None


def task_evaluate():
    """Grade a predictions file with the swe tier's held-out tests: ``doit evaluate predictions=FILE`` (or
    ``predictions=gold`` / ``predictions=empty``); writes evals/swe/evaluations/<name>/ (logs, results.json)."""
    return {"actions": [(_evaluate, [get_var("predictions"), get_var("dataset")])], "uptodate": [False],
            "verbosity": 2}


def _scenarios(tier: str) -> None:
    suite = load_suite(tier)
    manifest = read_json(suite.manifest_path)
    if not manifest:
        raise SystemExit(f"{suite.manifest_path} does not exist yet: run `doit gen:{tier}` first")
    rows = [e for e in manifest["tasks"] if e.get("published")]
    print(f"{'task':40} {'language':11} {'exercise':28} {'tests':>5}  status")
    for e in rows:
        print(f"{e['task']:40} {e['language']:11} {e['exercise']:28} {e.get('tests', 0):>5}  {e['status']}")
    print(f"{len(rows)} tasks ({sum(e['status'] == 'free' for e in rows)} free)")


def task_scenarios():
    """List a tier's published tasks with language, exercise, test count and status (``suite=aider``)."""
    tier = get_var("suite", "aider")
    return {"actions": [(_scenarios, [tier])], "verbosity": 2, "uptodate": [False]}


# ---- run and report (agents, trials, report) ----

import time  # noqa: E402


from rules.config import ConfigError  # noqa: E402

TRIES = 2  # the polyglot benchmark's pass@2: a second try after a failed one, with the test output


def _agents() -> tuple[dict, str | None]:
    """The agents of evals/agents.toml and None, or no agents and the error that stops loading them."""
    from rules.agents import load_agents

    try:
        return load_agents(), None
    except ConfigError as exc:
        return {}, str(exc)


def _agent_problem(name: str, agents: dict, problem: str | None) -> str | None:
    """Why ``agent=name`` cannot run here (a broken agents.toml, an unknown agent, a missing variable)."""
    if problem:
        return problem
    if name not in agents:
        return f"unknown agent {name!r}; agents defined in evals/agents.toml: {', '.join(sorted(agents))}"
    try:
        agents[name].environment()
    except ConfigError as exc:
        return str(exc)
    return None


def _published(tier: str) -> list[str]:
    """The names of the tier's published tasks (manifest status kept or free, task folder present)."""
    suite = load_suite(tier)
    manifest = read_json(suite.manifest_path) or {}
    base = str(suite.tasks_dir)
    return [t["task"] for t in manifest.get("tasks", [])
            if t.get("status") in ("kept", "free") and os.path.isfile(os.path.join(base, t["task"], "task.json"))]


def _definition_stamp(agent) -> Path:
    """Write the agent's definition to ``.lab/agents/<name>.json`` when it changed; return the path (the
    file_dep that redoes an agent's trials exactly when its definition changes)."""
    path = STATE / "agents" / f"{agent.name}.json"
    write_json(path, agent.definition(), only_if_changed=True)
    return path


def _build_agent(name: str) -> None:
    from rules import images
    from rules.agents import get_agent

    try:
        stamp = images.build_agent(get_agent(name))
    except ConfigError as exc:
        return TaskFailed(str(exc))
    print(f"agent image {stamp['image']} {stamp['id'][:19]}")
    return None


def task_agent_image():
    """Build each agent's image FROM the grader image: ``agent_image:<agent>``."""
    from rules import images

    agents, _ = _agents()
    for name, agent in agents.items():
        try:
            template = [agent.template_path()]
        except ConfigError:
            template = []  # the build action reports the missing template
        yield {
            "name": name,
            "actions": [(_build_agent, [name])],
            "file_dep": template + [images.stamp_path("grader")],
            "targets": [images.stamp_path(agent.stamp_name)],
            "uptodate": [config_changed({"image": agent.image, "build": dict(agent.build), "tag": agent.tag(images.GRADER)}),
                         lambda s=agent.stamp_name: images.stamp_current(s)],
            "doc": f"build the {name} agent's image",
        }


def _trial(tier: str, agent: str, task: str, tasks: list[str], since: float, tries: int):
    from rules.trial import eval_trial

    try:
        eval_trial(tier, agent, task, tasks, since, tries)
    except ConfigError as exc:
        return TaskFailed(str(exc))
    return None


def _finished(result_path: str) -> bool:
    from rules.trial import FINISHED

    result = read_json(Path(result_path))
    return isinstance(result, dict) and result.get("status") in FINISHED


def task_eval():
    """Run an agent over a tier's published tasks: ``eval:<agent>`` (every trial), ``eval:<agent>/<task>``
    (one); ``tries=N`` (default 2). A trial whose result is an ``error`` runs again next time."""
    from rules import images

    tier = get_var("suite", "aider")
    suite = load_suite(tier)
    agents, _ = _agents()
    tasks = _published(tier)
    tries = int(get_var("tries", TRIES))
    since = time.time()
    files = {t: files_below(os.path.join(suite.tasks_dir, t)) for t in tasks} if agents else {}
    settings = config_changed({"tries": tries, "grade_limits": repr(suite.prove), "grader": images.GRADER})
    runs = str(suite.runs_dir)
    for name, agent in agents.items():
        deps = [str(_definition_stamp(agent)), str(images.stamp_path(agent.stamp_name))]
        for task in tasks:
            result = os.path.join(runs, name, task, "result.json")
            yield {
                "name": f"{name}/{task}",
                "actions": [(_trial, [tier, name, task, tasks, since, tries])],
                "file_dep": files[task] + deps,
                "targets": [result],
                "uptodate": [settings, (_finished, [result])],
                "doc": f"trial of {name} on {task}",
            }
        yield {
            "name": name,
            "actions": None,
            "task_dep": [f"eval:{name}/{task}" for task in tasks],
            "doc": f"run {name} over the {tier} tier ({len(tasks)} tasks)",
        }


def _report(tier: str) -> None:
    from rules.report import write_report

    write_report(tier)


def _fail(message: str):
    return TaskFailed(message)


def task_report():
    """The comparison table of every agent with results; ``agent=NAME`` first runs that agent's trials (so
    ``doit run agent=NAME`` runs, then reports)."""
    tier = get_var("suite", "aider")
    agent = get_var("agent")
    task = {"actions": [(_report, [tier])], "uptodate": [False], "verbosity": 2,
            "doc": "write evals/<tier>/report.{md,json,html} (agent=NAME runs that agent first)"}
    if agent:
        agents, problem = _agents()
        problem = _agent_problem(agent, agents, problem)
        if problem:
            task["actions"] = [(_fail, [problem])]
        else:
            task["task_dep"] = [f"eval:{agent}"]
    return task
