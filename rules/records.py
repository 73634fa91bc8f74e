"""The records lab keeps on disk, one typed definition each: ``task.json`` (``TaskMeta``), ``proof.json``
(``Proof``), a ``manifest.json`` entry (``ManifestEntry``), a trial's ``result.json`` (``TrialResult``, its tries
``TryRecord``) and a swe trial's ``result.json`` (``SweResult``). Each has its format version (``FORMAT``),
``to_json()`` (the file's data) and ``from_json(data, group_keys, where)``, which checks the fields lab reads
and raises ``RecordError`` naming the file and the fix. Their fields are documented in evals/README.md.

Group labels (a task's language and exercise, its repository) are a tier's: a record carries them as
``groups`` (key → label), written as top-level keys of the file, as they always were, and read back with the
keys its tier declares (``group_keys``). A key outside the record's fields and the tier's groups (an older
record's) is kept in ``extra`` and written back as it was, so nothing a record held is ever dropped.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterable

from rules.files import write_json

TASK_FORMAT = 2  # task.json; bump when its fields change meaning (every task renders again)
PROOF_FORMAT = 2  # proof.json
MANIFEST_FORMAT = 2  # manifest.json
TRIAL_FORMAT = 2  # a trial's key (result.json's `key.format`): a bump makes every stored trial run again
TRIAL_RECORD_FORMAT = 3  # a trial's result.json (`version`; 3: a try's `suspicions`), read alike from 2 on
SWE_TRIAL_FORMAT = 1  # a swe trial's result.json and its key


class RecordError(ValueError):
    """A stored record lacks a field lab reads or holds one of the wrong kind; the message names the file, the
    field and the fix."""


def now() -> str:
    """The current UTC time as ISO 8601 to the second (``2026-12-03T09:14:45+00:00``): records' time stamps."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def printable(value):
    """``value`` (JSON data) with every string that holds undecodable bytes (a file name such as ``b"\\xff"``
    read through Python's surrogateescape) written as the bytes' backslash escapes (``\\xff``), so the
    record can be written as UTF-8. Other values are returned unchanged."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable(v) for v in value]
    return value


_KINDS = {str: "a string", int: "a whole number", float: "a number", list: "a list", dict: "an object",
          bool: "true or false"}


class _Record:
    """What every record shares: the flat layout on disk (fields, then groups, then ``extra``), the reading with
    checks, and the one atomic write."""

    FORMAT: ClassVar[int] = 0
    FIX: ClassVar[str] = "make it again"  # what to do about a damaged file of this kind
    REQUIRED: ClassVar[dict[str, type | tuple]] = {}  # the fields lab reads: name → the type they must have
    OPTIONAL: ClassVar[tuple[str, ...]] = ()  # fields left out of the file when None

    def to_json(self) -> dict:
        """The file's data: the record's fields, its groups and extra keys as top-level keys."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in ("groups", "extra") or (f.name in self.OPTIONAL and value is None):
                continue
            out[f.name] = [x.to_json() if isinstance(x, _Record) else x for x in value] \
                if isinstance(value, list) else value
        return {**getattr(self, "extra", {}), **out, **getattr(self, "groups", {})}

    @classmethod
    def from_json(cls, data: Any, group_keys: Iterable[str] = (), where: str | Path = "a record",
                  check: bool = True):
        """The record in ``data`` (a file's parsed JSON), its groups read with ``group_keys`` (the tier's;
        a group key the record lacks is left out). Raises RecordError naming ``where`` and the fix; ``check``
        False reads a record lab is about to write as it is (no field is required then)."""
        if not isinstance(data, dict):
            raise RecordError(f"{where}: not a JSON object; {cls.FIX}")
        for name, kind in cls.REQUIRED.items() if check else ():
            if not isinstance(data.get(name), kind):
                want = " or ".join(_KINDS.get(k, "null") for k in (kind if isinstance(kind, tuple) else (kind,)))
                raise RecordError(f"{where}: field {name!r} should be {want}, it is {data.get(name)!r}; {cls.FIX}")
        names = {f.name for f in dataclasses.fields(cls)}
        keys = [k for k in group_keys if k in data]
        known = {k: v for k, v in data.items() if k in names and k not in ("groups", "extra")}
        known = cls._typed(known, group_keys, where)
        extra = {k: v for k, v in data.items() if k not in names and k not in keys}
        groups = {"groups": {k: data[k] for k in keys}} if "groups" in names else {}
        return cls(**known, **groups, **({"extra": extra} if "extra" in names else {}))

    @classmethod
    def _typed(cls, known: dict, group_keys: Iterable[str], where: str | Path) -> dict:
        """The known fields as the record's constructor takes them (nested records read here)."""
        return known

    def save(self, path: Path) -> dict:
        """Write the record to ``path`` (key-sorted JSON, atomically: ``rules.files.write_json``); returns the
        data written."""
        data = printable(self.to_json())
        write_json(path, data)
        return data


# ---- task.json ----

@dataclass
class TaskMeta(_Record):
    """A rendered task's ``task.json``: ``task`` (its name), ``tier``, ``groups`` (the tier's labels),
    ``solution_files`` (the work-tree paths the agent is told to edit; [] when finding them is the task),
    ``test_files``, ``report`` (the runner report format ``rules.reports`` reads), ``test_cmd`` (the task's
    pre-existing tests' command, "" when none), ``graded`` ("tree": the work tree is graded; "patch": its
    patch on a fresh base, ``rules.worktree.graded_tree``) and the tier's own fields in ``extra``."""

    FORMAT: ClassVar[int] = TASK_FORMAT
    FIX: ClassVar[str] = "render the task again (`doit gen:<tier>`)"
    REQUIRED: ClassVar[dict] = {"task": str}
    OPTIONAL: ClassVar[tuple] = ("test_cmd", "graded", "report", "test_files")

    task: str
    tier: str | None = None
    groups: dict = field(default_factory=dict)
    solution_files: list = field(default_factory=list)
    test_files: list | None = None
    report: str | None = None
    test_cmd: str | None = None
    graded: str | None = None
    version: int = TASK_FORMAT
    extra: dict = field(default_factory=dict)

    def file(self) -> tuple[bytes, int]:
        """The task's ``task.json`` as a render's file: (indented, key-sorted JSON bytes, mode 0o644)."""
        import json

        return (json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n").encode(), 0o644

    @classmethod
    def read(cls, task_dir: Path, group_keys: Iterable[str] = ()) -> "TaskMeta":
        """The ``task.json`` of the task folder ``task_dir``. Raises RecordError (missing or damaged)."""
        import json

        path = Path(task_dir) / "task.json"
        try:
            return cls.from_json(json.loads(path.read_text(encoding="utf-8")), group_keys, path)
        except (OSError, ValueError) as exc:
            if isinstance(exc, RecordError):
                raise
            raise RecordError(f"{path}: cannot be read ({exc}); {cls.FIX}") from None


# ---- proof.json ----

@dataclass
class Proof(_Record):
    """A task's proof (``proof.json``, rules.prove): ``status`` kept, free or rejected (with ``reason``;
    ``environmental`` "timeout" or "out of memory" when the machine, not the task, decided it), ``tests`` (the
    test ids the reference passed), the ``reference`` and ``stub`` gradings (``Grade.to_json()``), ``seconds``;
    optionally ``before`` (the swe tier's base run), ``inputs`` (what it proved, ``build.proof_inputs``),
    ``batch`` (``{"size", "seconds"}`` when a batch proved it), ``notes`` (one line each: what a kept task
    holds that a reader of its numbers must know, e.g. a test left out of the expectations with its evidence;
    gen's summary prints them) and ``task_fields`` (fields publishing adds to the task's ``task.json``, where
    the proof found them: the swe tier's ``passed_at_base`` and ``flaky``)."""

    FORMAT: ClassVar[int] = PROOF_FORMAT
    FIX: ClassVar[str] = "prove the task again (`doit gen:<tier>`)"
    REQUIRED: ClassVar[dict] = {"task": str, "status": str}
    OPTIONAL: ClassVar[tuple] = ("before", "inputs", "batch", "seconds", "notes", "task_fields")

    task: str
    status: str = "rejected"
    groups: dict = field(default_factory=dict)
    reason: str = ""
    environmental: str | None = None
    tests: list = field(default_factory=list)
    reference: dict | None = None
    stub: dict | None = None
    seconds: float | None = None
    before: dict | None = None
    inputs: str | None = None
    batch: dict | None = None
    notes: list | None = None
    task_fields: dict | None = None
    version: int = PROOF_FORMAT
    extra: dict = field(default_factory=dict)

    @classmethod
    def of(cls, meta: TaskMeta, **fields) -> "Proof":
        """The proof of the task ``meta`` describes, its head (task, groups) taken from it."""
        return cls(task=meta.task, groups=dict(meta.groups), **fields)


# ---- a manifest entry ----

GRADE_SUMMARY = ("passed", "ran", "passed_tests", "failed_tests", "seconds")


@dataclass
class ManifestEntry(_Record):
    """One task of a tier's ``manifest.json``: its ``status`` (kept, free, rejected or unproven) and
    ``reason``, whether it is ``published``, the reference's test count (``tests``) and ids (``test_ids``),
    the reference and stub gradings in brief (``GRADE_SUMMARY``), ``seconds``, ``environmental`` and the
    proof's ``notes`` (when it has any)."""

    FORMAT: ClassVar[int] = MANIFEST_FORMAT
    FIX: ClassVar[str] = "publish the tier again (`doit gen:<tier>`)"
    REQUIRED: ClassVar[dict] = {"task": str, "status": str}
    OPTIONAL: ClassVar[tuple] = ("seconds", "environmental", "tests", "test_ids", "reference", "stub",
                                 "published", "notes")

    task: str
    status: str
    groups: dict = field(default_factory=dict)
    reason: str | None = None
    seconds: float | None = None
    environmental: str | None = None
    tests: int | None = None
    test_ids: list | None = None
    reference: dict | None = None
    stub: dict | None = None
    published: bool | None = None
    notes: list | None = None
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        out = super().to_json()
        if self.status != "unproven":  # a proven task's entry always carries these, null or not
            out.update(seconds=self.seconds, environmental=self.environmental, reference=self.reference,
                       stub=self.stub)
        return out

    @classmethod
    def unproven(cls, task: str, groups: dict) -> "ManifestEntry":
        """The entry of a task not proven yet."""
        return cls(task=task, status="unproven", groups=dict(groups),
                   reason="not proven yet: run doit gen:<tier> with a selection that includes it")

    @classmethod
    def of(cls, proof: Proof, published: bool, strict: bool) -> "ManifestEntry":
        """The entry of a proven task: ``published`` when it was copied to the tier's tasks; a free task left
        out because of ``strict`` says so in its reason."""
        ref, stub = proof.reference or {}, proof.stub or {}
        reason = "free task left out by strict=1" if proof.status == "free" and strict else proof.reason
        return cls(task=proof.task, status=proof.status, groups=dict(proof.groups), reason=reason,
                   seconds=proof.seconds, environmental=proof.environmental, tests=ref.get("ran", 0),
                   test_ids=proof.tests or [], reference={k: ref.get(k) for k in GRADE_SUMMARY} if ref else None,
                   stub={k: stub.get(k) for k in GRADE_SUMMARY} if stub else None, published=published,
                   notes=list(proof.notes) if proof.notes else None)


# ---- a trial's result.json ----

@dataclass
class TryRecord(_Record):
    """One try of a trial (an entry of result.json's ``tries``): its number, ``outcome`` (pass, fail, timeout,
    over_budget, tampered, error), ``note``, ``grade`` (``Grade.to_json()``; None when not graded; ``reused_from_try`` when an
    earlier try's grading stands for it), ``usage``, ``agent`` (exit code, timed out, stopped, seconds, ...), the
    special files removed from the work tree, the ``/lab/out`` files kept, ``work_archive`` (the kept work
    tree's file name, or None), and optionally ``work_digest``, ``rate_limit_retries``, ``suspicions`` (the
    suspicion scan's flags on the graded change, ``rules.scan.scan``: [] when it found none; absent when the try
    was not graded, or was graded before the scan), ``trajectory`` (the file name of the try's normalised
    trajectory, ``trajectory-<n>.json``, ``rules.adapters``) and ``gateway_usage`` (the requests and tokens lab's
    gateway counted, beside the ``usage`` the agent reports)."""

    FIX: ClassVar[str] = "run the trial again"
    OPTIONAL: ClassVar[tuple] = ("work_digest", "rate_limit_retries", "suspicions", "trajectory", "gateway_usage")

    number: int
    outcome: str = "fail"
    note: str = ""
    grade: dict | None = None
    usage: dict | None = None
    agent: dict = field(default_factory=dict)
    removed_special_files: list = field(default_factory=list)
    out_files: list = field(default_factory=list)
    work_archive: str | None = None
    work_digest: str | None = None
    rate_limit_retries: list | None = None
    suspicions: list | None = None
    trajectory: str | None = None  # the try's trajectory file in the trial's folder (rules.adapters)
    gateway_usage: dict | None = None  # what lab's gateway counted for this try (rules.trial.gateway_usage)
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        out = super().to_json()
        return {"try": out.pop("number"), **out}

    @classmethod
    def from_json(cls, data: Any, group_keys: Iterable[str] = (), where: str | Path = "a try record"):
        if not isinstance(data, dict) or not isinstance(data.get("try"), int):
            raise RecordError(f"{where}: a try without its number (field 'try'); {cls.FIX}")
        return super().from_json({k: v for k, v in data.items() if k not in ("try", "number")}
                                 | {"number": data["try"]}, (), where)


@dataclass
class TrialResult(_Record):
    """A trial's ``result.json`` (rules.trial): who ran what (tier, task, groups, agent, run, settings,
    label, repeat), how it ended (``status``, ``passed_try``, ``tries`` as ``TryRecord``s, ``tries_allowed``,
    ``error`` and ``error_kind``, ``tests``), what it cost (agent, grading and wall seconds, ``usage``), when
    (``started``, ``finished``), what it depended on (``key``: ``{"format", "run", "grade"}``; ``graded``), the
    notes, the disk cap, the image tags and ids, the grader's toolchains and the agent's container mode;
    optionally the ``service`` the agent used and the ``backend`` that ran it."""

    FORMAT: ClassVar[int] = TRIAL_RECORD_FORMAT
    FIX: ClassVar[str] = "run the trial again (`doit run agent=<agent>`: a damaged record counts as missing)"
    REQUIRED: ClassVar[dict] = {"task": str, "status": str}
    OPTIONAL: ClassVar[tuple] = ("disk", "agent_container", "service", "backend")

    task: str = ""
    agent: str = ""
    tier: str | None = None
    groups: dict = field(default_factory=dict)
    run: str = ""
    settings: dict = field(default_factory=dict)
    label: str = ""
    repeat: int = 1
    status: str = "error"
    passed_try: int | None = None
    tries: list = field(default_factory=list)
    tries_allowed: int = 1
    error: str | None = None
    error_kind: str | None = None
    tests: dict = field(default_factory=lambda: {"ran": 0, "passed": 0, "failed": 0})
    agent_seconds: float = 0.0
    grading_seconds: float = 0.0
    seconds: float = 0.0
    usage: dict | None = None
    started: str = ""
    finished: str | None = None
    key: dict | None = None
    graded: dict | None = None
    notes: list = field(default_factory=list)
    disk: dict | None = None
    images: dict = field(default_factory=dict)
    toolchains: dict = field(default_factory=dict)
    agent_container: str | None = None
    service: dict | None = None
    backend: dict | None = None
    version: int = TRIAL_RECORD_FORMAT
    extra: dict = field(default_factory=dict)

    @classmethod
    def _typed(cls, known: dict, group_keys: Iterable[str], where: str | Path) -> dict:
        tries = known.get("tries") or []
        if not isinstance(tries, list):
            raise RecordError(f"{where}: field 'tries' should be a list, it is {tries!r}; {cls.FIX}")
        return {**known, "tries": [TryRecord.from_json(t, (), f"{where}, try {i}") for i, t in enumerate(tries, 1)]}


# ---- a swe trial's result.json ----

@dataclass
class SweResult(_Record):
    """A swe trial's ``result.json`` (rules.tiers.swe.swerun): the task, its groups, the run, its agents and their
    settings, the ``attempts`` (one record each, ``swerun``'s ``_attempt_record`` with the measure's fields),
    the ``chosen`` attempt, whether it was ``plausible`` and ``resolved``, ``status`` (the chosen attempt's),
    ``error`` and ``error_kind``, ``tests``, usage and seconds, the time stamps, ``key``, ``graded`` (after a
    re-grading), the environment image and, as a trial's result, ``passed_try`` and ``tries`` (none)."""

    FORMAT: ClassVar[int] = SWE_TRIAL_FORMAT
    FIX: ClassVar[str] = "run the trial again (`doit run suite=<its tier> ...`: a damaged record counts as missing)"
    REQUIRED: ClassVar[dict] = {"task": str, "status": str, "attempts": list}
    OPTIONAL: ClassVar[tuple] = ("graded", "backend")

    task: str
    tier: str | None = None
    groups: dict = field(default_factory=dict)
    run: str = ""
    label: str = ""
    agent: str = ""
    agents: list = field(default_factory=list)
    agent_settings: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    repeat: int = 1
    status: str = "error"
    resolved: bool = False
    plausible: bool | None = None
    chosen: int | None = None
    attempts_allowed: int = 1
    attempts: list = field(default_factory=list)
    error: str | None = None
    error_kind: str | None = None
    tests: dict = field(default_factory=lambda: {"ran": 0, "passed": 0, "failed": 0})
    usage: dict | None = None
    agent_seconds: float = 0.0
    grading_seconds: float = 0.0
    seconds: float = 0.0
    started: str = ""
    finished: str | None = None
    key: dict | None = None
    passed_try: int | None = None
    tries: list = field(default_factory=list)
    images: dict = field(default_factory=dict)
    graded: dict | None = None
    backend: dict | None = None
    version: int = SWE_TRIAL_FORMAT
    extra: dict = field(default_factory=dict)
