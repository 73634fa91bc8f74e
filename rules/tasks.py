"""The doit task creators: importing this module does nothing; each creator yields task dicts.

Each creator is short and reads like a table of what invalidates what; the work happens in plain functions
elsewhere (rules.tiers.aider.exercises, rules.prove, rules.trial, rules.report) that know nothing of doit. Command-line
variables (``agent=``, ``langs=``, ``limit=``, ``all=``, ``upstream=``, ``ref=``, ``jobs=``, ``strict=``,
``tries=``, ``repeat=``, ``suite=``, ``backend=``, ``cluster=``, and the agents' settings such as ``model=``)
are read here with ``doit.get_var`` and passed to actions as arguments. Before any creator runs, lab's loader
(rules/loader.py) has handed the command to ``rules.cli``: an unknown ``name=value`` has stopped it, and the
task names it asks for are ``rules.cli.asked``'s.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from doit import create_after, get_var
from doit.exceptions import TaskFailed
from doit.tools import config_changed

from rules import cli
from rules.cli import agent_problem as _agent_problem
from rules.cli import asked as _asked
from rules.cli import repeats_left_out as _repeats_left_out
from rules.cli import settings_given as _settings_given
from rules.cli import settings_unused as _settings_unused
from rules.cli import unknown_eval as _unknown_eval
from rules.cli import whole as _whole
from rules.config import ROOT, STATE, ConfigError, Suite, lab_settings, load_suite
from rules.files import read_json, write_json
from rules.loader import Refused, Reporter
from rules.tier import Rejected, flag
from rules import tiers


def _suite_var() -> str:
    """``suite=``: the tier a command is about (default: the first tier of this home, ``rules.tiers.present``);
    an unknown one stops the command with one line naming the tiers there are."""
    tier = get_var("suite") or (tiers.present() or tiers.names())[0]
    try:
        load_suite(tier)
        tiers.get(tier)
    except ConfigError as exc:
        raise SystemExit(f"suite={tier}: {exc}") from None
    return tier


# doit's settings; lab's loader (rules/loader.py) adds num_process from jobs=N (tasks run at once)
DOIT_CONFIG = {
    "backend": "sqlite3",
    "dep_file": str(STATE / "doit.sqlite3"),
    "check_file_uptodate": "md5",
    "default_tasks": ["report"],
    "verbosity": 2,
    "reporter": Reporter,  # no line for up-to-date tasks; a refusal is its one line
    "par_type": "thread",  # threads suffice: the work happens in containers
}

# ---- pull, image, gen, prove, scenarios (the tier) ----

TIER_STEPS = ("pull", "image", "gen", "prove", "env", "batch", "publish", "prune")  # the basenames of a tier's tasks


def _jobs() -> int:
    """``jobs=N``: how many tasks run at once (rules.cli.jobs)."""
    return cli.jobs(get_var("jobs"))


def _tier_steps_only() -> bool:
    """True when the command runs only tier steps (``doit gen:aider``): the creators of agents, trials and
    reports then make no tasks (their reading of agents.toml, every task's files and the runs is not needed)."""
    return cli.tier_steps_only(TIER_STEPS)


GENERATOR_VERSION = 1  # bump to re-render every task after a change the templates do not show


def _flag(name: str) -> bool:
    """``name=1`` on the command line (``rules.tier.flag``)."""
    return flag(get_var, name)


def _upstream_settings(suite: Suite) -> tuple[str, str]:
    """The upstream URL and ref in force: ``upstream=``/``ref=`` on the command line, else the ones the
    last successful pull used (``.lab/upstream/<tier>.json``), else suite.toml's."""
    saved = read_json(STATE / "upstream" / f"{suite.name}.json") or {}
    url_var, ref_var = get_var("upstream"), get_var("ref")
    if url_var or ref_var:
        url = url_var or saved.get("upstream") or suite.upstream
        # a new upstream starts from suite.toml's ref; the same one given again keeps the remembered ref
        keep = not url_var or _same_upstream(url_var, saved.get("upstream"))
        ref = ref_var or (saved.get("ref") if keep else None) or suite.ref
        return url, ref
    return saved.get("upstream") or suite.upstream, saved.get("ref") or suite.ref


def _same_upstream(a: str | None, b: str | None) -> bool:
    """Whether two ``upstream=`` values name the same repository (a local path however written; a URL with or
    without a trailing ``/`` or ``.git``)."""
    def norm(u: str) -> str:
        if Path(u).exists():
            return str(Path(u).resolve())
        return u.rstrip("/").removesuffix(".git")

    return bool(a and b) and norm(a) == norm(b)


def _pull(tier: str, url: str, ref: str):
    from rules.upstream import UpstreamError, checkout

    suite = load_suite(tier)
    notes: list[str] = []
    try:
        commit = checkout(url, ref, suite.checkout_dir, settings=str(suite.dir / "suite.toml"), notes=notes)
    except UpstreamError as exc:
        return Refused(f"pull:{tier}: {exc}; nothing was pulled")
    for note in notes:  # offline: the last fetched commit of a branch or tag, said in one line
        print(f"{tier}: {note}", file=sys.stderr)
    problem = tiers.get(tier).upstream_problem(suite, suite.checkout_dir)
    if problem:  # not remembered: the next command without upstream= goes back to the one that worked
        return Refused(f"pull:{tier}: {problem}; it is not remembered for later commands")
    # remembered only once it worked, for later commands without upstream=/ref=
    write_json(STATE / "upstream" / f"{tier}.json", {"upstream": url, "ref": ref}, only_if_changed=True)
    print(f"{tier}: {url} at {commit}")
    return None


def task_pull():
    """Clone or fetch each tier's upstream and check out its pinned ref (upstream=, ref= override)."""
    from rules.config import ConfigError
    from rules.upstream import is_current

    asked = {a.split("/", 1)[0] for a in _asked("gen") + _asked("prove")}
    for tier in tiers.present():
        if asked and tier not in asked:
            continue  # `doit gen:<tier>` never waits on (or fails for) another tier's upstream
        try:
            suite = load_suite(tier)
        except ConfigError:
            continue  # a lab home without this tier; `doit gen:<tier>` says what is missing
        if not suite.upstream:
            continue  # a tier without one upstream checkout (one that reads a dataset and many repositories)
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

    base_image = lab_settings().base_image
    yield {
        "name": "grader",
        "actions": [(_build_grader, [base_image])],
        "file_dep": images.grader_templates(),
        "targets": [images.stamp_path("grader")],
        "uptodate": [config_changed({"base_image": base_image, "tag": images.GRADER}),
                     lambda: images.stamp_current("grader")],
        "doc": "build the grader image",
    }


def _render(tier: str, spec):
    from rules.build import stage
    from rules.tier import Rejected, Unavailable

    suite = load_suite(tier)
    try:
        r = tiers.get(tier).render(suite, spec)
        _check_report_format(r.meta)
        stage(suite.build_dir / spec.name, r.task_files, r.answer_files, None, r.meta)
    except Rejected as exc:
        stage(suite.build_dir / spec.name, None, None, str(exc), {"task": spec.name, **spec.groups})
    except Unavailable as exc:  # nothing recorded: the next command tries again (e.g. with repos=DIR)
        return Refused(f"{spec.name}: {exc}")
    return None


def _check_report_format(meta: dict) -> None:
    """Raise Rejected when a rendered task's ``report`` (task.json) is a format no reader of ``rules.reports``
    reads: every grading of it would find no tests and say "reference ran no tests"."""
    from rules.reports import PARSERS
    from rules.tier import Rejected

    fmt = meta.get("report")
    if fmt is not None and fmt not in PARSERS:
        raise Rejected(f"task.json's report {fmt!r} is a format lab does not read (it reads {', '.join(PARSERS)}; "
                       "a reader of another is a parser in rules/reports.py)")


def _prove(tier: str, task: str, image: str, limits, progress) -> None:
    progress.begin()
    progress.done(tiers.get(tier).prove(load_suite(tier).build_dir / task, image, limits))


def _prove_batch(tier: str, tasks: list[str], image: str, limits, progress, reprove: bool = False) -> None:
    progress.begin()
    build = load_suite(tier).build_dir
    # a rejection for the machine's sake stands (``_proof_stands``): the batch must not prove it again either
    tasks = [t for t in tasks if reprove or _proof_stands(str(build / t / "proof.json"), True)]
    tiers.get(tier).prove_batch([build / t for t in tasks], image, limits)


def _batch_current(members: list[tuple[Path, Path, Path]]) -> bool:
    """True (nothing to batch) when fewer than two of the batch's tasks have a proof older than their render or
    image stamp (stat only: the batch itself checks each proof's inputs exactly)."""
    return sum(_stale(render, proof, stamp) for render, proof, stamp in members) < 2


def _proof_stands(proof: str, reprove: bool = False) -> bool:
    """Whether the last proof stands (the prove task's own check; doit's ``file_dep`` and ``config_changed``
    cover its inputs and limits): False for a damaged proof.json (not a JSON object), which is proven again
    rather than read, and, with ``reprove`` (``reprove=1``), for one rejected for the machine's sake (a timeout
    or out of memory). Without it such a rejection stands until its inputs or limits change: proving a
    reference that hangs again on every gen costs twice the proof timeout each time."""
    try:
        record = read_json(Path(proof), {})
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(record, dict) and not (reprove and record.get("environmental"))


def _publish(tier: str, tasks: list[str], strict: bool, selection: dict, labels: dict | None = None) -> None:
    from rules.build import publish

    publish(load_suite(tier), tasks, strict=strict, selection=selection, group_keys=tiers.get(tier).groups,
            labels=labels)


def _prune(tier: str, dry: bool, named: bool):
    """``prune:<tier>``'s action; a tier without images of its own fails the command only when ``named``
    (``doit prune:aider``), and is one line of a bare ``doit prune``."""
    from rules.sandbox import SandboxError

    try:
        print(tiers.get(tier).prune(load_suite(tier), dry))
    except ConfigError as exc:
        if named:
            return Refused(f"prune:{tier}: {exc}")
        print(f"prune:{tier}: {exc}")
    except SandboxError as exc:
        return Refused(f"prune:{tier}: {exc}")
    return None


def task_prune():
    """Remove the images a tier built that no published task needs (prune:<tier>; dry=1 lists them)."""
    asked = set(_asked("prune"))
    for tier in tiers.present():
        if asked and tier not in asked:
            continue
        yield {"name": tier, "actions": [(_prune, [tier, _flag("dry"), tier in asked])], "uptodate": [False],
               "verbosity": 2, "doc": f"remove the {tier} tier's images no published task needs (dry=1: list them)"}


def _summary(tier: str) -> None:
    from rules.build import summary

    print(summary(read_json(load_suite(tier).manifest_path), tiers.get(tier).selection_vars))


def _build_env(build) -> None:
    from rules.sandbox import SandboxError
    from rules.upstream import UpstreamError

    try:
        stamp = build()
    except (SandboxError, UpstreamError) as exc:
        return Refused(str(exc))
    print(f"environment image {stamp['image']} {stamp['id'][:19]}")
    return None


def _tier_failed(message: str):
    return Refused(message)  # its line alone: the tier's problem and its fix


def _stale(render: Path, proof: Path, stamp: Path) -> bool:
    try:
        return proof.stat().st_mtime < max(render.stat().st_mtime, stamp.stat().st_mtime if stamp.exists() else 0)
    except FileNotFoundError:
        return True


@create_after(executed="pull", creates=["gen", "prove", "env", "batch", "publish"])
def task_gen():
    """Render, prove and publish a tier's tasks (gen:<tier>; env:, batch:, prove: are its steps).

    ``doit gen:<tier>`` with the tier's own variables (README.md: ``langs=``, ``instances=``, ``limit=N``,
    ``all=1``, ...) and ``strict=1`` (leave free tasks out). Each tier says which tasks exist and which image
    each one runs in (rules/tier.py); environment images a tier builds are ``env:<tier>/<name>`` tasks. A
    command that names some tiers' steps (``gen:<tier>``) reads only those tiers' variables (one tier's
    ``limit=`` is not another's)."""
    asked = {a.split("/", 1)[0] for b in ("gen", "prove", "env", "batch", "publish") for a in _asked(b)}
    for tier in tiers.present():
        if not asked or tier in asked:
            yield from _gen_tasks(tier)
    for name in sorted(asked - set(tiers.present())):  # a tier this home has no folder for: say so, never nothing
        yield {"basename": "gen", "name": name, "actions": [(_tier_failed, [_no_tier(name)])], "uptodate": [False],
               "doc": f"render, prove and publish the {name} tier"}


def _no_tier(name: str) -> str:
    """The one line for ``gen:<name>`` in a home without ``evals/<name>/suite.toml``."""
    from rules.config import no_tier

    return f"{name}: {no_tier(name)}; nothing was done"


def _gen_tasks(tier: str):
    """The doit tasks of ``doit gen:<tier>``: its environment images, batch proofs, each chosen task's render
    and proof, the publish and the summary; one failing ``gen:<tier>`` when the tier cannot say its tasks."""
    from rules.build import Progress
    from rules.config import ConfigError
    from rules.tier import Rejected

    try:
        module = tiers.get(tier)
        suite = load_suite(tier)
        selection = module.tasks(suite, get_var)
        envs = module.images(suite, selection.chosen)
    except (ConfigError, Rejected) as exc:
        yield {"basename": "gen", "name": tier, "actions": [(_tier_failed, [f"{tier}: {exc}"])],
               "uptodate": [False], "doc": f"render, prove and publish the {tier} tier"}
        return
    yield from (_env_task(tier, env) for env in envs)
    # of this command's proofs of the tier: at most one per chosen task; the total known up front is set below
    progress = Progress(most=len(selection.chosen))
    batch_of, specs = {}, {spec.name: spec for spec in selection.chosen}
    for name, members in module.batches(suite, selection.chosen, _jobs()).items():
        batch_of.update({m: f"batch:{tier}/{name}" for m in members})
        yield _batch_task(tier, suite, name, [specs[m] for m in members], progress)
    proofs = []
    for spec in selection.chosen:
        yield from _task_tasks(tier, suite, spec, progress, batch_of.get(spec.name))
        proofs.append(suite.build_dir / spec.name / "proof.json")
    yield _publish_task(tier, suite, selection, proofs)
    # the summary, also after a gen with nothing to do; its line is the summary alone (rules.loader.Reporter)
    yield {"basename": "gen", "name": tier, "actions": [(_summary, [tier])], "task_dep": [f"publish:{tier}"],
           "uptodate": [False], "meta": {"quiet": True}, "doc": f"render, prove and publish the {tier} tier"}


def _env_task(tier: str, env) -> dict:
    """``env:<tier>/<name>``: build one environment image the tier names (a ``rules.tier.ImageSpec``)."""
    return {
        "basename": "env", "name": f"{tier}/{env.name}",
        "actions": [(_build_env, [env.build])],
        "file_dep": list(env.deps),
        "targets": [env.stamp],
        "uptodate": [config_changed({"tag": env.tag, **env.settings}), lambda s=env.stamp: _image_current(s)],
        "doc": f"build the {env.name} environment image",
    }


def _batch_task(tier: str, suite, name: str, members: list, progress) -> dict:
    """``batch:<tier>/<name>``: prove the stale ones of ``members`` (TaskSpecs) together, before their own
    ``prove:`` tasks run (which then take the batch's proofs)."""
    names = [m.name for m in members]
    files = [(suite.build_dir / m.name / "render.json", suite.build_dir / m.name / "proof.json",
              m.image_stamp or suite.build_dir / m.name / "render.json") for m in members]
    return {
        "basename": "batch", "name": f"{tier}/{name}",
        "actions": [(_prove_batch, [tier, names, members[0].image, suite.prove, progress, _flag("reprove")])],
        # the image as a file_dep: doit builds it first (it is a target of the image's task)
        "file_dep": sorted({str(m.image_stamp) for m in members if m.image_stamp}),
        "task_dep": [f"gen:{tier}/{n}" for n in names],
        "uptodate": [(_batch_current, [files])],
        "doc": f"prove the stale ones of {len(members)} {tier} tasks together (run by gen)",
    }


def _task_tasks(tier: str, suite, spec, progress, batch: str | None):
    """``gen:<tier>/<task>`` (render) and ``prove:<tier>/<task>`` of one chosen task (a TaskSpec); ``batch``:
    the batch task that may prove it first, or None. Counts a stale proof into ``progress``."""
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
        "actions": [(_prove, [tier, spec.name, spec.image, suite.prove, progress])],
        "file_dep": [render] + ([spec.image_stamp] if spec.image_stamp else []),
        "targets": [proof],
        "uptodate": [config_changed({"limits": repr(suite.prove), "image": spec.image}),
                     (_proof_stands, [str(proof), _flag("reprove")])],
        "task_dep": [batch] if batch else [],
        "doc": f"prove {spec.name}",
    }
    progress.total += _stale(render, proof, spec.image_stamp or render)


def _publish_task(tier: str, suite, selection, proofs: list) -> dict:
    """``publish:<tier>``: publish the proven tasks of every task the tier has and write its manifest."""
    strict = _flag("strict")
    return {
        "basename": "publish", "name": tier,
        "actions": [(_publish, [tier, selection.every, strict, selection.settings, selection.labels])],
        "file_dep": proofs,
        "task_dep": [f"prove:{tier}/{spec.name}" for spec in selection.chosen],
        "targets": [suite.manifest_path],
        "uptodate": [config_changed({"strict": strict, "tasks": selection.every, "selection": selection.settings}),
                     (_manifest_current, [str(suite.manifest_path), str(suite.build_dir)])],
        "doc": f"publish the {tier} tier's proven tasks (run by gen)",
    }


def _manifest_current(manifest: str, build_dir: str) -> bool:
    """False when a proof on disk is newer than the manifest (e.g. proved by a command that was killed before
    it published, or by another selection): a bare `doit gen:<tier>` then publishes it."""
    try:
        published = os.stat(manifest).st_mtime
    except FileNotFoundError:
        return False
    return all(p.stat().st_mtime <= published for p in Path(build_dir).glob("*/proof.json"))


def _image_current(stamp: Path) -> bool:
    from rules import images

    return images.stamp_current(stamp.stem)


def _evaluate(suite: str | None, predictions: str | None, dataset: str | None) -> None:
    from rules.tier import Rejected

    tier = _predictions_tier(suite)
    if tier is None:
        return TaskFailed("no tier here grades predictions (a tier with held-out tests does; README.md, "
                          "Predictions): give suite=NAME")
    try:
        print(tiers.get(tier).evaluate(predictions, dataset))
    except (Rejected, ConfigError) as exc:
        return Refused(str(exc))
    return None


def _predictions_tier(suite: str | None) -> str | None:
    """The tier ``doit evaluate`` is about: ``suite=``, else the first tier here that grades predictions
    (has an ``evaluate``)."""
    if suite:
        return suite
    for name in tiers.present():
        try:
            if hasattr(tiers.get(name), "evaluate"):
                return name
        except ConfigError:
            continue  # a broken plug-in is its own command's problem, not this one's
    return None


def task_evaluate():
    """Grade SWE-bench predictions with a tier's held-out tests (predictions=FILE|gold|empty).

    ``doit evaluate predictions=FILE`` (or ``predictions=gold`` / ``predictions=empty``; ``suite=`` picks the
    tier); writes evals/<tier>/evaluations/<name>/ (logs, results.json)."""
    if _tier_steps_only():
        return None  # `doit gen:...`: no agent, trial or report task is needed
    return {"actions": [(_evaluate, [get_var("suite"), get_var("predictions"), get_var("dataset")])],
            "uptodate": [False], "verbosity": 2}


def _scenarios(tier: str) -> None:
    suite = load_suite(tier)
    keys = tiers.get(tier).groups
    manifest = read_json(suite.manifest_path)
    if not manifest:
        raise SystemExit(f"{suite.manifest_path} does not exist yet: run `doit gen:{tier}` first")
    rows = [e for e in manifest["tasks"] if e.get("published")]
    widths = [max([len(k)] + [len(str(e.get(k, ""))) for e in rows]) + 1 for k in keys]
    print(f"{'task':40} " + "".join(f"{k:{w}}" for k, w in zip(keys, widths)) + f"{'tests':>5}  status")
    for e in rows:
        labels = "".join(f"{str(e.get(k, '')):{w}}" for k, w in zip(keys, widths))
        print(f"{e['task']:40} {labels}{e.get('tests', 0):>5}  {e['status']}")
    print(f"{len(rows)} tasks ({sum(e['status'] == 'free' for e in rows)} free)")


def task_scenarios():
    """List a tier's published tasks with their group labels, test count and status (``suite=NAME``)."""
    if _tier_steps_only():
        return None  # `doit gen:...`: no agent, trial or report task is needed
    tier = _suite_var()
    return {"actions": [(_scenarios, [tier])], "verbosity": 2, "uptodate": [False]}


# ---- run and report (agents, trials, report) ----



_WARNED: set[str] = set()


def _agents() -> tuple[dict, str | None, dict]:
    """The agents of evals/agents.toml that load, None (or no agents and the error that stops loading the
    file), and the badly defined ones (name → their one-line error). A bad table stops only its own agent:
    ``doit list`` and runs of the others go on, and each command says once on stderr which cannot run."""
    from rules.agents import load_agents

    broken: dict = {}
    try:
        agents = load_agents(broken=broken)
    except ConfigError as exc:
        return {}, str(exc), {}
    # the agents this command asks for say their own error in their refusal: warned once, not twice
    asked = {get_var("agent")} | set((get_var("agents") or "").split(","))
    for name, message in broken.items():
        if name not in _WARNED and name not in asked:
            _WARNED.add(name)
            print(f"lab: agent {name!r} cannot run until its table is fixed: {message}", file=sys.stderr)
    return agents, None, broken


def _runs(tier: str, agents: dict) -> dict:
    """Each agent's run for this command: name → (agent with its settings' values, run id), or name → the
    one-line reason it cannot run (a setting without a value)."""
    from rules.agents import run_id

    given, runs_dir = _settings_given(agents), load_suite(tier).runs_dir
    out: dict = {}
    for name, agent in agents.items():
        try:
            resolved = agent.resolve(given)
        except ConfigError as exc:
            out[name] = str(exc)
            continue
        out[name] = (resolved, run_id(resolved, runs_dir, taken=agents))
    return out


def _published(tier: str) -> list[str]:
    """The names of the tier's published tasks (manifest status kept or free, task folder present)."""
    suite = load_suite(tier)
    manifest = read_json(suite.manifest_path) or {}
    base = str(suite.tasks_dir)
    return [t["task"] for t in manifest.get("tasks", [])
            if t.get("status") in ("kept", "free") and os.path.isfile(os.path.join(base, t["task"], "task.json"))]


def _definition_stamp(agent, run: str) -> Path:
    """Write the definition of ``agent`` (with its settings' values) to ``.lab/agents/<run>.json`` when it
    changed and the command runs tasks (``doit list`` writes nothing); return the path (the file_dep that redoes
    a run's trials exactly when its definition changes)."""
    path = STATE / "agents" / f"{run}.json"
    if cli.current().runs_tasks:
        write_json(path, agent.definition(), only_if_changed=True)
    return path


def _build_agent(name: str) -> None:
    from rules import images
    from rules.agents import get_agent

    try:
        stamp = images.build_agent(get_agent(name), base_image=lab_settings().base_image)
    except ConfigError as exc:
        return Refused(str(exc))
    print(f"agent image {stamp['image']} {stamp['id'][:19]}")
    return None


def _agent_digest(agent, on: str) -> str:
    """``agent.image_digest(on)`` (its rendered Dockerfile and the files it copies: a changed copied file
    rebuilds the image), or "" when its template is missing or does not render (the build says why)."""
    try:
        return agent.image_digest(on)
    except Exception:  # noqa: BLE001 - the build action reports a missing or broken template
        return ""


def _agent_image_task(name: str, agent, base: str | None, base_id: str = "") -> dict:
    """The doit task that builds agent ``name``'s image FROM ``base`` (None: the grader image)."""
    from rules import images

    try:
        template = [agent.template_path()]
    except ConfigError:
        template = []  # the build action reports the missing template
    on = base or images.GRADER
    stamp = agent.stamp_name if base is None else images.agent_stamp_name(agent, base)
    return {
        "actions": [(_build_agent, [name])] if base is None else [(_build_agent_on, [name, base])],
        "file_dep": template + ([images.stamp_path("grader")] if base is None else []),
        "targets": [images.stamp_path(stamp)],
        "uptodate": [config_changed({"image": agent.image, "build": dict(agent.build), "tag": agent.tag(on),
                                     "digest": _agent_digest(agent, on), **({"base_id": base_id} if base else {})}),
                     lambda s=stamp: images.stamp_current(s)],
        "doc": f"build the {name} agent's image" + (f" FROM {base}" if base else ""),
    }


def _missing_base(base: str) -> str | None:
    """When the engine has no environment image ``base`` (pruned, or removed by hand), the one line that says so
    and names the gen that builds it again (the tier and instances whose published task.json names it); else
    None."""
    from rules import sandbox

    if sandbox.image_id(base) is not None:
        return None
    for tier in tiers.present():
        try:
            tasks_dir = load_suite(tier).tasks_dir
            ids = [t for t in _published(tier) if (read_json(tasks_dir / t / "task.json") or {}).get("image") == base]
        except ConfigError:
            continue
        if ids:
            return (f"the environment image {base} is missing (pruned, or removed): `doit gen:{tier} "
                    f"instances={','.join(ids)}` (with the repos= you gen with) builds it again")
    return f"the environment image {base} is missing and no published task names it: `doit gen:<tier>` builds it"


def _build_agent_on(name: str, base: str) -> None:
    from rules import images
    from rules.agents import get_agent

    missing = _missing_base(base)
    if missing:  # else the build's pull of it fails, far from the cause
        return TaskFailed(f"the {name} agent's image cannot be built FROM {base}: {missing}")
    try:
        stamp = images.build_agent(get_agent(name), base=base, base_image=lab_settings().base_image)
    except ConfigError as exc:
        return Refused(str(exc))
    except Exception as exc:  # noqa: BLE001 - SandboxError: say which agent and base, and what to do
        return TaskFailed(f"the {name} agent's image does not build FROM {base} (the task's environment "
                          f"image): {exc}; an agent whose install needs another Python than that image's cannot "
                          "run on these tasks")
    print(f"agent image {stamp['image']} {stamp['id'][:19]}")
    return None


def _agent_bases() -> dict[str, str]:
    """The images agents are built on besides the grader, over every tier of this home: env name → tag
    (``Tier.agent_bases`` of its published tasks)."""
    out: dict[str, str] = {}
    for tier in tiers.present():
        try:
            out.update(tiers.get(tier).agent_bases(load_suite(tier), _published(tier)))
        except ConfigError:
            continue  # `doit gen:<tier>` and `doit run suite=<tier>` say what is wrong
    return out


def task_agent_image():
    """Build each agent's image: ``agent_image:<agent>`` FROM the grader image, and ``agent_image:<agent>@<env>``
    FROM each environment image a tier's published tasks run in (so the agent can run their tests)."""
    if _tier_steps_only():
        return None  # `doit gen:...`: no agent, trial or report task is needed
    from rules.sandbox import image_id_quick

    agents, _, _ = _agents()
    for name, agent in agents.items():
        yield {"name": name, **_agent_image_task(name, agent, None)}
    for env, base in _agent_bases().items():
        base_id = image_id_quick(base) or ""
        for name, agent in agents.items():
            yield {"name": f"{name}@{env}", **_agent_image_task(name, agent, base, base_id)}


def _agent_image_name(agent: str, env: str | None) -> str:
    """The doit task of agent ``agent``'s image on environment ``env`` (None: on the grader image)."""
    return f"agent_image:{agent}" + (f"@{env}" if env else "")


def _build_service(agent_name: str, role: str, base_image: str) -> None:
    from rules import images
    from rules.agents import get_agent

    try:
        stamp = images.build_service(dict(_services(get_agent(agent_name)))[role], base_image)
    except ConfigError as exc:
        return Refused(str(exc))
    print(f"service image {stamp['image']} {stamp['id'][:19]} (built in {stamp['seconds']:.0f} s)")
    return None


def _services(agent) -> tuple[tuple[str, object], ...]:
    """The images an agent's trials start beside it: (role, ``Service``) for its service and its gateway, where
    declared, and for the local model and its gateway when it can run with ``model=local``."""
    declared = tuple((role, s) for role, s in (("service", agent.service), ("gateway", agent.gateway)) if s is not None)
    return declared + tuple(zip(("local-service", "local-gateway"), agent.local_services()))


def task_service_image():
    """Build each service image agents declare (e.g. a local model server, lab's gateway).

    Built FROM the Debian base image:
    ``service_image:service-<name>-<digest>``; agents that declare the same service share one image."""
    if _tier_steps_only():
        return None  # `doit gen:...`: no agent, trial or report task is needed
    from rules import images

    agents, _, _ = _agents()
    base_image = lab_settings().base_image
    seen = set()
    for name, agent in agents.items():
        for role, service in _services(agent):
            if service.stamp_name in seen:
                continue
            seen.add(service.stamp_name)
            yield _service_image_task(name, role, service, base_image)


def _service_image_task(name: str, role: str, service, base_image: str) -> dict:
    from rules import images

    try:
        template = [service.template_path(), *sorted(service.template_path().parent.rglob("*.py"))]
    except ConfigError:
        template = []  # the build action reports the missing template
    return {
        "name": service.stamp_name,
        "actions": [(_build_service, [name, role, base_image])],
        "file_dep": template,
        "targets": [images.stamp_path(service.stamp_name)],
        "uptodate": [config_changed({"build": dict(service.build), "tag": service.tag(), "base_image": base_image}),
                     lambda s=service.stamp_name: images.stamp_current(s)],
        "doc": f"build the service image {service.tag()}",
    }


def _backend() -> tuple[str, str | None]:
    """Where trials run: ``backend=`` ("local", the default, or "ray") and ``cluster=HOST:PORT`` (needed by
    ray; RAY_ADDRESS when not given)."""
    from rules.backends import BACKENDS

    name = get_var("backend", "local")
    cluster = get_var("cluster") or os.environ.get("RAY_ADDRESS") or None
    if name not in BACKENDS:
        raise SystemExit(f"backend={name}: unknown; give one of {', '.join(BACKENDS)} "
                         "(README.md, Running on a cluster)")
    if name == "ray" and not cluster:
        raise SystemExit("backend=ray needs cluster=HOST:PORT, the head node's address "
                         "(README.md, Running on a cluster)")
    return name, cluster if name != "local" else None


def _step_action(fn, args: list):
    """Run a tier's step action; its ConfigError or BackendError is the task's failure, in one line."""
    from rules.backends import BackendError

    try:
        fn(*args)
    except (ConfigError, BackendError) as exc:
        return Refused(str(exc))
    return None


def _step_task(step) -> dict:
    """The doit task dict of a tier's ``rules.tier.Step``."""
    if step.fails is not None:
        return {"name": step.name, "actions": [(_fail, [step.fails])], "doc": step.doc}
    task = {"name": step.name, "doc": step.doc,
            "actions": [(_step_action, list(step.action))] if step.action else None}
    for key in ("file_dep", "task_dep", "targets", "setup"):
        if getattr(step, key):
            task[key] = list(getattr(step, key))
    if step.current:
        task["uptodate"] = [config_changed(step.settings or {}), step.current]
        if step.targets:  # the progress line asks it whether an older result still counts
            from rules.runs import register_check

            register_check(Path(step.targets[0]).parent, step.current)
    return task


def _eval_context(tier: str):
    """What the tier's ``eval_steps`` and ``report_run`` get from this command (``rules.tier.EvalContext``)."""
    from rules.tier import EvalContext

    agents, problem, broken = _agents()
    runs = {**_runs(tier, agents), **broken} if not problem else {}
    return EvalContext(
        suite=load_suite(tier), agents=agents, problem=problem, runs=runs, tasks=_published(tier), var=get_var,
        whole=_whole, backend=_backend, stamp=_definition_stamp,
        agent_problem=lambda n, settings=True: _agent_problem(n, agents, runs, None, settings=settings),
        settings_unused=lambda names: _settings_unused(names, agents), agent_image=_agent_image_name,
        since=time.time())


def task_eval():
    """Run an agent over a tier's published tasks (eval:<run>, eval:<run>/<task>), without the report.

    ``eval:<run>`` (every trial), ``eval:<run>/<task>``
    (one); the run is the agent with its settings' values (``eval:tomo model=X``: run ``tomo.X``);
    ``repeat=N`` (each trial N times: ``<task>``, ``<task>@2``, ...), ``backend=ray cluster=HOST:PORT``
    (trials on a Ray cluster; ``jobs=N`` trials in flight), and the tier's own variables (``tries=N``,
    ``attempts=N``: README.md). A trial whose result is an ``error`` runs again next time; one whose grading
    alone changed (check.sh, grader image, grading limits) is re-graded without the agent."""
    if _tier_steps_only():
        return None  # `doit gen:...`: no agent, trial or report task is needed
    tier = _suite_var()
    ctx = _eval_context(tier)
    names: set[str] = set()
    steps = list(tiers.get(tier).eval_steps(ctx))
    refused = _repeats_left_out(_asked("eval"), {s.name for s in steps}, _whole("repeat", 1))
    for step in steps:
        if step.name not in names:
            names.add(step.name)
            yield ({"name": step.name, "doc": step.doc, "actions": [(_fail, [refused[step.name]])]}
                   if step.name in refused else _step_task(step))
    for asked in _asked("eval"):
        if asked not in names:
            names.add(asked)
            yield {"name": asked, "doc": "an unknown agent, run or trial",
                   "actions": [(_fail, [_unknown_eval(asked, ctx.agents, ctx.runs, ctx.problem, ctx.tasks,
                                                      ctx.suite.runs_dir)])]}


def _regrade(tier: str, agent: str | None):
    from rules.sandbox import SandboxError

    if not agent:
        return Refused("regrade needs agent=NAME (the agent whose stored trials are graded again)")
    try:
        print(tiers.get(tier).regrade(agent))
    except (ConfigError, SandboxError) as exc:
        return Refused(f"regrade: {exc}")
    return None


def task_regrade():
    """Grade an agent's stored trials again without running it (regrade agent=NAME).

    Every stored trial of ``agent=NAME`` is graded with the grader image as it is now (``doit image``
    rebuilds it) and the tasks' check.sh, without running the agent (``suite=`` picks the tier); results are
    rewritten with ``graded.regraded`` true."""
    if _tier_steps_only():
        return None  # `doit gen:...`: no agent, trial or report task is needed
    tier = _suite_var()
    return {"actions": [(_regrade, [tier, get_var("agent")])], "uptodate": [False], "verbosity": 2}


def _report(tier: str, run: str | None = None, subset=None):
    """Write the tier's report (``subset``: ``Tier.subset``'s, the report of those tasks alone); after ``doit
    run`` (``run``: the run it made) fail with the one loud line when every trial of the run ended in error
    (``rules.runs.run_failed``), so the command exits non-zero."""
    from rules import sandbox
    from rules.publish import write_report
    from rules.runs import run_failed

    # an agent box idles until removed: a run killed by Ctrl-C leaves its boxes up; the report (the end of every
    # `doit run` and `doit report`) removes those of runs that are provably gone
    if sandbox.boxes_left():
        sandbox.cleanup()
    try:
        write_report(tier)
        if subset is not None:
            write_report(tier, subset=subset)
    except ConfigError as exc:  # evals/agents.toml unreadable: nothing already written is rewritten
        return Refused(str(exc))
    failed = run_failed(run, load_suite(tier).runs_dir / run, _published(tier)) if run else None
    return Refused(failed) if failed else None


def _fail(message: str):
    return Refused(message)


def task_report():
    """Write the comparison report of every run with results (suite=NAME; agent=NAME runs it first).

    ``agent=NAME`` (with its settings, e.g. ``model=X``)
    first runs that agent's trials (so ``doit run agent=NAME`` runs, then reports)."""
    if _tier_steps_only():
        return None  # `doit gen:...`: no agent, trial or report task is needed
    tier = _suite_var()
    agent = get_var("agent")
    try:
        subset = tiers.get(tier).subset(load_suite(tier), get_var) if get_var("subset") else None
        if get_var("subset") and subset is None:
            subset = Rejected(f"subset={get_var('subset')}: the {tier} tier has no subsets (suite=NAME picks "
                              "another tier)")
    except Rejected as exc:
        subset = exc
    task = {"actions": [(_report, [tier, None, subset])], "uptodate": [False], "verbosity": 2,
            "doc": "write evals/<tier>/report.{md,json,html} (agent=NAME runs that agent first; subset=NAME "
                   "also report.<subset>.*)"}
    if isinstance(subset, Rejected):
        task["actions"] = [(_fail, [f"{subset}; nothing was run"])]
    elif agent == "":
        task["actions"] = [(_fail, ["agent=: give the name of an agent in evals/agents.toml (agent=noop); nothing "
                                    "was run"])]
    elif agent or get_var("agents"):
        task.update(_report_run(tier, agent, subset))
    if task["actions"] and task["actions"][0][0] is _fail:
        task["meta"] = {"quiet": True}  # the refusal's one line is all it prints
    return task


def _report_run(tier: str, agent: str | None, subset=None) -> dict:
    """What ``doit run agent=NAME`` adds to the report task: the run's ``eval:`` task as its task_dep, or the
    one line that says why nothing runs (agents.toml, a variable that chooses what gen publishes, the agent)."""
    the_tier = tiers.get(tier)
    ctx = _eval_context(tier)
    selection = [f"{n}=" for n in the_tier.selection_vars if get_var(n) is not None]
    if ctx.problem:  # agents.toml itself: about every agent, not the one asked for
        return {"actions": [(_fail, [f"{ctx.problem}; nothing was run"])]}
    if selection:
        return {"actions": [(_fail, [f"{', '.join(selection)} choose what `doit gen:{tier}` proves and publishes; "
                                     f"a run covers every published task ({len(ctx.tasks)} here): leave "
                                     f"{'them' if len(selection) > 1 else 'it'} out, or publish fewer tasks first "
                                     "(README.md, Commands); nothing was run"])]}
    try:
        run = the_tier.report_run(ctx, agent)
        if not ctx.tasks:  # after the agent's own problem: a broken table is worth fixing before the gen
            return {"actions": [(_fail, [f"no published tasks in {ctx.suite.manifest_path.relative_to(ROOT)}: run "
                                         f"`doit gen:{tier}` first, which proves and publishes them; nothing was run"])]}
        return {"task_dep": [f"eval:{run}"], "actions": [(_report, [tier, run, subset])]}
    except ConfigError as exc:
        # `doit run agent=X` runs the report task: the message says what was asked, not "report"
        return {"actions": [(_fail, [str(exc)])]}


def task_view():
    """Serve evals/ on 127.0.0.1 (port 8000; LAB_VIEW_PORT=N another, 0 any free one) until Ctrl-C: the reports
    and trial pages by URL (they open from file:// as well). Reads only, so it holds no home lock."""
    from rules.config import EVALS
    from rules.viewer import view

    port = os.environ.get("LAB_VIEW_PORT", "8000")
    if not port.isdigit() or int(port) > 65535:
        return {"actions": [(_fail, [f"LAB_VIEW_PORT={port}: give a port number, 0 to 65535 (0: any free one)"])],
                "uptodate": [False], "meta": {"quiet": True}}
    return {"actions": [(view, [EVALS, int(port)])], "uptodate": [False], "verbosity": 2,
            "doc": "serve evals/ (reports, trial pages) on 127.0.0.1:8000 until Ctrl-C (LAB_VIEW_PORT=N)"}
