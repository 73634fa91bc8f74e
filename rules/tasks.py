"""The doit task creators: the only module that imports doit.

Each creator is short and reads like a table of what invalidates what; the work happens in plain functions
elsewhere (rules.aider, rules.prove, rules.trial, rules.report) that know nothing of doit. Command-line
variables (``agent=``, ``langs=``, ``limit=``, ``all=``, ``upstream=``, ``ref=``, ``jobs=``, ``strict=``,
``tries=``, ``repeat=``, ``suite=``, ``backend=``, ``cluster=``, and the agents' settings such as ``model=``)
are read here with ``doit.get_var`` and passed to actions as arguments; any other ``name=value`` stops the
command with the list of known ones (doit itself would silently ignore it).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from doit import get_var

from rules.config import STATE

STATE.mkdir(parents=True, exist_ok=True)

def _suite_var() -> str:
    """``suite=``: the tier a command is about (default ``aider``); an unknown one stops the command with one
    line naming the tiers there are."""
    tier = get_var("suite", "aider")
    try:
        load_suite(tier)
    except ConfigError as exc:
        raise SystemExit(f"suite={tier}: {exc}") from None
    return tier


def _jobs() -> int:
    """``jobs=N``: how many tasks (proofs, trials) run at once; default the number of CPUs. Anything but a whole
    number of 1 or more stops the command with one line (doit itself would run nothing at all for 0 or less)."""
    raw = get_var("jobs")
    if raw is None:
        return os.cpu_count() or 1
    try:
        jobs = int(raw)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise SystemExit(f"jobs={raw}: give a whole number of tasks to run at once, 1 or more")
    return jobs


DOIT_CONFIG = {
    "backend": "sqlite3",
    "dep_file": str(STATE / "doit.sqlite3"),
    "check_file_uptodate": "md5",
    "default_tasks": ["report"],
    "verbosity": 2,
    # jobs=N runs N tasks (proofs, trials) at once; threads suffice, the work happens in containers
    "num_process": _jobs(),
    "par_type": "thread",
}



def _setting_names() -> tuple[set[str], str]:
    """The names of every setting the agents declare, and why they are unknown ("" when agents.toml loads)."""
    from rules.agents import load_agents

    try:
        return {s.name for a in load_agents().values() for s in a.settings}, ""
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
    unknown = [n for n in unknown if n not in settings]
    if unknown:
        known = ", ".join(f"{n}=" for n in sorted(set(LAB_VARIABLES) | settings))
        raise SystemExit(f"unknown variable(s) {', '.join(f'{n}=' for n in unknown)}; lab knows {known}{why} "
                         "(README.md, Commands)")


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


def _command_line_variables() -> dict | None:
    """The ``name=value`` pairs of this doit command (doit 0.37 keeps them in ``doit.doit_cmd._CMDLINE_VARS``;
    None outside a doit command)."""
    from doit import doit_cmd

    return getattr(doit_cmd, "_CMDLINE_VARS", None)


from rules.config import ConfigError  # noqa: E402

check_variables(_command_line_variables())
if _command_line_variables() is not None:
    check_repeated(sys.argv[1:])

# doit commands that run no task (the others run tasks: `doit`, `doit run ...`, `doit gen:aider`, `doit report`)
_NO_TASKS = {"list", "info", "help", "forget", "ignore", "dumpdb", "strace", "tabcompletion", "reset-dep", "clean"}
_HOME_LOCK: list[int] = []


def hold_home(argv: list[str]) -> None:
    """Take this lab home's lock (``.lab/home.lock``, an exclusive ``flock`` held until this process ends) for a
    doit command ``argv`` (without the program) that runs tasks. Two such commands at once in one home removed
    each other's trial scratch folders and wrote one doit database, and a sound trial ended in an error counted
    as the agent's (seen by a newcomer); the second is refused instead. Raises SystemExit naming the command
    that holds the lock; the kernel drops it when that process ends, killed or not."""
    if argv[:1] and argv[0] in _NO_TASKS or _HOME_LOCK:
        return
    import fcntl

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
    Finished trials are kept (each wrote its result.json atomically); the next run does the others."""
    import signal
    import subprocess
    import time

    from rules import sandbox

    print(f"\nlab: stopped ({signal.Signals(signum).name}); removing this command's containers; finished trials "
          "are kept, the next run does the rest", file=sys.stderr, flush=True)
    n = sandbox.remove_own()
    time.sleep(0.3)  # a container whose creation was already under way when the first pass looked
    n += sandbox.remove_own()
    print(f"lab: {n} container(s) removed", file=sys.stderr, flush=True)
    trials = str(STATE / "trials") + "/"
    try:  # the running trials' disk-capped scratch folders (``rules.disk``), which the exit below does not unmount
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            mounted = [line.split()[1].replace("\\040", " ") for line in f]
    except OSError:
        mounted = []
    for point in sorted((m for m in mounted if m.startswith(trials)), reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)
    os._exit(128 + signum)


if _command_line_variables() is not None:
    hold_home(sys.argv[1:])

# ---- pull, image, gen, prove, scenarios (the tier) ----

from doit import create_after  # noqa: E402
from doit.exceptions import TaskFailed  # noqa: E402
from doit.tools import config_changed  # noqa: E402

from rules.config import Suite, load_suite  # noqa: E402
from rules.files import files_below, read_json, write_json  # noqa: E402
from rules.tier import AiderTier  # noqa: E402


def _swe_tier():
    from rules.swebench import SweTier

    return SweTier()


class _Tiers(dict):
    """Tier name → its seam (rules/tier.py), each made on first use (``TIERS[name]``): the swe tier's module is
    large, and a command about the aider tier never needs it."""

    def __getitem__(self, name: str):
        seam = super().__getitem__(name)
        if isinstance(seam, tuple):  # (maker,): not made yet
            seam = seam[0]()
            super().__setitem__(name, seam)
        return seam

    def get(self, name: str, default=None):
        return self[name] if name in self else default

    def values(self):
        return [self[name] for name in self]

    def items(self):
        return [(name, self[name]) for name in self]


TIERS = _Tiers(aider=(AiderTier,), swe=(_swe_tier,))  # tier name → its seam (rules/tier.py)
TIER_STEPS = ("pull", "image", "gen", "prove", "env", "batch")  # the basenames of a tier's tasks
# doit's options of `doit run` (0.37): those taking a value as the next word, and flags
_VALUE_OPTIONS = {"-v", "--verbosity", "-r", "--reporter", "-o", "--output-file", "-n", "--process", "-P",
                  "--parallel-type", "--failure-verbosity", "--db-file", "--backend", "--check_file_uptodate",
                  "-f", "--file", "-d", "--dir"}
_FLAG_OPTIONS = {"-a", "--always-execute", "-c", "--continue", "--pdb", "-s", "--single", "--auto-delayed-regex",
                 "-k", "--seek-file"}


def _targets(argv: list[str]) -> list[str] | None:
    """The task names a ``doit [run] ...`` command line ``argv`` (without the program) asks for, or None when
    that cannot be told for sure (an option this does not know; names are then taken as unknown)."""
    args = argv[1:] if argv[:1] == ["run"] else list(argv)
    names: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in _VALUE_OPTIONS:
            i += 2
            continue
        if a.startswith("-"):
            if a in _FLAG_OPTIONS or a.split("=", 1)[0] in _VALUE_OPTIONS or a[:2] in _VALUE_OPTIONS:
                i += 1
                continue
            return None
        if "=" not in a:
            names.append(a)
        i += 1
    return names


def tier_steps_only(argv: list[str] | None = None) -> bool:
    """True when the command (``argv``, default ``sys.argv[1:]``) runs only tier steps (``doit gen:aider``,
    ``doit pull prove:aider/x``: basenames in ``TIER_STEPS``): then the creators of agents, trials and reports
    make no tasks (their reading of agents.toml, every task's files and the runs is not needed). Any doubt (no
    name: the default tasks; another doit command; an unknown option) gives False."""
    import sys

    names = _targets(sys.argv[1:] if argv is None else argv)
    return bool(names) and all(n.split(":", 1)[0] in TIER_STEPS for n in names)


_TIER_STEPS_ONLY = tier_steps_only()
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
        return TaskFailed(str(exc))
    for note in notes:  # offline: the last fetched commit of a branch or tag, said in one line
        print(f"{tier}: {note}", file=sys.stderr)
    # remembered only once it worked, for later commands without upstream=/ref=
    write_json(STATE / "upstream" / f"{tier}.json", {"upstream": url, "ref": ref}, only_if_changed=True)
    print(f"{tier}: {url} at {commit}")
    return None


def task_pull():
    """Clone or fetch each tier's upstream and check out its pinned ref (upstream=, ref= override)."""
    from rules.config import ConfigError
    from rules.upstream import is_current

    asked = {a.split("/", 1)[0] for a in _asked("gen") + _asked("prove")}
    for tier in TIERS:
        if asked and tier not in asked:
            continue  # `doit gen:swe` never waits on (or fails for) the aider tier's upstream
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


def _render(tier: str, spec):
    from rules.build import stage
    from rules.tier import Rejected, Unavailable

    suite = load_suite(tier)
    try:
        r = TIERS[tier].render(suite, spec)
        stage(suite.build_dir / spec.name, r.task_files, r.answer_files, None, r.meta)
    except Rejected as exc:
        stage(suite.build_dir / spec.name, None, None, str(exc), {"task": spec.name, **spec.groups})
    except Unavailable as exc:  # nothing recorded: the next command tries again (e.g. with repos=DIR)
        return TaskFailed(f"{spec.name}: {exc}")
    return None


_progress: dict = {}  # tier → Progress of this run's proofs


def _prove(tier: str, task: str, image: str, limits) -> None:
    record = TIERS[tier].prove(load_suite(tier).build_dir / task, image, limits)
    if tier in _progress:
        _progress[tier].done(record)


def _prove_batch(tier: str, tasks: list[str], image: str, limits) -> None:
    build = load_suite(tier).build_dir
    TIERS[tier].prove_batch([build / t for t in tasks], image, limits)


def _batch_current(members: list[tuple[Path, Path, Path]]) -> bool:
    """True (nothing to batch) when fewer than two of the batch's tasks have a proof older than their render or
    image stamp (stat only: the batch itself checks each proof's inputs exactly)."""
    return sum(_stale(render, proof, stamp) for render, proof, stamp in members) < 2


def _not_environmental(proof: str) -> bool:
    """False when the last proof was rejected for the machine's sake (a timeout or out of memory): such a
    rejection is never kept, the next gen proves the task again."""
    record = read_json(Path(proof)) or {}
    return not record.get("environmental")


def _publish(tier: str, tasks: list[str], strict: bool, selection: dict) -> None:
    from rules.build import publish, summary

    print(summary(publish(load_suite(tier), tasks, strict=strict, selection=selection,
                          group_keys=TIERS[tier].group_keys)))


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


@create_after(executed="pull", creates=["gen", "prove", "env", "batch"])
def task_gen():
    """Render, prove and publish a tier's tasks (gen:aider, gen:swe; env:, batch:, prove: are its steps).

    ``doit gen:aider`` (a sample), ``langs=go,python``, ``limit=N``, ``all=1``, ``strict=1`` (leave free tasks
    out); ``doit gen:swe`` (``dataset=``, ``repos=``, ``instances=``, ``limit=``, ``all=1``). Each tier says which
    tasks exist and which image each one runs in (rules/tier.py); environment images a tier builds are
    ``env:<tier>/<name>`` tasks. A command that names some tiers' steps (``gen:swe``) reads only those tiers'
    variables (``limit=`` of the swe tier is not the aider tier's)."""
    from rules.build import Progress
    from rules.config import EVALS, ConfigError
    from rules.tier import Rejected

    asked = {a.split("/", 1)[0] for b in ("gen", "prove", "env", "batch") for a in _asked(b)}
    for tier in TIERS:
        if not (EVALS / tier / "suite.toml").is_file():
            continue  # a lab home without this tier
        if asked and tier not in asked:
            continue
        module = TIERS[tier]
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
        batch_of = {}
        batches = module.batches(suite, selection.chosen, _jobs()) if hasattr(module, "batches") else {}
        specs = {spec.name: spec for spec in selection.chosen}
        for name, members in batches.items():
            batch_of.update({m: f"batch:{tier}/{name}" for m in members})
            files = [(suite.build_dir / m / "render.json", suite.build_dir / m / "proof.json",
                      specs[m].image_stamp or suite.build_dir / m / "render.json") for m in members]
            yield {
                "basename": "batch", "name": f"{tier}/{name}",
                "actions": [(_prove_batch, [tier, members, specs[members[0]].image, suite.prove])],
                "task_dep": [f"gen:{tier}/{m}" for m in members],
                "uptodate": [(_batch_current, [files])],
                "doc": f"prove the stale ones of {len(members)} {tier} tasks together (run by gen)",
            }
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
                "task_dep": [batch_of[spec.name]] if spec.name in batch_of else [],
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
            "uptodate": [config_changed({"strict": strict, "tasks": selection.every, "selection": selection.settings}),
                         (_manifest_current, [str(suite.manifest_path), str(suite.build_dir)])],
            "doc": f"render, prove and publish the {tier} tier",
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


def _evaluate(predictions: str | None, dataset: str | None) -> None:
    from rules import swebench
    from rules.tier import Rejected

    if not predictions:
        return TaskFailed("give predictions=FILE (SWE-bench JSONL: instance_id, model_name_or_path, model_patch), "
                          "or predictions=gold / predictions=empty")
    suite = load_suite("swe")
    if not swebench.published(suite):
        return TaskFailed(f"no published swe tasks in {suite.dir}: run `doit gen:swe` first (the held-out tests "
                          "grade only published tasks)")
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
    """Grade SWE-bench predictions with the swe tier's held-out tests (predictions=FILE|gold|empty).

    ``doit evaluate predictions=FILE`` (or
    ``predictions=gold`` / ``predictions=empty``); writes evals/swe/evaluations/<name>/ (logs, results.json)."""
    if _TIER_STEPS_ONLY:
        return None  # `doit gen:...`: no agent, trial or report task is needed
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
    if _TIER_STEPS_ONLY:
        return None  # `doit gen:...`: no agent, trial or report task is needed
    tier = _suite_var()
    return {"actions": [(_scenarios, [tier])], "verbosity": 2, "uptodate": [False]}


# ---- run and report (agents, trials, report) ----

import time  # noqa: E402

TRIES = 2  # the polyglot benchmark's pass@2: a second try after a failed one, with the test output


def _agents() -> tuple[dict, str | None]:
    """The agents of evals/agents.toml and None, or no agents and the error that stops loading them."""
    from rules.agents import load_agents

    try:
        return load_agents(), None
    except ConfigError as exc:
        return {}, str(exc)


def _settings_given(agents: dict) -> dict[str, str]:
    """The setting values given on the command line (``model=X``), by setting name."""
    names = {s.name for a in agents.values() for s in a.settings}
    return {n: get_var(n) for n in names if get_var(n)}


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


def _settings_unused(names: list[str], agents: dict) -> str | None:
    """Why the settings given on the command line do not fit the agents ``names`` (all known): a setting none of
    them declares (``agent=noop model=X``) would be dropped without a word, and the run would not be the one
    asked for. None when every given setting is one of theirs."""
    held = {s.name for n in names for s in agents[n].settings}
    extra = sorted(set(_settings_given(agents)) - held)
    if not extra:
        return None
    theirs = ", ".join(sorted(held)) or "none"
    return (f"{', '.join(f'{e}=' for e in extra)} is not a setting of {' or '.join(repr(n) for n in names)} "
            f"(its settings: {theirs}); leave it out, or pick an agent that declares it")


def _agent_problem(name: str, agents: dict, runs: dict, problem: str | None, settings: bool = True) -> str | None:
    """Why ``agent=name`` cannot run here (a broken agents.toml, an unknown agent, a setting given that the
    agent does not declare (unless not ``settings``), a setting or a variable without a value)."""
    if problem:
        return problem
    if name not in agents:
        return f"unknown agent {name!r}; agents defined in evals/agents.toml: {', '.join(sorted(agents))}"
    unused = _settings_unused([name], agents) if settings else None
    if unused:
        return unused
    if isinstance(runs[name], str):
        return runs[name]
    try:
        runs[name][0].environment()
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


def _definition_stamp(agent, run: str) -> Path:
    """Write the definition of ``agent`` (with its settings' values) to ``.lab/agents/<run>.json`` when it
    changed; return the path (the file_dep that redoes a run's trials exactly when its definition changes)."""
    path = STATE / "agents" / f"{run}.json"
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
    if _TIER_STEPS_ONLY:
        return None  # `doit gen:...`: no agent, trial or report task is needed
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


def _build_agent_on(name: str, base: str) -> None:
    from rules import images
    from rules.agents import get_agent

    try:
        stamp = images.build_agent(get_agent(name), base=base)
    except ConfigError as exc:
        return TaskFailed(str(exc))
    except Exception as exc:  # noqa: BLE001 - SandboxError: say which agent and base, and what to do
        return TaskFailed(f"the {name} agent's image does not build FROM {base} (the swe task's environment "
                          f"image): {exc}; an agent whose install needs another Python than that image's cannot "
                          "run on these tasks")
    print(f"agent image {stamp['image']} {stamp['id'][:19]}")
    return None


def _swe_envs() -> dict[str, str]:
    """The environment images of the swe tier's published tasks (env name → tag); none without the tier."""
    from rules.config import EVALS

    if not (EVALS / "swe" / "suite.toml").is_file():
        return {}
    from rules.swerun import published_envs  # after the check: a home without the tier never imports it

    try:
        return published_envs(load_suite("swe"), _published("swe"))
    except ConfigError:
        return {}


def task_agent_image_swe():
    """Build each agent's image FROM each swe environment image in use (agent_image_swe:<agent>@<env>).

    So the agent runs the repository's own tests with ``{test_cmd}``."""
    if _TIER_STEPS_ONLY:
        return None  # `doit gen:...`: no agent, trial or report task is needed
    from rules import images
    from rules.sandbox import image_id_quick

    agents, _ = _agents()
    envs = _swe_envs()
    for env, base in envs.items():
        base_id = image_id_quick(base) or ""
        for name, agent in agents.items():
            try:
                template = [agent.template_path()]
            except ConfigError:
                template = []
            stamp = images.agent_stamp_name(agent, base)
            yield {
                "name": f"{name}@{env}",
                "actions": [(_build_agent_on, [name, base])],
                "file_dep": template,
                "targets": [images.stamp_path(stamp)],
                "uptodate": [config_changed({"image": agent.image, "build": dict(agent.build), "tag": agent.tag(base),
                                             "base_id": base_id}),
                             lambda s=stamp: images.stamp_current(s)],
                "doc": f"build the {name} agent's image FROM {base}",
            }


def _build_service(agent_name: str, base_image: str) -> None:
    from rules import images
    from rules.agents import get_agent

    try:
        stamp = images.build_service(get_agent(agent_name).service, base_image)
    except ConfigError as exc:
        return TaskFailed(str(exc))
    print(f"service image {stamp['image']} {stamp['id'][:19]} (built in {stamp['seconds']:.0f} s)")
    return None


def task_service_image():
    """Build each service image agents declare (e.g. a local model server).

    Built FROM the Debian base image:
    ``service_image:service-<name>-<digest>``; agents that declare the same service share one image."""
    if _TIER_STEPS_ONLY:
        return None  # `doit gen:...`: no agent, trial or report task is needed
    from rules import images

    agents, _ = _agents()
    base_image = load_suite("aider").base_image
    seen = set()
    for name, agent in agents.items():
        service = agent.service
        if service is None or service.stamp_name in seen:
            continue
        seen.add(service.stamp_name)
        try:
            template = [service.template_path()]
        except ConfigError:
            template = []  # the build action reports the missing template
        yield {
            "name": service.stamp_name,
            "actions": [(_build_service, [name, base_image])],
            "file_dep": template,
            "targets": [images.stamp_path(service.stamp_name)],
            "uptodate": [config_changed({"build": dict(service.build), "tag": service.tag(), "base_image": base_image}),
                         lambda s=service.stamp_name: images.stamp_current(s)],
            "doc": f"build the service image {service.tag()}",
        }


def _trial(tier: str, agent: str, task: str, folders: list[str], since: float, tries: int, settings: dict,
           repeat: int, run: str, backend: str = "local", cluster: str | None = None):
    from rules.backends import BackendError
    from rules.runs import eval_trial

    try:
        eval_trial(tier, agent, task, folders, since, tries, settings=settings, repeat=repeat, run=run,
                   backend=backend, cluster=cluster)
    except (ConfigError, BackendError) as exc:
        return TaskFailed(str(exc))
    return None


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


def _current(tier: str, agent: str, task: str, tries: int, settings: dict, repeat: int, run: str) -> bool:
    """doit's up-to-date check of a trial: the same ``trial_state`` that ``eval_trial`` and the report use
    (an image rebuild that changes the grader re-grades; one that changes nothing the key holds is nothing)."""
    from rules.runs import trial_uptodate

    try:
        return trial_uptodate(tier, agent, task, tries, settings, repeat, run)
    except ConfigError:
        return False  # the action reports it


def _whole(name: str, default: int) -> int:
    raw = get_var(name, default)
    try:
        value = int(raw)
    except (TypeError, ValueError):
        value = 0
    if value < 1:
        raise SystemExit(f"{name}={raw}: give a whole number, 1 or more")
    return value


def _asked(basename: str) -> list[str]:
    """The ``<basename>:<name>`` arguments of this command line (doit keeps the positional arguments nowhere a
    creator can read, so they come from ``sys.argv``)."""
    return [a.split(":", 1)[1] for a in sys.argv[1:] if a.startswith(f"{basename}:") and "=" not in a]


def task_eval():
    """Run an agent over a tier's published tasks (eval:<run>, eval:<run>/<task>), without the report.

    ``eval:<run>`` (every trial), ``eval:<run>/<task>``
    (one); the run is the agent with its settings' values (``eval:aider model=X``: run ``aider.X``);
    ``tries=N`` (default 2), ``repeat=N`` (each trial N times: ``<task>``, ``<task>@2``, ...), ``backend=ray
    cluster=HOST:PORT`` (trials on a Ray cluster; ``jobs=N`` trials in flight). A trial whose
    result is an ``error`` runs again next time; one whose grading alone changed (check.sh, grader image,
    grading limits) is re-graded without the agent."""
    if _TIER_STEPS_ONLY:
        return None  # `doit gen:...`: no agent, trial or report task is needed
    from rules import images
    from rules.trial import trial_folder

    tier = _suite_var()
    suite = load_suite(tier)
    agents, problem = _agents()
    runs = _runs(tier, agents)
    tasks = _published(tier)
    if tier == "swe":
        yield from _swe_eval(suite, agents, runs, problem, tasks)
        return
    for name in ("agents", "attempts"):
        if get_var(name) is not None:
            raise SystemExit(f"{name}= is the swe tier's (retry until plausible): add suite=swe, or give "
                             "agent=NAME alone for this tier")
    tries, repeat = _whole("tries", TRIES), _whole("repeat", 1)
    backend, cluster = _backend()
    since = time.time()
    files = {t: files_below(os.path.join(suite.tasks_dir, t)) for t in tasks} if agents else {}
    settings = config_changed({"tries": tries, "grade_limits": repr(suite.prove), "grader": images.GRADER})
    names: set[str] = set()
    for name, found in runs.items():
        if isinstance(found, str):  # a setting without a value: `doit eval:<agent>` says which
            names.add(name)
            yield {"name": name, "actions": [(_fail, [found])], "doc": f"run {name} (needs: {found})"}
            continue
        agent, run = found
        names.add(run)
        # the agent image is a task_dep, not a file_dep: rebuilding it (e.g. on a new grader image) changes
        # nothing a trial's key holds; whether a trial is current is trial_state's call alone (W3)
        deps = [str(_definition_stamp(agent, run))]
        folders = [trial_folder(t, k) for t in tasks for k in range(1, repeat + 1)]
        # the service's image (e.g. a model server) is built before the trials that use it
        builds = [f"agent_image:{name}"] + ([f"service_image:{agent.service.stamp_name}"] if agent.service else [])
        for task in tasks:
            for k in range(1, repeat + 1):
                folder = trial_folder(task, k)
                result = os.path.join(suite.runs_dir, run, folder, "result.json")
                names.add(f"{run}/{folder}")
                yield {
                    "name": f"{run}/{folder}",
                    "actions": [(_trial, [tier, name, task, folders, since, tries, dict(agent.values), k, run,
                                          backend, cluster])],
                    "file_dep": files[task] + deps,
                    "task_dep": builds,
                    "targets": [result],
                    "uptodate": [settings, (_current, [tier, name, task, tries, dict(agent.values), k, run])],
                    "doc": f"trial of {agent.label} on {folder}",
                }
        yield {
            "name": run,
            "actions": None,
            "task_dep": [f"eval:{run}/{f}" for f in folders],
            "doc": f"run {agent.label} over the {tier} tier ({len(tasks)} tasks"
                   + (f", {repeat} times)" if repeat > 1 else ")"),
        }
        if run != name:
            names.add(name)  # `doit eval:aider model=X` runs aider.X
            yield {"name": name, "actions": None, "task_dep": [f"eval:{run}"], "doc": f"run {agent.label}"}
    for asked in _asked("eval"):
        if asked not in names:
            names.add(asked)
            yield {"name": asked, "doc": "an unknown agent, run or trial",
                   "actions": [(_fail, [_unknown_eval(asked, agents, runs, problem, tasks, suite.runs_dir)])]}


# ---- the swe tier's runs: attempts across agents (rules/swerun.py) ----

def _swe_attempts() -> int:
    """``attempts=N`` (default 1); and ``tries=`` other than 1 stops the command: a swe attempt never gets a
    second try fed with test output, which would come from the held-out tests."""
    raw = get_var("tries")
    if raw not in (None, "1"):
        raise SystemExit(f"tries={raw}: the swe tier makes one try per attempt (the held-out tests' output is never "
                         "shown to an agent); retry from a fresh work tree with attempts=N")
    return _whole("attempts", 1)


def _swe_plans(agents: dict, runs: dict, attempts: int) -> dict:
    """The swe runs this command can make: agent name → (run id, [agent]) for each agent, and ``"agents"`` →
    (run id, [agents]) for ``agents=a,b`` (they take turns); a run that cannot be made maps to its one-line
    reason."""
    from rules.swerun import run_of

    plans: dict = {}
    for name, found in runs.items():
        if isinstance(found, str):
            plans[name] = found
        else:
            plans[name] = (found[1] if attempts == 1 else run_of([found[0]], attempts)[0], [found[0]])
    asked = get_var("agents")
    if asked:
        names = [n.strip() for n in asked.split(",") if n.strip()]
        problems = [_agent_problem(n, agents, runs, None, settings=False) for n in names]
        problems = [p for p in problems if p]
        if not problems and names:  # a setting is fine when one of the agents taking turns declares it
            problems = [p for p in [_settings_unused(names, agents)] if p]
        if not names:
            plans["agents"] = "agents=: give the agents that take turns, e.g. agents=aider-a,aider-b"
        elif problems:
            plans["agents"] = f"agents={asked}: {problems[0]}"
        else:
            chosen = [runs[n][0] for n in names]
            plans["agents"] = (run_of(chosen, attempts)[0], chosen)
    return plans


def _swe_trial(spec: list, task: str, folders: list[str], since: float, attempts: int, run: str, repeat: int,
               backend: str, cluster: str | None):
    from rules.backends import BackendError
    from rules.swerun import eval_swe_trial

    try:
        eval_swe_trial(spec, task, folders, since, attempts, run, repeat, backend, cluster)
    except (ConfigError, BackendError) as exc:
        return TaskFailed(str(exc))
    return None


def _swe_current(spec: list, task: str, attempts: int, run: str, repeat: int) -> bool:
    from rules.swerun import swe_trial_uptodate

    try:
        return swe_trial_uptodate(spec, task, attempts, run, repeat)
    except ConfigError:
        return False  # the action reports it


def _swe_eval(suite: Suite, agents: dict, runs: dict, problem: str | None, tasks: list[str]):
    """``eval:<run>`` and ``eval:<run>/<task>`` of the swe tier: ``agent=NAME`` or ``agents=A,B``,
    ``attempts=N``, ``repeat=N``, ``backend=``. A trial needs its agents' images built FROM its task's
    environment image (``agent_image_swe:<agent>@<env>``)."""
    from rules.trial import trial_folder

    attempts, repeat = _swe_attempts(), _whole("repeat", 1)
    backend, cluster = _backend()
    since = time.time()
    plans = _swe_plans(agents, runs, attempts)
    files = {t: files_below(os.path.join(suite.tasks_dir, t)) for t in tasks} if agents else {}
    envs = {t: (read_json(suite.tasks_dir / t / "task.json") or {}).get("env") for t in tasks}
    settings = config_changed({"attempts": attempts, "grade_limits": repr(suite.prove)})
    names: set[str] = set()
    for key, plan in plans.items():
        if isinstance(plan, str):
            names.add(key)
            yield {"name": key, "actions": [(_fail, [plan])], "doc": f"run {key} (needs: {plan})"}
            continue
        run, chosen = plan
        if run in names:
            continue
        names.add(run)
        spec = [(a.name, dict(a.values)) for a in chosen]
        deps = [str(_definition_stamp(a, a.run)) for a in chosen]
        services = [f"service_image:{a.service.stamp_name}" for a in chosen if a.service]
        folders = [trial_folder(t, k) for t in tasks for k in range(1, repeat + 1)]
        for task in tasks:
            builds = [f"agent_image_swe:{a.name}@{envs[task]}" for a in chosen] + services
            for k in range(1, repeat + 1):
                folder = trial_folder(task, k)
                names.add(f"{run}/{folder}")
                yield {
                    "name": f"{run}/{folder}",
                    "actions": [(_swe_trial, [spec, task, folders, since, attempts, run, k, backend, cluster])],
                    "file_dep": files[task] + deps,
                    "task_dep": builds,
                    "targets": [os.path.join(suite.runs_dir, run, folder, "result.json")],
                    "uptodate": [settings, (_swe_current, [spec, task, attempts, run, k])],
                    "doc": f"swe trial of {' + '.join(a.label for a in chosen)} on {folder}",
                }
        yield {"name": run, "actions": None, "task_dep": [f"eval:{run}/{f}" for f in folders],
               "doc": f"run {' + '.join(a.label for a in chosen)} over the swe tier ({len(tasks)} tasks, "
                      f"{attempts} attempt(s))"}
        if key not in (run, "agents"):
            names.add(key)
            yield {"name": key, "actions": None, "task_dep": [f"eval:{run}"], "doc": f"run {key}"}
    for asked in _asked("eval"):
        if asked not in names:
            names.add(asked)
            yield {"name": asked, "doc": "an unknown agent, run or trial",
                   "actions": [(_fail, [_unknown_eval(asked, agents, runs, problem, tasks, suite.runs_dir)])]}


def _unknown_eval(asked: str, agents: dict, runs: dict, problem: str | None, tasks: list[str],
                  runs_dir: Path) -> str:
    """The one line for ``doit eval:<asked>`` when no such agent, run or trial exists: the known agents and
    runs (this command's and those with results)."""
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
    other = sorted((here | on_disk) - set(agents))
    return (f"eval:{asked}: unknown agent or run {run!r}; agents (evals/agents.toml): "
            f"{', '.join(sorted(agents)) or 'none'}" + (f"; other runs: {', '.join(other)}" if other else "")
            + " (an agent with settings takes them on the command line: eval:aider model=NAME)")


def _regrade(tier: str, agent: str | None):
    from rules.sandbox import SandboxError
    from rules.trial import regrade_agent

    if not agent:
        return TaskFailed("regrade needs agent=NAME (the agent whose stored trials are graded again)")
    if tier == "swe":
        return TaskFailed("the swe tier re-grades by itself: `doit run suite=swe agent=NAME` (or agents=... "
                          "attempts=N) grades the kept attempts again when only the held-out grading changed")
    try:
        counts = regrade_agent(tier, agent)
    except (ConfigError, SandboxError) as exc:
        return TaskFailed(str(exc))
    print(f"[{agent}] re-graded {counts['regraded']} trials ({counts['changed']} changed outcome), "
          f"{counts['rerun']} need a run (`doit run agent={agent}`), {counts['skipped']} skipped (errors)")
    return None


def task_regrade():
    """Grade an agent's stored trials again without running it (regrade agent=NAME).

    Every stored trial of ``agent=NAME`` is graded with the grader image as it is now (``doit image``
    rebuilds it) and the tasks' check.sh, without running the agent (``suite=`` picks the tier); results are
    rewritten with ``graded.regraded`` true."""
    if _TIER_STEPS_ONLY:
        return None  # `doit gen:...`: no agent, trial or report task is needed
    tier = _suite_var()
    return {"actions": [(_regrade, [tier, get_var("agent")])], "uptodate": [False], "verbosity": 2}


def _report(tier: str) -> None:
    from rules import sandbox
    from rules.report import write_report

    # an agent box idles until removed: a run killed by Ctrl-C leaves its boxes up; the report (the end of every
    # `doit run` and `doit report`) removes those of runs that are provably gone
    if sandbox.boxes_left():
        sandbox.cleanup()
    write_report(tier)


def _fail(message: str):
    return TaskFailed(message)


def task_report():
    """Write the comparison report of every run with results (suite=aider|swe; agent=NAME runs it first).

    ``agent=NAME`` (with its settings, e.g. ``model=X``)
    first runs that agent's trials (so ``doit run agent=NAME`` runs, then reports)."""
    if _TIER_STEPS_ONLY:
        return None  # `doit gen:...`: no agent, trial or report task is needed
    tier = _suite_var()
    agent = get_var("agent")
    task = {"actions": [(_report, [tier])], "uptodate": [False], "verbosity": 2,
            "doc": "write evals/<tier>/report.{md,json,html} (agent=NAME runs that agent first)"}
    if tier == "swe" and (agent or get_var("agents")):
        agents, problem = _agents()
        runs = _runs(tier, agents) if not problem else {}
        key = "agents" if get_var("agents") else agent
        problem = problem or (_agent_problem(agent, agents, runs, None) if key == agent else None)
        plan = problem or _swe_plans(agents, runs, _swe_attempts())[key]
        if isinstance(plan, str):
            task["actions"] = [(_fail, [plan])]
        else:
            task["task_dep"] = [f"eval:{plan[0]}"]
    elif agent == "":
        task["actions"] = [(_fail, ["agent=: give the name of an agent in evals/agents.toml (agent=noop); nothing "
                                    "was run"])]
    elif agent:
        agents, problem = _agents()
        runs = _runs(tier, agents) if not problem else {}
        selection = [f"{n}=" for n in ("langs", "limit", "all") if get_var(n) is not None]
        if problem:  # agents.toml itself: about every agent, not the one asked for
            task["actions"] = [(_fail, [f"{problem}; nothing was run"])]
        elif selection:
            task["actions"] = [(_fail, [f"{', '.join(selection)} choose what `doit gen:{tier}` proves and publishes; "
                                        f"a run covers every published task ({len(_published(tier))} here): leave "
                                        f"{'them' if len(selection) > 1 else 'it'} out, or publish fewer tasks first "
                                        "(README.md, Commands); nothing was run"])]
        elif (problem := _agent_problem(agent, agents, runs, None)):
            # `doit run agent=X` runs the report task: the message says what was asked, not "report"
            task["actions"] = [(_fail, [f"agent={agent}: {problem}; nothing was run"])]
        else:
            task["task_dep"] = [f"eval:{runs[agent][1]}"]
    return task
