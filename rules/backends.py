"""Where a trial runs: on this machine (``local``) or on a node of a Ray cluster (``ray``), through one seam.

The driver (the ``doit`` process) turns a ``rules.trial.Trial`` into a ``TrialSpec``: plain data a node can
use anywhere (the task folder as a tar, the agent definition with its settings' values, the limits, the tries,
the image tags and the ids the driver has, lab's version, and the values of the variables the agent passes
through). No host path crosses the seam. The executor (``execute``, on this machine or on a node) lays its
own scratch folder (the task, the record folder, the trial's scratch), runs ``rules.trial.run_trial`` against
its own Docker engine and returns a ``TrialRecord``: the result (result.json's data) and every file of the
record folder as bytes. The driver writes them into the run folder (``write_record``: result.json last, the
folder swapped in whole), so resume, ``trial_state``, re-grading and the report are the same for both.
The local backend runs that same path in the calling thread, so the ordinary Docker tests cover it.

Before the first trial every node is checked (``check_nodes``, given every image the command's trials need,
agents' and environments'; ``Backend.check``): its engine answers, each image is there with the driver's id,
lab is the same version; a node that fails is named with the image and the fix, and the command stops. An
image no check has covered yet (one built later in the command) is checked on every node before the first
trial that uses it. Containers a dead trial left behind are removed on every node (``sandbox.cleanup`` run
there), and so are its scratch folders (``clean_scratch``). What a tier measures on a trial's work beyond its
grading (the swe tier's plausibility) runs where the trial ran, after it (``Trial.followup``), and its files
come back with the record.

Ray (``pip install 'lab[ray]'``): each trial is one Ray task asking for the CPUs and memory its limits need
(the larger of the agent's and the grader's), re-run once on another node when its node dies
(``max_retries=1``; an exception is never retried: a trial that errors stays ``error``). The driver must run
on a node of the cluster and requires ``RAY_AUTH_MODE=token``; usage reporting is turned off
(``RAY_USAGE_STATS_ENABLED=0``). The secret values travel in the task's arguments, in memory (a small
argument of its own, inlined in the task, never put in Ray's object store, which may spill to disk); they
are never in a log or a file: ``TrialSpec``'s repr leaves them out and the record is redacted by run_trial.

This module imports neither docker nor doit (``rules.sandbox`` does the engine's part).
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import io
import os
import shutil
import socket
import tarfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping

from rules import disk, sandbox
from rules.agents import Agent
from rules.config import STATE, TEMPLATES, Limits
from rules.files import read_json, replace_tree, sha256_bytes, write_atomic, write_json
from rules.records import now
from rules.trial import Trial, run_trial, trial_folder, write_result

BACKENDS = ("local", "ray")
RECORD_FORMAT = 1  # version of TrialSpec / TrialRecord (the driver and the nodes run the same lab anyway)
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0"}  # set in the driver before Ray is imported


class BackendError(Exception):
    """A backend cannot serve (no cluster, a node without the images, another lab); the message names the
    node and the fix."""


@dataclass(frozen=True)
class TrialSpec:
    """What a node needs to run one trial, as picklable data with no host path. ``task_files``: the task folder as an
    uncompressed tar (``pack_folder``); ``task``: its name; ``run``, ``repeat``: where the record goes in the
    driver's run folder; ``images``: the driver's image ids ``{"agent": id, "grader": id}`` (what the node check
    compares); ``lab_version``: ``lab_version()`` on the driver; ``origin``: 12 hex digits of the SHA-256 of the
    driver's host name and trial folder (so two drivers never share a node's scratch folder, and one trial always
    gets the same one); ``env``: the driver's values of the variables the agent passes through (``env`` and
    ``env_optional``), the only secrets; left out of repr, never written anywhere."""

    agent: Agent
    task: str
    task_files: bytes
    run: str
    repeat: int
    tries: int
    agent_image: str
    grader_image: str
    grade_limits: Limits
    images: dict
    lab_version: str
    origin: str = ""  # a digest naming the driver's trial folder: one trial, one scratch folder on a node
    env: dict = field(default_factory=dict, repr=False)
    followup: tuple | None = None  # the Trial's ``followup``: (a module-level function, its keyword arguments)

    def resources(self) -> tuple[float, int]:
        """(CPUs, memory bytes) a trial holds on a node: the larger of the agent's and the grader's limits
        (its containers run one at a time)."""
        return (max(self.agent.limits.cpus, self.grade_limits.cpus),
                max(self.agent.limits.memory, self.grade_limits.memory))


@dataclass
class TrialRecord:
    """What a node sends back: ``result`` (result.json's data), ``files`` (path relative to the record
    folder → bytes: logs, prompts, out files, work archives, work.diff; result.json not among them) and
    ``node`` (the node's name: ``LAB_NODE`` there, else its host name)."""

    result: dict
    files: dict[str, bytes]
    node: str


# ---- both sides ----

_version: str | None = None


def lab_version() -> str:
    """lab's version here: the package version and a digest of lab's code (``rules/*.py``) and templates, e.g.
    ``0.1.0+3f2a9c0b1d4e``. Two machines with the same value run the same lab."""
    global _version
    if _version is None:
        rules_dir = Path(__file__).resolve().parent
        h = hashlib.sha256()
        files = [(f"rules/{p.name}", p) for p in sorted(rules_dir.glob("*.py"))]
        files += [(f"templates/{p.relative_to(TEMPLATES).as_posix()}", p) for p in sorted(TEMPLATES.rglob("*"))
                  if p.is_file() and "__pycache__" not in p.parts]
        for name, p in files:
            h.update(f"{name}\0{sha256_bytes(p.read_bytes())}\n".encode())
        try:
            from importlib.metadata import version
            v = version("lab")
        except Exception:  # noqa: BLE001 - not installed (PYTHONPATH): the digest alone tells
            v = "0"
        _version = f"{v}+{h.hexdigest()[:12]}"
    return _version


def node_name() -> str:
    """This node's name: ``LAB_NODE`` when set (a label given when the node was started), else the host name."""
    return os.environ.get("LAB_NODE") or socket.gethostname()


def pack_folder(folder: Path) -> bytes:
    """The folder as an uncompressed tar (regular files and folders with their modes, sorted; mtimes and owners
    zeroed, so one folder gives one byte string). Raises BackendError on a symlink or special file."""
    buf = io.BytesIO()
    folder = Path(folder)
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for root, dirs, files in os.walk(folder, followlinks=False):
            dirs.sort()
            for name in sorted(dirs) + sorted(files):
                p = Path(root) / name
                info = tar.gettarinfo(str(p), arcname=p.relative_to(folder).as_posix())
                if not (info.isfile() or info.isdir()):
                    raise BackendError(f"{p}: a task folder holds only files and folders")
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                if info.isfile():
                    with open(p, "rb") as f:
                        tar.addfile(info, f)
                else:
                    tar.addfile(info)
    return buf.getvalue()


def unpack_folder(data: bytes, dest: Path) -> None:
    """Lay a ``pack_folder`` tar into ``dest`` (created); no member can land outside it."""
    Path(dest).mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        tar.extractall(dest, filter="data")


# ---- the executor (this machine or a node) ----

def scratch_root() -> Path:
    """Where an executor lays its trials' scratch folders: ``.lab/trials`` of the lab on this machine."""
    return STATE / "trials"


def execute(spec: TrialSpec) -> TrialRecord:
    """Run the trial ``spec`` here: lay the task, a record folder and the scratch in the trial's folder below
    ``scratch_root()`` (``<run>/<task>[@k].<origin>``), run ``rules.trial.run_trial`` against this machine's engine
    (with ``spec.env`` as the only environment the agent's variables come from), and return its record. The folder
    is removed after. A trial that cannot run gives a result with status ``error`` (run_trial's rules); raises
    BackendError only when this lab is another version than the driver's."""
    if spec.lab_version != lab_version():
        raise BackendError(f"node {node_name()} runs lab {lab_version()}, the driver {spec.lab_version}: "
                           "install the driver's lab there")
    # one folder per trial (and driver): what a killed run left here is wiped by the trial's next run (its
    # disk-capped scratch is unmounted by rules.disk), as the local scratch always was
    base = scratch_root() / spec.run / f"{trial_folder(spec.task, spec.repeat)}.{spec.origin or 'local'}"
    try:
        task_dir, record_dir = base / "task" / spec.task, base / "record"
        shutil.rmtree(base / "task", ignore_errors=True)
        shutil.rmtree(record_dir, ignore_errors=True)
        write_json(base / OWNER, sandbox.run_labels())  # who runs here: clean_scratch tells a dead one
        unpack_folder(spec.task_files, task_dir)
        t = Trial(agent=spec.agent, task_dir=task_dir, run_dir=record_dir, scratch=base / "scratch",
                  agent_image=spec.agent_image, grader_image=spec.grader_image, grade_limits=spec.grade_limits,
                  tries=spec.tries, run=spec.run, repeat=spec.repeat)
        result = run_trial(t, environ=dict(spec.env))
        if spec.followup is not None:  # e.g. the swe tier's plausibility: on this node's engine, as the trial was
            fn, kwargs = spec.followup
            fn(task_dir, record_dir, result, base / "followup", **kwargs)
        files = {}
        for folder, _dirs, names in os.walk(record_dir):
            for name in names:
                p = Path(folder) / name
                rel = p.relative_to(record_dir).as_posix()
                if rel != "result.json" and p.is_file() and not p.is_symlink():
                    files[rel] = p.read_bytes()
        return TrialRecord(result=result, files=files, node=node_name())
    finally:
        if not os.path.ismount(base / "scratch"):  # run_trial unmounted it; else leave it to the next run
            shutil.rmtree(base, ignore_errors=True)


OWNER = ".owner.json"  # in a trial's scratch folder: the run labels of the process running it


def clean_scratch(root: Path | None = None) -> int:
    """Remove the trial folders below ``root`` (default ``scratch_root()``) whose executor is provably gone
    (its run labels in ``.owner.json``, judged as ``sandbox.cleanup`` judges containers), unmounting a
    disk-capped scratch left mounted. Returns how many were removed."""
    root = Path(root or scratch_root())
    removed = 0
    for owner in sorted(root.glob(f"*/*/{OWNER}")):
        labels = read_json(owner, {})
        if not isinstance(labels, dict) or sandbox.owner_alive(labels):
            continue
        base = owner.parent
        if os.path.ismount(base / "scratch"):
            disk.umount(base / "scratch")
        shutil.rmtree(base, ignore_errors=True)
        removed += 1
    return removed


def node_report(images: Mapping[str, str]) -> dict:
    """What the node check needs from this node: ``{"node", "lab_version", "engine" ("" when it answers, else
    why not), "images" {tag: id or None}, "toolchains" {tag: the lab.toolchains label}, "cleaned" (containers
    of dead trials removed here), "scratch_cleaned" (their scratch folders), "host"}``. ``images``: the tags to
    look up."""
    out = {"node": node_name(), "host": socket.gethostname(), "lab_version": lab_version(), "engine": "",
           "images": {}, "toolchains": {}, "cleaned": 0, "scratch_cleaned": clean_scratch()}
    try:
        sandbox.client()
        out["cleaned"] = sandbox.cleanup(only_dead_owners=True)
        for tag in images:
            out["images"][tag] = sandbox.image_id(tag)
            out["toolchains"][tag] = sandbox.image_labels(tag).get("lab.toolchains", "") if out["images"][tag] else ""
    except sandbox.SandboxError as exc:
        out["engine"] = str(exc)
    return out


def check_reports(reports: list[dict], expected: Mapping[str, str], version: str) -> list[str]:
    """The problems of each node report (``node_report``) against the driver's image ids ``expected`` ({tag:
    id}) and lab ``version``: one line per node and problem, naming the fix; [] when every node can serve."""
    problems = []  # an image the driver itself lacks (id "") is not checked: each trial reports it
    for r in reports:
        node = r.get("node") or "?"
        where = f"node {node} ({r.get('host')})" if r.get("host") and r.get("host") != node else f"node {node}"
        if r.get("error"):
            problems.append(f"{where}: the check did not run there: {r['error']}")
            continue
        if r.get("lab_version") != version:
            problems.append(f"{where}: lab {r.get('lab_version')} there, {version} here: install this lab there "
                            "(the same commit, e.g. `git checkout <commit> && bash .ci/setup`)")
        if r.get("engine"):
            problems.append(f"{where}: {r['engine']}")
            continue
        missing = []
        for tag, want in expected.items():
            have = (r.get("images") or {}).get(tag)
            if have == want or not want:  # an image the driver lacks: each trial says so, as in a local run
                continue
            if not have:
                missing.append(tag)
            else:
                problems.append(f"{where}: image {tag} is {have[:19]} there, {want[:19]} here (another build; "
                                f"a result graded with another grader id is not this run's): {_fix(node, [tag])}")
        if missing:  # one line for the node, however many images it lacks
            what = f"image {missing[0]} is" if len(missing) == 1 else f"{len(missing)} images are"
            names = "" if len(missing) == 1 else f" ({', '.join(missing)})"
            problems.append(f"{where}: {what} missing{names}: {_fix(node, missing)}")
    return problems


def _fix(node: str, tags: list[str]) -> str:
    """How to give ``node`` the driver's ``tags``."""
    return (f"`docker save {' '.join(tags)} | ssh <{node}> docker load` from this machine (the same id there), or "
            f"build {'it' if len(tags) == 1 else 'them'} on that node and on this one from the same lab")


# ---- the driver ----

def make_spec(t: Trial, images: Mapping[str, str], environ: Mapping[str, str] = os.environ) -> TrialSpec:
    """The ``TrialSpec`` of ``t`` (on the driver): the task folder packed, the agent's passed-through
    variables' values from ``environ``, the driver's image ids ``images`` ({"agent": id, "grader": id})."""
    names = t.agent.env + t.agent.env_optional
    origin = hashlib.sha256(f"{socket.gethostname()}\0{Path(t.run_dir).resolve()}".encode()).hexdigest()[:12]
    return TrialSpec(agent=t.agent, task=t.task_dir.name, task_files=pack_folder(t.task_dir),
                     run=t.run or t.agent.run, repeat=t.repeat, tries=t.tries, agent_image=t.agent_image,
                     grader_image=t.grader_image, grade_limits=t.grade_limits, images=dict(images),
                     lab_version=lab_version(), origin=origin,
                     env={n: environ[n] for n in names if environ.get(n)}, followup=t.followup)


def write_record(run_dir: Path, record: TrialRecord, backend: str) -> dict:
    """Write ``record`` as the trial folder ``run_dir``: every file, then result.json (with ``backend``:
    ``{"name": backend, "node": record.node}``), in a staging folder beside it that then replaces the old
    folder whole (``files.replace_tree``); a driver killed midway leaves the old folder as it was. No file
    can land outside ``run_dir``. Returns the result as written."""
    run_dir = Path(run_dir)
    staging = run_dir.with_name(f".{run_dir.name}.incoming")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for rel, data in record.files.items():
        dest = (staging / rel).resolve()
        if os.path.commonpath([staging.resolve(), dest]) != str(staging.resolve()) or rel.startswith("/"):
            raise BackendError(f"a trial record names a file outside its folder: {rel!r}")
        write_atomic(staging / rel, data)
    result = write_result(staging, {**record.result, "backend": {"name": backend, "node": record.node}})
    replace_tree(staging, run_dir)
    return result


def error_result(t: Trial, message: str, backend: str, node: str = "") -> dict:
    """The result of a trial whose executor never answered (its node died twice, the cluster went away):
    status ``error``, ``error_kind`` "infrastructure" (retried by the next run), no tries."""
    result = t.new_result(read_json(t.task_dir / "task.json") or {})
    result.error, result.error_kind, result.finished = message, "infrastructure", now()
    result.started, result.backend = result.finished, {"name": backend, "node": node}
    return result.to_json()


class Backend:
    """Runs trials: ``open()`` (connect, check every node, clean dead trials' containers; once),
    ``on_each_node(fn)`` (fn() on every node → {node: value}), ``submit(spec)`` (a Future of a TrialRecord),
    ``close()``. ``name`` goes into result.json's ``backend``."""

    name = "?"

    def open(self, images: Mapping[str, str]) -> None:
        """Check every node against the driver's image ids ``images`` ({tag: id}) and lab version, removing
        containers of dead trials on each. Raises BackendError naming every node that cannot serve."""
        self.checked: dict[str, str] = {}
        self._check_lock = threading.Lock()
        self.check(images)

    def check(self, images: Mapping[str, str]) -> None:
        """Check every node for those of ``images`` ({tag: the driver's id}) not checked yet (an image a node
        was found to hold is not looked up again). Raises BackendError naming every node that cannot serve
        and the fix."""
        with self._check_lock:
            todo = {tag: i for tag, i in images.items() if self.checked.get(tag) != i}
            if not todo and hasattr(self, "nodes"):
                return
            reports = list(self.on_each_node(lambda: node_report(todo)).values())
            problems = check_reports(reports, todo, lab_version())
            if problems:
                raise BackendError(f"a node cannot serve trials: {problems[0]}" if len(problems) == 1 else
                                   "nodes that cannot serve trials:\n  " + "\n  ".join(problems))
            self.checked.update(todo)
            self.nodes = sorted(r["node"] for r in reports)

    def on_each_node(self, fn: Callable[[], object]) -> dict:
        raise NotImplementedError

    def submit(self, spec: TrialSpec) -> concurrent.futures.Future:
        raise NotImplementedError

    def close(self) -> None:
        pass


class LocalBackend(Backend):
    """This machine: ``execute`` in the calling thread (doit's ``jobs=`` threads run trials side by side)."""

    name = "local"

    def on_each_node(self, fn):
        return {node_name(): fn()}

    def submit(self, spec):
        f: concurrent.futures.Future = concurrent.futures.Future()
        try:
            f.set_result(execute(spec))
        except BaseException as exc:  # noqa: BLE001 - the caller's .result() raises it
            f.set_exception(exc)
        return f


def _ray():
    for k, v in RAY_ENV.items():
        os.environ.setdefault(k, v)
    try:
        import ray
    except ImportError:
        raise BackendError("backend=ray needs Ray: `pip install -e '.[ray]'` (the same Ray on every node)") from None
    return ray


def _execute_with_env(spec: TrialSpec, env: dict) -> TrialRecord:
    """The Ray task: ``spec`` travels without its secrets, ``env`` as a small argument of its own (Ray inlines
    small arguments in the task instead of its object store)."""
    return execute(replace(spec, env=env))


class RayBackend(Backend):
    """A Ray cluster at ``address`` (``HOST:PORT`` of its head; the driver must run on a node of it). Trials
    are Ray tasks placed by the CPUs and memory they ask for; a trial whose node dies is run once more
    elsewhere."""

    name = "ray"

    def __init__(self, address: str):
        self.address = address

    def connect(self) -> None:
        """Connect to the cluster (token authentication required). Raises BackendError saying how."""
        ray = _ray()
        if os.environ.get("RAY_AUTH_MODE") != "token":
            raise BackendError("backend=ray: set RAY_AUTH_MODE=token (and the cluster's token in RAY_AUTH_TOKEN or "
                               "~/.ray/auth_token) for the driver, and start the cluster with it: agent keys travel "
                               "to the nodes (README.md, Running on a cluster)")
        if not ray.is_initialized():
            try:
                ray.init(address=self.address, log_to_driver=False, logging_level="WARNING",
                         configure_logging=True)
            except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; all mean "no cluster there"
                raise BackendError(f"cannot connect to the Ray cluster at {self.address}: "
                                   f"{str(exc).strip().splitlines()[0][:300]} (start it with `ray start --head`, "
                                   "README.md, Running on a cluster)") from None
        self._run = ray.remote(_execute_with_env)

    def open(self, images):
        self.connect()
        super().open(images)

    def on_each_node(self, fn):
        ray = _ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        alive = [n for n in ray.nodes() if n.get("Alive")]
        task = ray.remote(fn)
        refs = {n["NodeID"]: task.options(num_cpus=0, max_retries=0, scheduling_strategy=
                                         NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote()
                for n in alive}
        out = {}
        for node_id, ref in refs.items():
            try:
                out[node_id] = ray.get(ref, timeout=300)
            except Exception as exc:  # noqa: BLE001 - a node that cannot answer is a node that cannot serve
                out[node_id] = {"node": node_id[:12], "error": str(exc).strip().splitlines()[-1][:300]}
        return out

    def submit(self, spec):
        cpus, memory = spec.resources()
        ref = self._run.options(num_cpus=cpus, memory=memory, max_retries=1, retry_exceptions=False).remote(
            replace(spec, env={}), dict(spec.env))
        return ref.future()

    def close(self):
        ray = _ray()
        if ray.is_initialized():
            ray.shutdown()


# ---- one backend per driver process ----

_lock = threading.Lock()
_open: dict[tuple[str, str], Backend | BackendError] = {}


def get_backend(name: str, address: str | None, images: Mapping[str, str]) -> Backend:
    """The backend ``name`` ("local" or "ray" at ``address``) of this process, opened (nodes checked, dead
    trials' containers removed) on first use; later calls return it at once. A backend that failed to open
    fails the same way for every later trial of the process. Raises BackendError."""
    key = (name, address or "")
    with _lock:
        if key not in _open:
            try:
                if name == "local":
                    backend: Backend = LocalBackend()
                elif name == "ray":
                    if not address:
                        raise BackendError("backend=ray needs cluster=HOST:PORT (the head node's address)")
                    backend = RayBackend(address)
                else:
                    raise BackendError(f"backend={name}: unknown; lab has {', '.join(BACKENDS)}")
                t0 = time.monotonic()
                backend.open(images)
                if name != "local":
                    print(f"{name} cluster at {address}: {len(backend.nodes)} nodes can serve "
                          f"({', '.join(backend.nodes)}), checked in {time.monotonic() - t0:.1f} s", flush=True)
                _open[key] = backend
            except BackendError as exc:
                _open[key] = exc
        found = _open[key]
    if isinstance(found, BackendError):
        raise found
    if name != "local":  # an image no earlier check covered: on every node before its first trial
        found.check(images)
    return found


def check_nodes(name: str, address: str | None, tags: list[str]) -> None:
    """Before the first trial of a command: open backend ``name`` (at ``address``) and check every node for
    every image tag in ``tags`` (the images the command's trials need: agents' and environments'), against the
    driver's ids. Nothing to check for the local backend. Raises BackendError naming each node that cannot
    serve, the image and the fix."""
    if name == "local":
        return
    get_backend(name, address, {tag: _image_id(tag) for tag in sorted(set(tags))})


_ids: dict[str, str] = {}


def _image_id(tag: str) -> str:
    """The driver's id of image ``tag`` ("" when missing), looked up once per process: the nodes are checked
    against it once, and each result records the ids its trial really used."""
    if tag not in _ids:
        _ids[tag] = sandbox.image_id_quick(tag) or ""
    return _ids[tag]


def run_through(t: Trial, backend: str = "local", address: str | None = None,
                environ: Mapping[str, str] = os.environ) -> dict:
    """Run trial ``t`` through ``backend`` and write its record to ``t.run_dir`` (``write_record``); returns the
    result. The driver's image ids are looked up here (once per process); a trial whose executor never answers (a
    node lost twice, the cluster gone) gets an ``error`` result (infrastructure). Raises BackendError when the
    backend cannot open, AgentError when a required variable is missing."""
    t.agent.environment(environ)  # a missing variable stops here, before anything is sent
    images = {tag: _image_id(tag) for tag in (t.agent_image, t.grader_image)}
    b = get_backend(backend, address, images)
    spec = make_spec(t, {"agent": images[t.agent_image], "grader": images[t.grader_image]}, environ)
    try:
        record = b.submit(spec).result()
    except BackendError:
        raise
    except Exception as exc:  # noqa: BLE001 - Ray's errors for a lost node or worker, after its retry
        msg = str(exc).strip().splitlines()
        why = (msg[-1] if msg else repr(exc))[:300]
        result = error_result(t, f"the trial's {b.name} executor did not answer: {why}", b.name)
        write_record(t.run_dir, TrialRecord(result=result, files={}, node=""), b.name)
        return read_json(t.run_dir / "result.json")
    key = record.result.get("key") or {}
    if key and key.get("run") != t.run_key():
        record.result.update(status="error", error_kind="infrastructure", error=(
            f"node {record.node} saw another trial (task, agent or its image template differ there: another "
            "lab?); not counted"))
    return write_record(t.run_dir, record, b.name)


__all__ = ["BACKENDS", "Backend", "BackendError", "LocalBackend", "RayBackend", "TrialRecord", "TrialSpec",
           "check_nodes", "check_reports", "error_result", "execute", "get_backend", "lab_version", "make_spec", "node_name",
           "node_report", "pack_folder", "run_through", "unpack_folder", "write_record"]
