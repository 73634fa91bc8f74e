"""The swe tier: SWE-bench-style tasks: a real repository at the commit before a fix, the issue text as the prompt,
held-out acceptance tests (FAIL_TO_PASS, PASS_TO_PASS) run only to score.

Source: a dataset file in the public SWE-bench layout (JSONL or a JSON array; ``FAIL_TO_PASS``/``PASS_TO_PASS`` as
JSON strings or lists) and one git repository per ``repo`` (a local clone under ``repos=DIR``, else cloned once
from GitHub into ``.lab/upstream/swe/``). Settings: ``evals/swe/suite.toml``.

A task (``evals/swe/tasks/<instance_id>/``): ``prompt.txt`` (the issue text; hints withheld), ``setup.sh`` (lays
``workspace.tar``, the tree at the base commit, as a fresh repository with that one commit: no history after it),
``holdout/test.patch`` (the held-out test change; never in a work tree), ``check.sh`` (lab's grading contract,
``templates/swe/check.sh.j2``) and ``task.json`` (its ``image``: the environment image of its repository and
version). The reference solution (``evals/swe/answers/<id>/``) is the gold patch's files.

Environments are lab's own table ``ENVS`` (``rules/tiers/swe/envs/``, one module per repository: Python, install steps, pins, recorded from a study of
these instances on this machine kind, evals/swe/NOTES.md): one image per (repository, version) group, built once and stamped.

Test identity: a SWE-bench test name ``path.py::Class::test[param]`` is the pytest node id; the JUnit report
pytest writes names it ``path.Class::test[param]`` (``junit_id``). sympy's names are bare function names; each
is looked up in the test files of the test patch (``sympy_id``).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from rules.config import STATE, Limits, Suite
from rules.files import read_json, write_atomic, write_json
from rules.records import Proof, TaskMeta
from rules.tier import Rejected, Unavailable
from rules.worktree import lay_work_tree, work_patch

TIER = "swe"
GROUPS = ("repo",)  # a task's labels: the repository of its instance
PYTHON = "/opt/lab/venv/bin/python"
PRETEST = "pretest.sh"  # a task's script for its pre-existing tests (never a held-out one), run by lab alone
INI_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
INI_SECTIONS = {"pytest.ini": "[pytest]", ".pytest.ini": "[pytest]", "pyproject.toml": "[tool.pytest.ini_options]",
                "tox.ini": "[pytest]", "setup.cfg": "[tool:pytest]"}


# ---- environments: lab's own table ----

from rules.tiers.swe.env import BUILD_TREE_SKIP, IMAGE_PREFIX, Env  # noqa: E402,F401  (one name for callers)


# The python3 each Debian suite ships (packages.debian.org: bullseye 3.9.2, bookworm 3.11.2, trixie 3.13.5); any
# other version comes from an interpreter folder (``pythons=DIR``).
DEBIAN_PYTHON = {"bullseye": "3.9", "bookworm": "3.11", "trixie": "3.13"}
# What a pyenv-built CPython links to besides libc (``ldd`` of its binary and of lib-dynload/*.so, 3.6.15 to 3.10.13
# here: OpenSSL 3, so the image is bookworm; tkinter's X11/Tk left out); ../shared/notes/swe-coverage.md, section 2
INTERPRETER_SUITE = "bookworm"
INTERPRETER_LIBS = ("libssl3", "libffi8", "libsqlite3-0", "zlib1g", "libbz2-1.0", "liblzma5", "libreadline8",
                    "libncursesw6", "libexpat1", "libnsl2", "libtirpc3", "libcrypt1")


def default_pythons() -> Path:
    """Where interpreters are looked for without ``pythons=``: pyenv's ``$PYENV_ROOT/versions`` (default
    ``~/.pyenv/versions``), whose layout is ``<dir>/<X.Y.Z>/bin/pythonX.Y``."""
    return Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"


def with_interpreter(env: Env, pythons: Path) -> Env:
    """``env`` itself when its Debian suite ships its Python; else ``env`` with the newest ``X.Y.Z`` folder of
    ``pythons`` for its ``X.Y`` (pyenv's layout; a folder holding ``bin/pythonX.Y``) as its interpreter, on
    bookworm. Raises Rejected (one line: the version, the folder looked in, the fix) when there is none."""
    if DEBIAN_PYTHON.get(env.suite) == env.python:
        return env
    found = []
    for d in pythons.iterdir() if pythons.is_dir() else ():
        parts = d.name.split(".")
        if (len(parts) == 3 and ".".join(parts[:2]) == env.python and all(x.isdigit() for x in parts)
                and (d / "bin" / f"python{env.python}").is_file()):
            found.append((tuple(int(x) for x in parts), d))
    if not found:
        raise Rejected(f"environment {env.name}: Python {env.python} is not Debian {env.suite}'s and {pythons} has no "
                       f"{env.python}.* interpreter (pyenv's layout: <DIR>/{env.python}.N/bin/python{env.python}): "
                       f"give pythons=DIR, a folder that has one, or install it (`pyenv install {env.python}`)")
    version, folder = max(found)
    return dataclasses.replace(env, suite=INTERPRETER_SUITE, interpreter=".".join(map(str, version)),
                               interpreter_dir=str(folder))


def interpreter_tar(folder: Path) -> bytes:
    """The interpreter ``folder`` as an uncompressed tar (modes and symlinks kept, byte code left out), laid at
    ``/opt/lab/python`` by the image's ``ADD``."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        tf.add(folder, arcname=".", filter=lambda m: None if "__pycache__" in m.name.split("/") else m)
    return buf.getvalue()


from rules.tiers.swe.envs import ENVS  # noqa: E402  (lab's table, one module per repository)
from rules.tiers.swe.runners import runner_for  # noqa: E402  (how an environment's tests run and are named)


def environments(suite: Suite | None = None) -> tuple[Env, ...]:
    """Lab's table ``ENVS`` with the ``[envs.<name>]`` tables of the tier's suite.toml laid over it (same name:
    replaced; new name: added; fields as ``Env``'s). Raises Rejected naming the table on a bad entry."""
    extra = (suite.table.get("envs") if suite else None) or {}
    out = {e.name: e for e in ENVS}
    for name, raw in extra.items():
        try:
            out[name] = Env(
                name=name, repo=str(raw["repo"]), versions=tuple(str(v) for v in raw["versions"]),
                python=str(raw.get("python", "3.11")), suite=str(raw.get("suite", "bookworm")),
                install=tuple(raw.get("install", ())), pins=tuple(raw.get("pins", ())), apt=tuple(raw.get("apt", ())),
                pythonpath=str(raw.get("pythonpath", "")), setup_source=bool(raw.get("setup_source", True)),
                prepare=tuple(raw.get("prepare", ())), test_env=tuple(sorted(dict(raw.get("test_env", {})).items())),
                runner=str(raw.get("runner", "pytest")))
        except (KeyError, TypeError, AttributeError) as exc:
            raise Rejected(f"evals/swe/suite.toml [envs.{name}]: missing or malformed {exc}; give repo, versions "
                           "and install") from None
    return tuple(out.values())


def env_for(repo: str, version: str, envs: tuple[Env, ...] = ENVS, instance: str = "") -> Env | None:
    """The environment of ``instance`` (``repo`` at ``version``) in ``envs`` (lab's table): an entry naming the
    instance in ``only``, else the first entry with no ``only`` serving the version; None when there is none."""
    for env in envs:
        if instance and instance in env.only:
            return env
    for env in envs:
        if env.repo == repo and version in env.versions and not env.only:
            return env
    return None


# ---- the dataset ----

@dataclass(frozen=True)
class Instance:
    """One dataset record: ``id`` (instance_id), ``repo`` (owner/name), ``base_commit``, ``patch`` (gold),
    ``test_patch``, ``problem_statement``, ``version``, ``setup_commit`` (environment_setup_commit),
    ``fail_to_pass`` and ``pass_to_pass`` (SWE-bench test names) and ``digest`` (of the whole record)."""

    id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str
    problem_statement: str
    version: str
    setup_commit: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    digest: str = field(default="", compare=False)


def _names(value, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise Rejected(f"{where} is not a JSON list of test names") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Rejected(f"{where} is not a list of test names")
    return tuple(value)


def _instance(raw: dict) -> Instance:
    if not isinstance(raw, dict):
        kind = {list: "an array", str: "a string", bool: "true or false", type(None): "null"}.get(type(raw), "a number")
        raise Rejected(f"the record is {kind}, not a JSON object of SWE-bench's fields")
    if "instance_id" not in raw:
        raise Rejected("the record has no field 'instance_id'")
    iid = str(raw["instance_id"])
    try:
        return Instance(
            id=iid, repo=raw["repo"], base_commit=raw["base_commit"], patch=raw["patch"],
            test_patch=raw["test_patch"], problem_statement=raw["problem_statement"], version=str(raw["version"]),
            setup_commit=raw.get("environment_setup_commit") or raw["base_commit"],
            fail_to_pass=_names(raw["FAIL_TO_PASS"], f"{iid}: FAIL_TO_PASS"),
            pass_to_pass=_names(raw["PASS_TO_PASS"], f"{iid}: PASS_TO_PASS"),
            digest=hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest(),
        )
    except KeyError as exc:
        raise Rejected(f"{iid}: the dataset record has no field {exc.args[0]!r}") from None


class _NotJSON(ValueError):
    """A dataset's text stops being JSON at ``line``: ``detail`` says how."""

    def __init__(self, line: int, detail: str):
        super().__init__(detail)
        self.line, self.detail = line, detail


def _records(text: str):
    """The records of a dataset's text, each with the line it starts on: (line, value) for each line of JSONL, or
    for each element of one JSON array. Raises _NotJSON naming the line where the text stops being JSON."""
    if not text.lstrip().startswith("["):
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    yield n, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise _NotJSON(n, f"{exc.msg}, column {exc.colno}") from None
        return
    decoder, space = json.JSONDecoder(), re.compile(r"[ \t\n\r]*")  # JSON's whitespace
    at = space.match(text, text.index("[") + 1).end()
    line, counted = 1, 0
    try:
        while text[at:at + 1] != "]":
            line, counted = line + text.count("\n", counted, at), at
            value, end = decoder.raw_decode(text, at)
            yield line, value
            at = space.match(text, end).end()
            if text[at:at + 1] == ",":
                at = space.match(text, at + 1).end()
            elif text[at:at + 1] != "]":
                raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
    except json.JSONDecodeError as exc:
        raise _NotJSON(exc.lineno, f"{exc.msg}, column {exc.colno}") from None
    rest = space.match(text, at + 1).end()
    if rest < len(text):
        raise _NotJSON(text.count("\n", 0, rest) + 1, "more text after the array's closing ]")


_DATASETS: dict[tuple[str, float], dict[str, Instance]] = {}


def load_dataset(path: Path) -> dict[str, Instance]:
    """The instances of a dataset file (JSONL, or one JSON array), by instance id, in file order. Raises
    Rejected naming the file and the fix when it is missing or unreadable, and the file and line of a record
    that is not JSON or not a SWE-bench record."""
    path = Path(path)
    try:
        key = (str(path), path.stat().st_mtime)
    except FileNotFoundError:
        raise Rejected(f"dataset {path} does not exist: give dataset=PATH (SWE-bench JSONL) or set `dataset` "
                       "in evals/swe/suite.toml") from None
    if key in _DATASETS:
        return _DATASETS[key]
    text = path.read_text(encoding="utf-8")
    out = {}
    try:
        for line, row in _records(text):
            try:
                inst = _instance(row)
            except Rejected as exc:
                raise Rejected(f"dataset {path}:{line}: {exc}; fix or remove that record") from None
            out[inst.id] = inst
    except _NotJSON as exc:
        raise Rejected(f"dataset {path}:{exc.line}: not JSON ({exc.detail}); a dataset is JSONL (one record a line) "
                       "or one JSON array of records") from None
    _DATASETS[key] = out
    return out


def slug(repo: str) -> str:
    """``pallets/flask`` → ``pallets__flask`` (a folder name)."""
    return repo.replace("/", "__")


def repo_candidates(repo: str, repos: str | Path) -> list[Path]:
    """Where a clone of ``repo`` (owner/name) may be under ``repos``, in the order they are tried:
    ``<repos>/<name>``, ``<repos>/<owner>__<name>``, ``<repos>/<owner>/<name>``."""
    owner, name = repo.split("/", 1)
    root = Path(repos)
    return [root / name, root / slug(repo), root / owner / name]


def repo_dir(repo: str, repos: str | None) -> Path:
    """The local git repository of ``repo``: under ``repos`` the first of ``repo_candidates`` that is a git
    repository, plain or bare (``<repos>/sympy``, the owner folder of the third layout, is skipped when it holds
    ``sympy/`` rather than a repository), when given; else a bare clone from GitHub kept in
    ``.lab/upstream/swe/`` (cloned on first use). Raises UpstreamError: under ``repos``, one line naming every
    path looked at, what each was, and the fix."""
    from rules.upstream import UpstreamError, is_repository, mirror

    if repos:
        tried = []
        for cand in repo_candidates(repo, repos):
            if is_repository(cand):
                return mirror(str(cand), cand)
            tried.append(f"{cand} ({'not a git repository' if cand.exists() else 'missing'})")
        raise UpstreamError(f"repos={repos} has no clone of {repo}: looked at {', '.join(tried)}; clone it to one of "
                            f"them (`git clone --bare https://github.com/{repo} {repo_candidates(repo, repos)[1]}`) "
                            "or give repos= the folder that has it")
    return mirror(f"https://github.com/{repo}.git", STATE / "upstream" / TIER / slug(repo))


# ---- test identity ----

def junit_id(nodeid: str) -> str:
    """The id ``rules.reports.parse_junit`` gives the pytest test ``nodeid`` (a SWE-bench test name):
    pytest's JUnit classname is the file path dotted without ``.py`` plus the classes, then ``::`` and the name
    (with its parameters). ``tests/test_x.py::TestA::test_b[1]`` → ``tests.test_x.TestA::test_b[1]``."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]) + "::" + names[-1]


def test_name(name: str) -> bool:
    """True for a name that can be a test: a pytest node id (``path::...``) or a bare function name (sympy's).
    Some dataset lists also hold fragments of the log their parser read (``[100%]``): no test, never expected
    (recorded in task.json ``excluded``)."""
    return "::" in name or re.fullmatch(r"[A-Za-z_]\w*", name) is not None


def truncated(name: str) -> bool:
    """True for a SWE-bench test name cut at its first space (its log parser splits lines on spaces): a
    parametrized name whose ``[`` is never closed. Such a name stands for every test id that begins with it
    and a space (resolved against the gold patch's run when proving)."""
    return "[" in name and not name.endswith("]")


def members(test_id: str, ids, cut: set[str], sep: str = " ") -> list[str]:
    """The ids among ``ids`` that the expected ``test_id`` stands for: itself, or when it is a truncated
    name (in ``cut``) every id beginning with it and ``sep`` (a space: pytest's parameters cut at the first
    space; ``/``: a Go test that has subtests, which ``rules.reports.parse_go_json`` reports by its leaves)."""
    if test_id not in cut:
        return [test_id]
    return sorted(i for i in ids if i.startswith(test_id + sep))


def sympy_id(name: str, files: dict[str, str]) -> str | None:
    """The JUnit id of sympy's test function ``name`` (a bare SWE-bench name): the one file among ``files``
    (path → text after the test patch) defining ``def name(`` at module level; None when none or several do."""
    pattern = re.compile(rf"^def {re.escape(name)}\(", re.M)
    hits = [p for p, text in files.items() if pattern.search(text)]
    return junit_id(f"{hits[0]}::{name}") if len(hits) == 1 else None


def test_ids(inst: Instance, test_files: dict[str, str]) -> dict[str, str]:
    """Map every FAIL_TO_PASS and PASS_TO_PASS name of ``inst`` to its report id. ``test_files`` are the
    Python test files of its test patch (path → text after the patch). Raises Rejected naming the names that
    have no single id."""
    out, lost = {}, []
    for name in inst.fail_to_pass + inst.pass_to_pass:
        if "::" in name:
            out[name] = junit_id(name)
        else:
            found = sympy_id(re.sub(r"\s.*$", "", name), test_files)
            if found is None:
                lost.append(name)
            else:
                out[name] = found
    if lost:
        raise Rejected(f"test names found in no single test file of the test patch: {', '.join(lost[:10])}")
    return out


def run_files(inst: Instance, test_files: dict[str, str]) -> list[str]:
    """The test files the grading runs: those the FAIL_TO_PASS and PASS_TO_PASS names live in, in the order
    the test patch names them."""
    wanted = {n.split("::", 1)[0] for n in inst.fail_to_pass + inst.pass_to_pass if "::" in n}
    if any("::" not in n for n in inst.fail_to_pass + inst.pass_to_pass):
        wanted |= {p for p in test_files}
    return [p for p in patch_paths(inst.test_patch) if p in wanted]


def patch_paths(patch: str) -> list[str]:
    """The paths a unified git diff touches (``diff --git a/X b/Y``: Y, and X when renamed), in order."""
    out: list[str] = []
    for a, b in re.findall(r"^diff --git a/(\S+) b/(\S+)$", patch, re.M):
        for p in (a, b):
            if p not in out:
                out.append(p)
    return out


def _inifile(tree: dict[str, bytes]) -> str | None:
    for name in INI_FILES:
        data = tree.get(name)
        if data is not None and (name in ("pytest.ini", ".pytest.ini") or INI_SECTIONS[name].encode() in data):
            return name
    return None


# ---- the tier ----

def dataset_path(suite: Suite, var: Callable = lambda name, default=None: default) -> Path:
    """The dataset in force: ``dataset=`` on the command line, else suite.toml's ``dataset`` (relative paths from
    the project root)."""
    from rules.config import ROOT

    raw = var("dataset") or suite.table.get("dataset")
    if not raw:
        raise Rejected("no dataset: give dataset=PATH or set `dataset` in evals/swe/suite.toml")
    p = Path(raw)
    return p if p.is_absolute() else ROOT / p


def select(data: dict[str, Instance], suite: Suite, var: Callable,
           narrow: Callable[[list[str], bool], list[str]] | None = None) -> list[str]:
    """The instance ids a gen command chooses among ``data`` (a dataset, by id in file order; ``var`` reads the
    command line): ``instances=ID,ID``, else every one with ``all=1``, else suite.toml's ``instances`` that the
    dataset has; then ``narrow(ids, named)`` when given (a tier's own filter, e.g. ``subset=`` or ``langs=``;
    ``named``: the ids came from ``instances=``); then the first N of them with ``limit=N``. Raises Rejected
    (one line) for an id of ``instances=`` the dataset lacks and a ``limit=`` that is no whole number above 0,
    and SystemExit for a bad ``all=`` (``rules.tier.flag``)."""
    from rules.tier import flag

    raw_ids = var("instances")
    if raw_ids:
        ids = [x.strip() for x in raw_ids.split(",") if x.strip()]
        unknown = [i for i in ids if i not in data]
        if unknown:
            # "immutable-js-2005" for "immutable-js__immutable-js-2005": a dataset id is owner__repo-number
            meant = [m for u in unknown[:5] for m in data if m.endswith(f"__{u}")]
            raise Rejected(f"instances=: not in the dataset: {', '.join(unknown[:5])}"
                           + (f" (a dataset id names its owner: {', '.join(meant)})" if meant else ""))
    elif flag(var, "all"):
        ids = list(data)
    else:
        ids = [i for i in suite.table.get("instances", []) if i in data]
    if narrow is not None:
        ids = narrow(ids, bool(raw_ids))
    raw_limit = var("limit")
    if raw_limit is not None:
        try:
            limit = int(raw_limit)
        except ValueError:
            limit = 0
        if limit < 1:
            raise Rejected(f"limit={raw_limit}: give a whole number of instances, 1 or more")
        ids = ids[:limit]
    return ids


# ---- rendering ----

def shadow_dirs(test_files: list[str], base_files: set[str]) -> list[str]:
    """The folders that would stand in for the Python test modules ``test_files`` (``tests/test_x/`` for
    ``tests/test_x.py``: Python's path finder takes a package before a module of its name) and that the base
    commit does not have (``base_files``: its file paths): check.sh removes them before the tests run."""
    return [p[:-3] for p in test_files
            if p.endswith(".py") and not any(b.startswith(p[:-3] + "/") for b in base_files)]


@dataclass(frozen=True)
class Checkout:
    """An instance as its repository has it: ``repo`` (the clone), ``tar`` (the work tree at the base commit),
    ``gold`` and ``tests_after`` (path → content the gold and test patches leave; None: deleted), ``when`` (the base
    commit's time, epoch seconds), ``base_files`` (the paths of the base tree's files and links) and ``small``
    (path → content of the base tree's regular files asked for by name, e.g. pytest's settings files)."""

    repo: Path
    tar: bytes
    gold: dict
    tests_after: dict
    when: int
    base_files: frozenset
    small: dict

    @property
    def date(self) -> str:
        """The base commit's time as the prompt gives it (UTC, ``2020-01-31T12:00:00+0000``)."""
        return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(self.when))


def checkout(inst: Instance, repos: str | None, *, reference: bool = True, read: tuple[str, ...] = ()) -> Checkout:
    """Read ``inst`` from its repository (``repo_dir``; writes nothing): the base tree, the files its patches leave,
    and the base tree's regular files named in ``read``. With ``reference`` (its gold patch is to be the task's
    reference solution) a gold patch that deletes files is refused. Raises Rejected (a commit missing, a patch that
    does not apply, a deletion) and Unavailable (the repository is not under ``repos`` and cannot be cloned, or
    the clone lacks an object of the tree: lab's side, never recorded as the instance's rejection)."""
    import io
    import tarfile

    from rules.upstream import UpstreamError, commit_time, patched_files, tree_tar

    try:
        repo = repo_dir(inst.repo, repos)
    except UpstreamError as exc:  # lab's side, not the instance's: never recorded as its rejection
        raise Unavailable(str(exc)) from None
    try:
        tar = tree_tar(repo, inst.base_commit)
        gold = patched_files(repo, inst.base_commit, inst.patch)
        tests_after = patched_files(repo, inst.base_commit, inst.test_patch)
        when = commit_time(repo, inst.base_commit)
    except UpstreamError as exc:
        raise Rejected(str(exc)) from None
    except ValueError as exc:  # GitPython: an object of the tree is not in the clone
        raise Unavailable(f"{repo} lacks a file of {inst.repo} at {inst.base_commit[:12]} ({exc}): the clone is not "
                          "whole (a snapshot without its large files?); give repos= a full clone") from None
    if reference and any(v is None for v in gold.values()):
        raise Rejected("the gold patch deletes files; lab lays reference solutions as files only")
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        base_files = frozenset(m.name for m in tf.getmembers() if m.isfile() or m.issym())
        small = {n: tf.extractfile(n).read() for n in read if n in base_files and tf.getmember(n).isfile()}
    return Checkout(repo, tar, gold, tests_after, when, base_files, small)


def assemble(co: Checkout, test_patch: str, context: dict, check: str, meta: TaskMeta, pretest: str | None = None):
    """A swe-style task (``rules.tiers.aider.exercises.Rendered``) from what a tier's render worked out: ``prompt.txt``
    and ``setup.sh`` (the templates ``swe/prompt.txt.j2``, ``swe/setup.sh.j2``), ``check.sh`` (the template ``check``
    with ``holdout`` true), ``pretest`` as ``pretest.sh`` when given, the work tree ``workspace.tar``, the held-out
    ``holdout/test.patch``, ``task.json`` (``meta``); answer files: the files of the gold patch of ``co``. The
    templates see ``context``."""
    from rules.render import render as render_template
    from rules.tiers.aider.exercises import Rendered

    out = Rendered()
    out.task_files["prompt.txt"] = (render_template("swe/prompt.txt.j2", **context).encode(), 0o644)
    out.task_files["setup.sh"] = (render_template("swe/setup.sh.j2", **context).encode(), 0o755)
    out.task_files["check.sh"] = (render_template(check, holdout=True, **context).encode(), 0o755)
    if pretest:  # only lab reads it (rules.tiers.swe.swerun): the task folder never reaches an agent's container
        out.task_files[PRETEST] = (pretest.encode(), 0o755)
    out.task_files["workspace.tar"] = (co.tar, 0o644)
    out.task_files["holdout/test.patch"] = (test_patch.encode(), 0o644)
    out.task_files["task.json"] = meta.file()
    for path, data in co.gold.items():
        out.answer_files[path] = (data, 0o644)
    out.meta = meta.to_json()
    return out


def render(inst: Instance, env: Env | None, repos: str | None, test_timeout: int = 900):
    """Render ``inst`` into a task (reads its repository; writes nothing). Returns ``rules.tiers.aider.exercises.Rendered``:
    task files ``prompt.txt``, ``setup.sh``, ``check.sh``, ``task.json``, ``workspace.tar`` and
    ``holdout/test.patch``; answer files = the files of the gold patch as it leaves them. Raises Rejected (no
    environment for its repository and version, a patch that does not apply, test names without an id) and
    Unavailable (its repository cannot be cloned or is not under ``repos``, or its clone is not whole)."""
    from rules.render import render as render_template

    if env is None:
        raise Rejected(f"no environment for {inst.repo} {inst.version} in lab's table (rules/tiers/swe/envs/, one module per repository) nor in evals/swe/suite.toml [envs.NAME]")
    co = checkout(inst, repos, read=INI_FILES)
    tests_after, base_files = co.tests_after, co.base_files
    py_tests = {p: (data or b"").decode("utf-8", errors="replace") for p, data in tests_after.items()
                if p.endswith(".py") and data is not None}
    runner = runner_for(env.runner)
    excluded = [n for n in inst.fail_to_pass + inst.pass_to_pass if n in env.exclude or not runner.test_name(n)]
    if any(not runner.test_name(n) for n in inst.fail_to_pass):
        raise Rejected(f"FAIL_TO_PASS holds names that are no test: {', '.join(n for n in inst.fail_to_pass if not runner.test_name(n))}")
    # a FAIL_TO_PASS test that needs a network decides nothing offline: left out (task.json "excluded") while
    # others remain to decide the instance (the proof still requires them to fail at base and pass with the fix)
    if all(n in env.exclude for n in inst.fail_to_pass):
        raise Rejected(f"every FAIL_TO_PASS test needs a network: {', '.join(inst.fail_to_pass)}")
    inst = dataclasses.replace(inst, fail_to_pass=tuple(n for n in inst.fail_to_pass if n not in env.exclude),
                               pass_to_pass=tuple(n for n in inst.pass_to_pass
                                                  if n not in env.exclude and runner.test_name(n)))
    ids = runner.test_ids(inst, py_tests)
    files = runner.run_files(inst, py_tests)
    if not files:
        raise Rejected("the test patch touches none of the files its FAIL_TO_PASS/PASS_TO_PASS tests live in")
    inifile = _inifile(co.small)
    touched = patch_paths(inst.test_patch)
    major, minor = (inst.version.split(".") + ["0"])[:2]
    context = dict(
        task=inst.id, repo=inst.repo, repo_version=inst.version, date=co.date, problem_statement=inst.problem_statement,
        settings_files=[inifile] if inifile else [], inifile=inifile, test_patch_files=touched,
        test_patch_base_files=[p for p in touched if p in base_files], test_files=files,
        shadow_dirs=shadow_dirs(sorted(set(touched) | set(files)), base_files),
        prepare=[line.format(version=inst.version, major=major, minor=minor) for line in env.prepare],
        pythonpath="" if not env.pythonpath else "/work" if env.pythonpath == "." else f"/work/{env.pythonpath}",
        test_env=dict(env.test_env), python=PYTHON, test_timeout=test_timeout, runner=runner.name, labels=runner.labels,
        build=list(env.build),
    )
    pre_existing = [p for p in files if p in base_files]
    meta = TaskMeta(
        task=inst.id, tier=TIER, groups={"repo": inst.repo}, report="junit", test_files=files,
        solution_files=[],  # no {files} for the agent: finding them is the task
        test_cmd=runner.test_cmd(pre_existing, inifile, context["pythonpath"], env.exclude,
                                 context["prepare"] + context["build"], env.test_env),
        graded="patch",  # a trial grades the agent's patch on a fresh base, as a prediction of it is graded
        extra={
            # no group of this tier: kept in task.json only, so the task digests of stored trials still match
            "language": "python", "exercise": inst.id,
            "repo_version": inst.version, "base_commit": inst.base_commit, "env": env.name, "image": env.tag,
            "test_patch_files": touched, "gold_files": sorted(co.gold),
            "fail_to_pass": [ids[n] for n in inst.fail_to_pass], "pass_to_pass": [ids[n] for n in inst.pass_to_pass],
            "test_names": {ids[n]: n for n in inst.fail_to_pass + inst.pass_to_pass},
            "truncated": sorted(ids[n] for n in inst.fail_to_pass + inst.pass_to_pass if runner.stands_for(n)),
            "excluded": excluded,  # dataset test names lab never expects (they need a network, or are no test)
            "canaries": "manifest",  # check.sh names its canaries in a manifest only root writes (rules.grade)
        })
    # the agent-visible tests, for measuring an attempt's plausibility (never the held-out ones): pretest.sh
    pretest = (render_template("swe/check.sh.j2", **{**context, "holdout": False, "test_files": pre_existing})
               if pre_existing else None)
    out = assemble(co, inst.test_patch, context, "swe/check.sh.j2", meta, pretest)
    out.pretest = pretest
    return out


def test_cmd(files: list[str], inifile: str | None, pythonpath: str, deselect: tuple[str, ...] = (),
             prepare: tuple[str, ...] | list[str] = (), test_env: tuple[tuple[str, str], ...] = ()) -> str:
    """The command that runs the repository's pre-existing tests of the files the held-out patch touches, at
    their base version, from the work tree's root (never a held-out test: only files that exist at base).
    ``deselect``: test names of those files that must never run where an agent's container may have a network
    (the environment's ``exclude``: they connect to outside or private-range addresses by design). ``prepare``:
    the environment's shell lines check.sh runs before the tests (pytest's own repository needs its version
    file, which no commit holds), run first and joined with ``&&``, so the agent's tests run as the grading's do.
    ``pythonpath`` is the grading's (``/work/src``: the agent's work tree is ``/work`` too); ``test_env`` the
    environment's extra variables of the test run (sphinx's warnings filter), set as the grading sets them."""
    if not files:
        return ""
    # an absolute path: tests that run pytest again from another folder (pytester) must import the work tree's copy
    env = f"PYTHONPATH={pythonpath} " if pythonpath else ""
    env += "".join(f"{k}={shlex.quote(v)} " for k, v in test_env)
    skip = "".join(f" --deselect {shlex.quote(n)}" for n in deselect if n.split("::", 1)[0] in files)
    first = "".join(f"{line} && " for line in prepare)
    return f"{first}{env}python -m pytest -rA -p no:cacheprovider" + skip + " " + " ".join(files)


# ---- environment images ----

def env_dockerfile(env: Env, base: str) -> str:
    """The Dockerfile text of ``env``'s image, ``FROM`` the tag ``base``."""
    from rules.render import render as render_template

    return render_template("swe/env.Dockerfile.j2", env=env, base=base, suite=env.suite,
                           interpreter_libs=INTERPRETER_LIBS)


def build_env(env: Env, repo: Path, setup_commit: str, log=sys.stderr) -> dict:
    """Build ``env``'s image (on the Debian base, bootstrapped when no registry answers; host networking and
    the host's CA bundle) and stamp it in ``.lab/images/<stamp>.json``, rewritten only when the image id
    changed (``seconds``: the build that made this image; ``built_here``: False when the build found the image
    whole in Docker's cache, made by another lab home: ``images.built_here``). Returns the stamp ``{"image", "id",
    "env", "seconds", "built_here", "packages"}``. Raises SandboxError."""
    import io
    import tarfile

    from rules import images, sandbox
    from rules.upstream import tree_tar

    start, since = time.monotonic(), time.time()
    base = sandbox.ensure_base_image(env.base, log=log)
    files = {"ca-certificates.crt": images.HOST_CA.read_bytes() if images.HOST_CA.is_file() else b"",
             "constraints.txt": ("\n".join(env.pins) + "\n").encode(), "strip_installed.py": STRIP_INSTALLED.encode()}
    if env.interpreter:
        files["python.tar"] = interpreter_tar(Path(env.interpreter_dir))
    if env.setup_source:
        with tarfile.open(fileobj=io.BytesIO(tree_tar(repo, setup_commit))) as tf:
            for m in tf.getmembers():
                if m.isfile():
                    files[f"setup/{m.name}"] = tf.extractfile(m).read()
    for commit in env.build_trees:  # trees the install steps compile once (Env.build_trees)
        with tarfile.open(fileobj=io.BytesIO(tree_tar(repo, commit))) as tf:
            for m in tf.getmembers():
                if m.isfile() and not m.name.startswith(BUILD_TREE_SKIP) and "/baseline_images/" not in m.name:
                    files[f"trees/{commit}/{m.name}"] = tf.extractfile(m).read()
    image = sandbox.build_image(env.tag, env_dockerfile(env, base), files, log=log,
                                labels={"lab.env": env.name, "lab.env.digest": env.digest()})
    old = read_json(images.stamp_path(env.stamp_name))
    if isinstance(old, dict) and old.get("id") == image and old.get("env") == env.name:
        # the same image (a build from Docker's cache, e.g. after a killed gen): the stamp, and so every proof
        # made in it (rules.build.proof_inputs), stays as it was; its seconds stay the first build's
        return old
    probe = sandbox.run(env.tag, ["cat", "/opt/lab/pip-freeze.txt"], network="none")
    here = images.built_here(image, since)  # False: found whole in the cache, another home's (prune leaves it)
    stamp = {"image": env.tag, "id": image, "env": env.name, "seconds": round(time.monotonic() - start, 1),
             "built_here": here, "packages": probe.output.split()}
    write_json(images.stamp_path(env.stamp_name), stamp, only_if_changed=True)
    return stamp


# What no stage may find: the repository's own copy that an environment image installs from its environment-setup
# commit (``pip install .``). That commit is often *after* the instance's fix (SWE-bench's environment_setup_commit
# is the last commit of its version): pallets__flask-4992's fix was in the installed flask of lab/swe-env:flask-2.3,
# where an agent could copy it, and a patch that only made ``import flask`` load the installed copy was resolved.
# The image keeps the distribution's metadata (version, entry points, scripts) and loses its code; the work tree's
# copy, on the path, is what every stage imports. Run by the image's Python as the last step of its build.
STRIP_INSTALLED = r"""
import glob, json, os, shutil

for info in sorted(glob.glob("/opt/lab/venv/lib/python3*/site-packages/*.dist-info")):
    try:
        with open(os.path.join(info, "direct_url.json")) as f:
            url = json.load(f).get("url", "")
    except (OSError, ValueError):
        continue
    if not url.startswith("file:///opt/lab/setup"):
        continue
    site = os.path.dirname(info)
    tops = set()
    with open(os.path.join(info, "RECORD")) as f:
        for line in f:
            rel = line.rsplit(",", 2)[0]
            path = os.path.normpath(os.path.join(site, rel))
            if not path.startswith(site + os.sep) or path.startswith(info + os.sep):
                continue  # scripts outside site-packages and the metadata stay
            tops.add(os.path.relpath(path, site).split(os.sep)[0])
            if os.path.isfile(path) or os.path.islink(path):
                os.remove(path)
    for top in tops:  # then byte code and the folders left empty (a folder another distribution shares stays)
        for folder, dirs, files in os.walk(os.path.join(site, top), topdown=False):
            if os.path.basename(folder) == "__pycache__":
                shutil.rmtree(folder)
            elif not os.listdir(folder):
                os.rmdir(folder)
    print(f"lab: removed the code of {os.path.basename(info)} ({', '.join(sorted(tops))}); kept its metadata")
"""


# ---- proof ----

def _named(ids: list[str], names: dict[str, str]) -> str:
    shown = [names.get(i, i) for i in ids[:10]]
    return ", ".join(shown) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")


GOLD_RUNS = 3  # the gold patch's runs in a proof: a test whose outcome differs between them is flaky
# the evidence lines of a grading (rules.grade.decide) about expected tests alone: a gold run with no other is sound
# when the tests it names are flaky
# (or with no expected test at all: every name the run was given stands for ids its gold outcomes decide)
_TESTS_ONLY = re.compile(r"\d+ (expected )?test\(s\) (did not pass|not reported)|report: |the task has no expected tests$")


def _sound(g) -> bool:
    """Whether the gold run ``g`` (a ``rules.grade.Grade``) ran to its end with nothing wrong but, at most,
    expected tests that did not pass (no canary missing or forged, check.sh's own exit 0)."""
    return g.verdict == "pass" or (g.verdict == "fail" and all(_TESTS_ONLY.match(e) for e in g.evidence))


def gold_outcomes(exact: list[str], cut: set[str], runs: list[list[str]],
                  sep: str = " ") -> tuple[dict, dict, list[str]]:
    """The tests the gold patch's runs decide, from ``runs`` (each run's passed test ids, in order), for the
    expected ids ``exact`` and the truncated names ``cut``. Returns ``(members, flaky, lost)``: ``members`` maps
    each name to the steady ids it stands for (empty: every one of them is flaky); ``flaky`` maps a test id
    whose outcome differs between runs to the outcome of each run (``"passed"`` / ``"not passed"``); ``lost``
    the names with a steady id that never passed, or (a truncated name) with no id in any run. ``sep``: as
    ``members``'."""
    seen = [set(r) for r in runs]
    every = set().union(*seen) if seen else set()
    out, flaky, lost = {}, {}, []
    for name in list(exact) + sorted(cut):
        ids = members(name, every, cut, sep) if name in cut else [name]
        if not ids:
            lost.append(name)
            continue
        steady = []
        for i in ids:
            outcome = ["passed" if i in r else "not passed" for r in seen]
            if len(set(outcome)) > 1:
                flaky[i] = outcome
            else:
                steady.append(i)
        if any(i not in seen[0] for i in steady):
            lost.append(name)
        out[name] = steady
    return out, flaky, lost


def prove(task_dir: Path, answer_dir: Path, *, image: str, limits: Limits, meta: dict,
          group_keys: tuple[str, ...] = GROUPS, log_dir: Path | None = None) -> dict:
    """Prove one swe task by what the dataset's lists mean (SWE-bench's grading: after the fix, every
    FAIL_TO_PASS and PASS_TO_PASS test passes). Returns the proof record (the aider tier's fields; ``tests`` =
    the ids every grading must see pass; ``before`` = what the base run showed). Raises SandboxError
    (infrastructure).

    - The gold patch runs ``GOLD_RUNS`` times (the held-out test files only, as every grading; a run that times
      out stops the rest): a test whose outcome differs between runs is flaky, recorded with the outcome of each
      run (``task_fields["flaky"]``, a note) and left out of the expectations; one that never passes rejects.
    - At base every PASS_TO_PASS test passes and at least one FAIL_TO_PASS test fails (otherwise the untouched
      base would be resolved). A tier whose task.json says ``base_may_not_build`` (a compiled language, where
      held-out tests that call the fix's new API leave the base's test package unbuilt) keeps an instance whose
      base run did not complete (no canary reported) with its PASS_TO_PASS tests failing there, and notes it. A FAIL_TO_PASS test that already passes at base (django-11099's ``test_help_text``:
      SWE-bench never runs the base when grading) stays expected and is noted (``task_fields["passed_at_base"]``).
    """
    from rules.grade import grade
    from rules.prove import environmental

    start = time.monotonic()
    f2p, p2p = list(meta["fail_to_pass"]), list(meta["pass_to_pass"])
    names = meta.get("test_names", {})
    cut = set(meta.get("truncated", []))
    exact = [i for i in f2p + p2p if i not in cut]
    head = TaskMeta.from_json(meta, group_keys, Path(task_dir) / "task.json")
    record = Proof.of(head).to_json()  # "before" is written once the base commit ran
    with tempfile.TemporaryDirectory(prefix="lab-prove-") as tmp:
        ref_tree = Path(tmp) / "gold"
        lay_work_tree(task_dir, ref_tree, answer_dir)
        runs = []
        for n in range(1, GOLD_RUNS + 1):
            log = (log_dir / ("reference.log" if n == 1 else f"reference-{n}.log")) if log_dir else None
            runs.append(grade(task_dir, ref_tree, image=image, limits=limits, expected=exact, log_path=log))
            if environmental(runs[-1]) or not _sound(runs[-1]):
                break
        ref = runs[0]
        record["reference"] = ref.to_json()
        record["gold_runs"] = [{"seconds": g.seconds, "verdict": g.verdict, "passed_tests": g.passed_tests,
                                "failed_tests": g.failed_tests} for g in runs]
        stopped = next((k for k, g in enumerate(runs, 1) if environmental(g) or not _sound(g)), None)
        steady, flaky, lost = gold_outcomes(exact, cut, [g.tests for g in runs], meta.get("subtest_sep", " "))
        kept_f2p = [i for i in f2p if steady.get(i)]
        if stopped:
            g = runs[stopped - 1]
            which = "" if stopped == 1 else f" (run {stopped} of {GOLD_RUNS})"
            record["environmental"] = environmental(g)
            record["reason"] = (f"{record['environmental']}: the gold patch's tests did not finish{which}"
                                if record["environmental"] else f"with the gold patch{which}: " + "; ".join(g.evidence)[:600])
        elif lost:
            record["reason"] = f"with the gold patch, {len(lost)} test(s) do not pass: {_named(lost, names)}"
        elif not kept_f2p:
            record["reason"] = (f"every FAIL_TO_PASS test is flaky with the gold patch (outcomes of its {GOLD_RUNS} "
                                f"runs: {_outcomes(flaky, names)}): no steady test decides the instance")
        else:
            expected = sorted({m for i in f2p + p2p for m in steady.get(i, [])})
            base_tree = Path(tmp) / "base"
            lay_work_tree(task_dir, base_tree)
            stub = grade(task_dir, base_tree, image=image, limits=limits, expected=expected,
                         log_path=log_dir / "stub.log" if log_dir else None)
            record["stub"] = stub.to_json()
            passed = set(stub.tests)
            # a base run that never completed (the session crashed: a canary missing) fails every FAIL_TO_PASS
            # test as a whole, which is how the dataset's own run saw it
            completed = not any("canary" in e and "missing" in e for e in stub.evidence)
            early = [i for i in kept_f2p if completed and all(m in passed for m in steady[i])]
            broken = [i for i in p2p if steady.get(i) and not all(m in passed for m in steady[i])]
            record["before"] = {"fail_to_pass_passed": early, "pass_to_pass_failed": broken, "completed": completed}
            if environmental(stub):
                record["environmental"] = environmental(stub)
                record["reason"] = f"{record['environmental']}: the base commit's tests did not finish"
            elif stub.verdict == "tampered":
                record["reason"] = "the base run's report was flagged tampered: " + "; ".join(stub.evidence)
            elif len(early) == len(kept_f2p):
                record["reason"] = (f"before the fix, every FAIL_TO_PASS test passes already ({_named(early, names)}): "
                                    "the untouched base would be resolved")
            elif broken and (completed or not meta.get("base_may_not_build")):
                record["reason"] = f"before the fix, PASS_TO_PASS test(s) fail: {_named(broken, names)}"
            else:
                record["status"], record["tests"] = "kept", expected
                notes, fields = [], {}
                if broken:  # only where the tier allows it: the base did not build with the held-out tests
                    fields["base_did_not_build"] = True
                    notes.append(f"the base did not build with the held-out tests (no test of it ran, no canary), so "
                                 f"its PASS_TO_PASS tests could not pass there: {_named(broken, names)}")
                if early:
                    fields["passed_at_base"] = [names.get(i, i) for i in early]
                    notes.append(f"FAIL_TO_PASS test(s) already pass at base, kept as expected (SWE-bench's grading "
                                  f"never runs the base): {_named(early, names)}")
                if flaky:
                    fields["flaky"] = {names.get(i, i): o for i, o in sorted(flaky.items())}
                    notes.append(f"flaky with the gold patch, left out of the expectations (outcomes of its "
                                  f"{GOLD_RUNS} runs): {_outcomes(flaky, names)}")
                if fields:
                    record["notes"], record["task_fields"] = notes, fields
    record["seconds"] = round(time.monotonic() - start, 3)
    return record


def _outcomes(flaky: dict[str, list[str]], names: dict[str, str]) -> str:
    shown = [f"{names.get(i, i)} ({', '.join(o)})" for i, o in sorted(flaky.items())[:5]]
    return "; ".join(shown) + (f" and {len(flaky) - 5} more" if len(flaky) > 5 else "")


def prove_staged(build: Path, *, image: str, limits: Limits, stamp: Path | None = None) -> dict:
    """Prove the staged swe task in ``build`` (``.lab/build/swe/<id>/``) and write ``proof.json``
    (``rules.build.prove_staged`` with this tier's ``prove``); a render that failed becomes a ``rejected`` proof
    with its reason, without any container. ``stamp``: the environment image's stamp file (the proof records its
    inputs, and one already made for exactly them stands)."""
    from rules.build import prove_staged as staged

    return staged(build, image=image, limits=limits, stamp=stamp, group_keys=GROUPS, prove=prove)


# ---- predictions in and out (SWE-bench's JSONL: instance_id, model_name_or_path, model_patch) ----

RESULTS_FORMAT = 1
PSEUDO = ("gold", "empty")  # predictions=gold / predictions=empty: made from the published tasks


def read_predictions(path: Path) -> list[dict]:
    """The records of a predictions file: JSONL, a JSON array, or a JSON object keyed by instance id (the three
    shapes SWE-bench accepts). Each has ``instance_id``; ``model_patch`` may be missing or empty. Raises
    Rejected naming the file and the line that is wrong."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise Rejected(f"predictions file {path} does not exist: give predictions=FILE (SWE-bench predictions, JSONL), or "
                       "predictions=gold / predictions=empty as checks") from None
    try:
        if text.lstrip().startswith("["):
            rows = json.loads(text)
        elif text.lstrip().startswith("{") and "\n{" not in text.strip():
            obj = json.loads(text)
            if "instance_id" in obj or not all(isinstance(v, dict) for v in obj.values()):
                rows = [obj]
            else:
                rows = [{"instance_id": k, **v} for k, v in obj.items()]
        else:
            rows = []
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except ValueError as exc:
                        raise Rejected(f"{path}:{n}: not a JSON object ({exc})") from None
    except ValueError as exc:
        raise Rejected(f"{path}: not JSON or JSONL ({exc})") from None
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict) or not isinstance(row.get("instance_id"), str):
            raise Rejected(f"{path}: record {n} has no instance_id")
    return rows


def published(suite: Suite) -> list[str]:
    """The instance ids of the tier's published tasks (a task folder with ``tests.json``), sorted."""
    if not suite.tasks_dir.is_dir():
        return []
    return sorted(p.name for p in suite.tasks_dir.iterdir() if (p / "tests.json").is_file())


def pseudo_predictions(suite: Suite, kind: str, dataset: Path) -> Path:
    """Write ``evals/swe/predictions/<kind>.jsonl`` for every published task: ``gold`` (the dataset's gold
    patches) or ``empty`` (no patch at all); returns its path."""
    data = load_dataset(dataset)
    rows = [{"instance_id": i, "model_name_or_path": kind, "model_patch": data[i].patch if kind == "gold" else ""}
            for i in published(suite) if i in data]
    path = suite.dir / "predictions" / f"{kind}.jsonl"
    write_atomic(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    return path


def _split(ids: list[str], passed: set[str], names: dict[str, str], expected: list[str],
           cut: set[str], sep: str = " ") -> dict[str, list[str]]:
    """SWE-bench's tests_status entry: the names of ``ids`` whose tests all passed, and the others."""
    ok = [i for i in ids if members(i, expected, cut, sep)
          and all(m in passed for m in members(i, expected, cut, sep))]
    return {"success": [names.get(i, i) for i in ok], "failure": [names.get(i, i) for i in ids if i not in ok]}


def _bytes_behind(text: str) -> bool:
    """Whether ``text`` stands for bytes (``rules.upstream.patch_bytes``): UTF-8, with the bytes of a file in another
    encoding as ``\\udc80``-``\\udcff``; JSON may carry other lone surrogates such as ``\\ud800``, which do not."""
    from rules.upstream import patch_bytes

    try:
        patch_bytes(text)
        return True
    except UnicodeEncodeError:
        return False


def patch_suspicions(meta: dict, patch: str) -> list[dict] | None:
    """The suspicion scan's flags (``rules.scan.scan``, at most ``MAX_FLAGS``) on a prediction's ``patch`` with
    the table of the task whose task.json holds ``meta`` (``rules.tiers.suspicions_of``): evidence beside the
    verdict, which no flag changes. None (not scanned) when the table cannot be loaded or the scan fails: a
    check that decides nothing never costs a grading its verdict."""
    from rules.scan import MAX_FLAGS, cut_flag, scan
    from rules.tiers import suspicions_of
    from rules.worktree import SCAN_CAP

    try:
        table = suspicions_of(meta)
        return (cut_flag(patch, SCAN_CAP) + scan(patch[:SCAN_CAP], table))[:MAX_FLAGS] if table else []
    except Exception:  # noqa: BLE001 - as rules.trial.suspicions
        return None


def evaluate_one(suite: Suite, record: dict, out_dir: Path) -> dict:
    """Grade one prediction against the published task of its instance, with the held-out tests, and write its
    log folder ``out_dir/<instance_id>/`` (``patch.diff``, ``test_output.txt``, ``report.json``). Returns the
    report: ``status`` is ``resolved`` (every FAIL_TO_PASS and PASS_TO_PASS test passed), ``unresolved``,
    ``empty_patch`` (nothing to apply) or ``error`` (not a published task, a patch that does not apply, or an
    infrastructure failure: never counted as the model's failure to resolve), with ``reason``; a graded patch's
    ``suspicions`` are the suspicion scan's flags on it (``patch_suspicions``: for a person to review, the
    status stands)."""
    from rules.grade import grade
    from rules.sandbox import SandboxError
    from rules.upstream import apply_patch

    iid = record["instance_id"]
    patch = record.get("model_patch") or ""
    report = {"instance_id": iid, "model_name_or_path": record.get("model_name_or_path"), "status": "error",
              "reason": "", "verdict": None, "evidence": [], "tests_status": None, "seconds": 0.0}
    start = time.monotonic()
    if not isinstance(iid, str) or iid not in published(suite):
        # an id is a folder name under tasks/ and evaluations/: only a published task's own name is one (never a
        # path such as ../x or /x, nor a second spelling of a published task counted twice); nothing is written
        report["reason"] = f"not a published task of this tier (run `doit gen:{suite.name} instances=...` first)"
        return report
    if not isinstance(patch, str) or not _bytes_behind(patch):  # an error of the file, never (un)resolved
        patch, report["reason"] = "", "model_patch is not text (a JSON string standing for a patch's bytes)"
    task_dir = suite.tasks_dir / iid
    logs = out_dir / iid
    write_atomic(logs / "patch.diff", patch.encode("utf-8", "surrogateescape"))
    meta = read_json(task_dir / "task.json")
    if report["reason"]:
        pass  # the patch is no text: an error, never graded
    elif not (task_dir / "tests.json").is_file() or not meta:
        report["reason"] = f"not a published task of this tier (run `doit gen:{suite.name} instances=...` first)"
    elif not patch.strip():
        report["status"], report["reason"] = "empty_patch", "the prediction has no patch"
    else:
        with tempfile.TemporaryDirectory(prefix="lab-eval-") as tmp:
            tree = Path(tmp) / "work"
            try:
                lay_work_tree(task_dir, tree)
                problem = apply_patch(tree, patch)
                if problem:
                    report["reason"] = f"the patch does not apply: {problem}"
                else:
                    g = grade(task_dir, tree, image=meta["image"], limits=suite.prove,
                              log_path=logs / "test_output.txt")
                    names, cut = meta.get("test_names", {}), set(meta.get("truncated", []))
                    sep = meta.get("subtest_sep", " ")  # what a truncated name and its ids are joined by
                    expected = (read_json(task_dir / "tests.json") or {}).get("tests", [])
                    passed = set(g.tests)
                    # a test the proof found flaky decides nothing (task.json "flaky"): listed apart, never a failure
                    flaky = set(meta.get("flaky") or {})
                    f2p, p2p = ([i for i in meta[k] if names.get(i, i) not in flaky]
                                for k in ("fail_to_pass", "pass_to_pass"))
                    report.update(status="resolved" if g.passed else "unresolved", verdict=g.verdict,
                                  evidence=g.evidence, reason="; ".join(g.evidence)[:600],
                                  suspicions=patch_suspicions(meta, patch),
                                  tests_status={"FAIL_TO_PASS": _split(f2p, passed, names, expected, cut, sep),
                                                "PASS_TO_PASS": _split(p2p, passed, names, expected, cut, sep),
                                                **({"flaky": sorted(flaky)} if flaky else {})})
            except (SandboxError, RuntimeError) as exc:
                report["reason"] = f"infrastructure: {exc}"[:600]
    report["seconds"] = round(time.monotonic() - start, 3)
    write_json(logs / "report.json", report)
    return report


def evaluate(suite: Suite, predictions: Path, out_dir: Path | None = None, log=sys.stderr) -> dict:
    """Grade every prediction of the file ``predictions`` and write ``<out_dir>/results.json`` (default
    ``evals/swe/evaluations/<file stem>/``) beside the per-instance logs. Returns the results:
    ``{"version", "predictions", "models", "total_instances" (published tasks), "submitted", "completed"
    (graded), "resolved", "unresolved", "error", "empty_patch" (id lists), "flagged" (the graded ones whose
    patch the suspicion scan flagged), "resolved_flagged" (those of them resolved), "resolved_rate" (over the
    published tasks), "repos": {repo: {"tasks", "resolved", "rate"}}, "instances": {id: report}}``. A later record for the same instance replaces an earlier."""
    rows = {r["instance_id"]: r for r in read_predictions(predictions)}
    out_dir = Path(out_dir) if out_dir else suite.dir / "evaluations" / Path(predictions).stem
    reports = {}
    for n, (iid, row) in enumerate(sorted(rows.items()), 1):
        rep = evaluate_one(suite, row, out_dir)
        reports[iid] = rep
        print(f"[evaluate {n}/{len(rows)}] {iid}: {rep['status']}"
              + (f" ({rep['reason'][:200]})" if rep["status"] in ("error", "unresolved") and rep["reason"] else "")
              + (f" [suspicion flags: {', '.join(sorted({f['name'] for f in rep['suspicions']}))}]"
                 if rep.get("suspicions") else "")
              + f" in {rep['seconds']:.1f}s", file=log, flush=True)
    by = {k: sorted(i for i, r in reports.items() if r["status"] == k)
          for k in ("resolved", "unresolved", "error", "empty_patch")}
    flagged = sorted(i for i, r in reports.items() if r.get("suspicions"))
    total = len(published(suite))
    results = {"version": RESULTS_FORMAT, "predictions": str(predictions),
               "models": sorted({str(r.get("model_name_or_path")) for r in rows.values()}),
               "total_instances": total, "submitted": len(rows),
               "completed": len(by["resolved"]) + len(by["unresolved"]), **by, "flagged": flagged,
               "resolved_flagged": [i for i in by["resolved"] if i in flagged],
               "resolved_rate": round(len(by["resolved"]) / total, 4) if total else None,
               "repos": per_repo(suite, by["resolved"]), "instances": reports}
    write_json(out_dir / "results.json", results)
    return results


def per_repo(suite: Suite, resolved: list[str]) -> dict[str, dict]:
    """Per repository of the published tasks: ``{"tasks": n, "resolved": n, "rate": resolved / tasks}``."""
    out: dict[str, dict] = {}
    done = set(resolved)
    for iid in published(suite):
        repo = (read_json(suite.tasks_dir / iid / "task.json") or {}).get("repo", "?")
        row = out.setdefault(repo, {"tasks": 0, "resolved": 0})
        row["tasks"] += 1
        row["resolved"] += iid in done
    for row in out.values():
        row["rate"] = round(row["resolved"] / row["tasks"], 4)
    return dict(sorted(out.items()))


def results_summary(results: dict) -> str:
    """One line for the terminal (resolved of the published tasks, then each status of the predictions
    submitted, and the published tasks no prediction named), and one more when resolved patches carry suspicion flags (they count as
    resolved; a person reviews them: each instance's report.json lists its flags)."""
    # two sets, each number named by its own: the published tasks, and the predictions submitted (some may name
    # no published task: errors, never graded)
    stray = sum(str(r.get("reason", "")).startswith("not a published task")
                for r in (results.get("instances") or {}).values())
    missing = results["total_instances"] - (results["submitted"] - stray)
    line = (f"{', '.join(results['models'])}: resolved {len(results['resolved'])} of {results['total_instances']} "
            f"published tasks; of the {results['submitted']} predictions submitted: {len(results['resolved'])} "
            f"resolved, {len(results['unresolved'])} unresolved, {len(results['error'])} error"
            + (f" ({stray} naming no published task)" if stray else "")
            + f", {len(results['empty_patch'])} empty patch"
            + (f"; {missing} published tasks had no prediction" if missing > 0 else ""))
    flagged = results.get("resolved_flagged") or []
    if flagged:
        line += (f"\n{len(flagged)} of the resolved carry suspicion flags (review their report.json "
                 f"`suspicions` before counting them): {', '.join(flagged[:10])}"
                 + (f" and {len(flagged) - 10} more" if len(flagged) > 10 else ""))
    return line


def write_predictions(suite: Suite, name: str, model: str, patches: dict[str, str]) -> Path:
    """Write ``evals/swe/predictions/<name>.jsonl`` in SWE-bench's format (one record per instance, sorted:
    ``instance_id``, ``model_name_or_path`` = ``model``, ``model_patch``); returns its path."""
    rows = [{"instance_id": i, "model_name_or_path": model, "model_patch": patches[i]} for i in sorted(patches)]
    path = suite.dir / "predictions" / f"{name}.jsonl"
    write_atomic(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    return path


# ---- retry until plausible: attempts, their outcomes and the least-bad pick ----

@dataclass
class Attempt:
    """One attempt at a task from a fresh work tree: which ``agent`` made it, its ``patch`` (against the base),
    and the three outcomes Aider's harness measured: ``edit`` (None: a non-empty diff that applies; else the
    problem), ``lint`` (syntax errors in the changed Python files, ``path:line: message``) and ``broken`` (the
    pre-existing tests that passed at base and no longer pass). Plausible when all three are clean."""

    attempt: int
    agent: str
    patch: str
    edit: str | None
    lint: list[str]
    broken: list[str]

    @property
    def plausible(self) -> bool:
        return self.edit is None and not self.lint and not self.broken

    @property
    def problems(self) -> int:
        """How many of the three outcomes are bad (0-3)."""
        return (self.edit is not None) + bool(self.lint) + bool(self.broken)

    @property
    def diff_lines(self) -> int:
        return sum(1 for line in self.patch.splitlines()
                   if line[:1] in "+-" and not line.startswith(("+++", "---")))

    def to_json(self) -> dict:
        return {"attempt": self.attempt, "agent": self.agent, "edit": self.edit, "lint": self.lint,
                "broken": self.broken, "plausible": self.plausible, "problems": self.problems,
                "diff_lines": self.diff_lines}


def choose(attempts: list[Attempt]) -> int:
    """The index of the answer among ``attempts``: the first plausible one; with none, the least bad (fewest
    problems; ties: the smaller diff, then the earlier attempt). Raises ValueError on an empty list."""
    if not attempts:
        raise ValueError("no attempts to choose from")
    for i, a in enumerate(attempts):
        if a.plausible:
            return i
    return min(range(len(attempts)), key=lambda i: (attempts[i].problems, attempts[i].diff_lines, i))


def lint_errors(work_tree: Path, paths: list[str]) -> list[str]:
    """Syntax errors of the Python files among ``paths`` (relative to ``work_tree``), compiled (never run) on
    the host; deleted files are skipped."""
    out = []
    for rel in paths:
        p = Path(work_tree) / rel
        if not rel.endswith(".py") or not p.is_file() or p.is_symlink():
            continue
        try:
            compile(p.read_bytes(), rel, "exec", dont_inherit=True)
        except SyntaxError as exc:
            out.append(f"{rel}:{exc.lineno}: {exc.msg}")
        except ValueError as exc:
            out.append(f"{rel}: {exc}")
    return out


def pretest_task(task_dir: Path, script: str, dest: Path) -> Path:
    """A task folder at ``dest`` whose ``check.sh`` is ``script`` (the pre-existing tests: ``render(...)
    .pretest``), sharing the task's ``task.json`` and ``workspace.tar`` (hard links where possible)."""
    import shutil

    dest.mkdir(parents=True, exist_ok=True)
    write_atomic(dest / "check.sh", script, 0o755)
    for name in ("task.json", "workspace.tar"):
        (dest / name).unlink(missing_ok=True)
        try:
            os.link(Path(task_dir) / name, dest / name)
        except OSError:
            shutil.copy(Path(task_dir) / name, dest / name)
    return dest


def pretest_baseline(pretest_dir: Path, task_dir: Path, *, image: str, limits: Limits) -> list[str]:
    """The ids of the pre-existing tests that pass on the untouched base (what an attempt must not break).
    Raises SandboxError, also when the run ran out of time or memory (the machine's doing, not the base's: a
    baseline cut short would let later attempts break the tests it never saw pass)."""
    from rules.grade import grade
    from rules.prove import environmental
    from rules.sandbox import SandboxError

    with tempfile.TemporaryDirectory(prefix="lab-pretest-") as tmp:
        lay_work_tree(Path(task_dir), Path(tmp) / "base")
        g = grade(pretest_dir, Path(tmp) / "base", image=image, limits=limits, expected=None)
    why = environmental(g)
    if why:
        raise SandboxError(f"the pre-existing tests did not finish on the untouched base ({why}, limit "
                           f"{limits.timeout:g} s): nothing was kept; run again when the machine is less busy")
    return g.tests


def pretest_failures(pretest_dir: Path, work_tree: Path, expected: list[str], *, image: str,
                     limits: Limits) -> list[str]:
    """Which of the ``expected`` pre-existing tests (those that passed at base) do not pass on ``work_tree``,
    run offline in the task's image; a run whose report shows signs of forging (a ``tampered`` verdict) adds
    one entry, ``tampered: <evidence>``, and one that ran out of time or memory one saying so (``timeout: ...``),
    so such an attempt is never plausible. Raises SandboxError."""
    from rules.grade import grade
    from rules.prove import environmental

    g = grade(pretest_dir, work_tree, image=image, limits=limits, expected=expected)
    tampered = [f"tampered: {'; '.join(g.evidence)[:300]}"] if g.verdict == "tampered" else []
    why = environmental(g)
    cut = [f"{why}: the pre-existing tests did not finish"] if why else []
    return sorted(set(expected) - set(g.tests)) + tampered + cut


def measure(task_dir: Path, work_tree: Path, n: int, agent: str,
            broken: Callable[[Path], list[str]] = lambda tree: []) -> Attempt:
    """The outcomes of attempt ``n`` (by ``agent``) left in ``work_tree``: its patch against the base, whether
    that patch is non-empty and applies to a fresh base, the syntax errors of the Python files it changes, and
    ``broken(tree)`` (the pre-existing tests it breaks, e.g. ``pretest_failures`` bound to a task). Lint and the
    pre-existing tests are measured on the patch laid on a fresh base, the tree the held-out grading and a
    prediction of it see, never on the work tree itself: files the patch leaves out (those the work tree's own
    ``.gitignore`` hides, byte code) must not make an attempt look plausible."""
    from rules.upstream import apply_patch

    patch = work_patch(task_dir, work_tree)
    if not patch.strip():
        return Attempt(n, agent, patch, "the attempt changed nothing", [], [])
    with tempfile.TemporaryDirectory(prefix="lab-apply-") as tmp:
        tree = Path(tmp) / "base"
        lay_work_tree(Path(task_dir), tree)
        problem = apply_patch(tree, patch)
        edit = f"the patch does not apply: {problem}" if problem else None
        return Attempt(n, agent, patch, edit, lint_errors(tree, patch_paths(patch)), broken(tree))


def until_plausible(attempts: int, make: Callable[[int], Attempt | None]) -> list[Attempt]:
    """Retry until plausible: ``make(n)`` for n = 1..``attempts``, stopping after the first plausible attempt,
    or when ``make`` returns None (the attempt could not be made; the caller records why). Returns the
    attempts made, in order."""
    made: list[Attempt] = []
    for n in range(1, attempts + 1):
        a = make(n)
        if a is None:
            break
        made.append(a)
        if a.plausible:
            break
    return made


def run_attempts(task_dir: Path, agents: list[tuple[str, Callable[[Path, int], None]]], attempts: int,
                 broken: Callable[[Path], list[str]] = lambda tree: []) -> dict:
    """Retry until plausible with in-process agents (``rules.tiers.swe.swerun`` runs real ones in containers): attempt
    1..``attempts``, each from a fresh work tree laid by the task's setup.sh, cycling through ``agents`` (name,
    run(work_tree, attempt)). Returns ``{"attempts": [outcomes], "chosen": index, "plausible": bool, "agent",
    "patch"}`` (``choose``). An agent that raises is an attempt with that problem as its edit outcome."""

    if not agents or attempts < 1:
        raise ValueError("give at least one agent and one attempt")

    def make(n: int) -> Attempt:
        name, run = agents[(n - 1) % len(agents)]
        with tempfile.TemporaryDirectory(prefix="lab-attempt-") as tmp:
            tree = Path(tmp) / "work"
            lay_work_tree(Path(task_dir), tree)
            try:
                run(tree, n)
                return measure(task_dir, tree, n, name, broken)
            except Exception as exc:  # an agent's failure is that attempt's outcome, not lab's
                return Attempt(n, name, "", f"the agent failed: {exc}"[:300], [], [])

    made = until_plausible(attempts, make)
    i = choose(made)
    return {"attempts": [a.to_json() for a in made], "chosen": i, "plausible": made[i].plausible,
            "agent": made[i].agent, "patch": made[i].patch}


def gen_times(suite: Suite) -> str:
    """A table of what generating the tier cost: each environment image's build seconds (its stamp) and each
    instance's proof seconds and status (its proof.json), for the notes."""
    from rules import images

    lines = ["environment            build s", "---------------------  -------"]
    for env in environments(suite):
        stamp = read_json(images.stamp_path(env.stamp_name))
        if stamp:
            lines.append(f"{env.name:22} {stamp.get('seconds', 0):7.1f}")
    lines += ["", "instance                          env                 proof s  status", "-" * 80]
    for build in sorted(suite.build_dir.glob("*/proof.json")):
        proof = read_json(build)
        meta = (read_json(build.parent / "render.json") or {}).get("meta", {})
        lines.append(f"{proof['task']:33} {meta.get('env', '-'):19} {proof.get('seconds', 0):7.1f}  {proof['status']}"
                     + (f": {proof['reason'][:150]}" if proof["status"] == "rejected" else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    from rules.config import load_suite as _load

    print(gen_times(_load(TIER)))
