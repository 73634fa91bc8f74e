"""Building a tier: stage each rendered task, prove it, publish the kept ones with a manifest.

Tier-agnostic: a tier module (``rules.tiers.aider.exercises``) supplies ``discover``/``render``; this module does the
rest. Layout under ``.lab/build/<tier>/<task>/``: ``task/`` and ``answer/`` (the staged render),
``render.json`` (digest of the render, or the reason it failed), ``proof.json`` (the proof record),
``batch-proof.json`` (for a moment: a proof a batch made, until the task's own prove step takes it) and
``logs/``. Publishing copies kept (and free) tasks to ``evals/<tier>/tasks/`` and their reference
solutions to ``evals/<tier>/answers/``, removes the others, and writes ``evals/<tier>/manifest.json``.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable

from rules.config import Limits, Suite
from rules.files import read_json, replace_tree, write_if_changed, write_json
from rules.grade import TESTS_FILE
from rules.records import MANIFEST_FORMAT, ManifestEntry, Proof, TaskMeta



def stage(build: Path, files: dict[str, tuple[bytes, int]] | None, answers: dict[str, tuple[bytes, int]] | None,
          error: str | None, meta: dict) -> bool:
    """Write one render into ``build`` (``.lab/build/<tier>/<task>``): ``task/`` and ``answer/`` hold exactly
    ``files`` and ``answers`` (path → (content, mode)); unchanged files are not rewritten, stale ones are
    removed. ``render.json`` records the digests, or ``error`` when the exercise could not be rendered.
    Returns True when ``render.json`` changed (the task must be proved again)."""
    digests: dict[str, dict[str, str]] = {}
    for sub, content in (("task", files), ("answer", answers)):
        root = build / sub
        if content is None:
            shutil.rmtree(root, ignore_errors=True)
            continue
        for rel, (data, mode) in content.items():
            write_if_changed(root / rel, data, mode)
        for p in sorted(root.rglob("*"), reverse=True):
            rel = p.relative_to(root).as_posix()
            if p.is_file() and rel not in content:
                p.unlink()
            elif p.is_dir() and not any(p.iterdir()):
                p.rmdir()
        from rules.files import sha256_bytes
        digests[sub] = {rel: f"{sha256_bytes(data)}:{mode:o}" for rel, (data, mode) in sorted(content.items())}
    record = {"meta": meta, "error": error, "digests": digests}
    return write_json(build / "render.json", record, only_if_changed=True)


BATCH_PROOF = "batch-proof.json"  # in a task's build folder: {"inputs", "proof"} a batch proof left for it


def proof_inputs(build: Path, *, image: str, limits: Limits, stamp: Path | None) -> str:
    """A digest of everything a proof of the staged task in ``build`` depends on: its ``render.json`` (the
    digests of every task and answer file), the image's stamp file (which build of the image), the image tag
    and the limits. Two proofs with the same inputs prove the same thing."""
    from rules.files import sha256_bytes

    def content(p: Path | None) -> bytes:
        try:
            return p.read_bytes() if p else b""
        except FileNotFoundError:
            return b""

    parts = [content(build / "render.json"), content(stamp), image.encode(), repr(limits).encode()]
    return sha256_bytes(b"\0".join(sha256_bytes(x).encode() for x in parts))


def prove_staged(build: Path, *, image: str, limits: Limits, stamp: Path | None = None,
                 group_keys: tuple[str, ...] = (), prove: Callable[..., dict] | None = None) -> dict:
    """Prove the staged task in ``build`` and write ``proof.json`` atomically; returns the proof record.

    ``prove`` is the tier's proof (``rules.prove.prove`` by default: called with the task and answer folders,
    ``image``, ``limits``, ``meta``, ``group_keys`` and ``log_dir``); ``group_keys`` are the tier's (copied from
    the task's meta into the proof). A render that failed becomes a ``rejected`` proof with the render's reason,
    without any container. With ``stamp`` (the image's stamp file) the proof records its ``inputs``
    (``proof_inputs``), and a proof a batch left in ``batch-proof.json`` for exactly these inputs
    (``prove_batch_staged``) is taken as it is, without a container; any other is ignored and the task proven
    alone. A ``proof.json`` already there for exactly these inputs, not rejected for the machine's sake, is
    returned as it is (a command killed after proving it, before doit wrote its database at the end, must not
    cost the proof again). Raises SandboxError on an infrastructure problem (then no proof is written, and the
    next run retries).
    """
    if prove is None:
        from rules.prove import prove

    render = read_json(build / "render.json")
    meta = render["meta"]
    inputs = proof_inputs(build, image=image, limits=limits, stamp=stamp) if stamp is not None else None
    batched = read_json(build / BATCH_PROOF) if inputs else None
    made = _made(build / "proof.json", inputs)
    if made is not None:
        # proved before with exactly these inputs, by a command killed before doit recorded it (doit's database
        # is written when a command ends): it stands; reprove=1 still proves an environmental rejection again
        return made
    if render.get("error"):
        head = TaskMeta.from_json(meta, group_keys, build / "render.json")
        record = Proof.of(head, reason=render["error"], seconds=0.0).to_json()
    elif isinstance(batched, dict) and batched.get("inputs") == inputs and isinstance(batched.get("proof"), dict):
        record = batched["proof"]
    else:
        record = prove(build / "task", build / "answer", image=image, limits=limits, meta=meta,
                       group_keys=group_keys, log_dir=build / "logs")
    if inputs:
        record["inputs"] = inputs
    write_json(build / "proof.json", record)  # the one writer of proof.json, for every tier
    (build / BATCH_PROOF).unlink(missing_ok=True)
    return record


def _made(path: Path, inputs: str | None) -> dict | None:
    """The proof at ``path`` when it proved exactly ``inputs`` (``proof_inputs``) and was not rejected for the
    machine's sake, else None (no inputs, no proof, a damaged one, other inputs)."""
    if inputs is None:
        return None
    try:
        record = read_json(path)
    except (ValueError, UnicodeDecodeError):
        return None
    ok = isinstance(record, dict) and record.get("inputs") == inputs and not record.get("environmental")
    return record if ok else None


def prove_batch_staged(builds: list[Path], runner_of: Callable[[dict], object], *, image: str, limits: Limits,
                       stamp: Path, group_keys: tuple[str, ...] = (), out=sys.stderr) -> int:
    """Prove together, in batches (``rules.prove.prove_batch``), the staged tasks among ``builds`` whose proof
    is not current (its ``inputs`` differ from ``proof_inputs``, or it is missing or environmental) and whose
    track has a batch runner; leave each batch proof in the task's ``batch-proof.json`` with the inputs it
    proved, for ``prove_staged`` to take. ``runner_of(meta)`` gives a rendered task's ``rules.prove.BatchRunner``
    (None: its track proves task by task); a batch holds tasks of one runner. Fewer than two such tasks: nothing is done (a proof of its own costs
    the same). Returns how many tasks got a batch proof; the others are proven alone by ``prove_staged``.
    Never raises for a batch that could not run (it says so on ``out``): the tasks are then proven alone.
    ``group_keys``: the tier's, copied into the proofs."""
    from rules.prove import BATCH_MAX, BatchItem, prove_batch

    items, inputs = [], {}
    for build in builds:
        render = read_json(build / "render.json")
        if not isinstance(render, dict) or render.get("error") or runner_of(render.get("meta") or {}) is None:
            continue
        digest = proof_inputs(build, image=image, limits=limits, stamp=stamp)
        proof = read_json(build / "proof.json")
        if isinstance(proof, dict) and proof.get("inputs") == digest and not proof.get("environmental"):
            continue
        inputs[render["meta"]["task"]] = (build, digest)
        items.append(BatchItem(build / "task", build / "answer", render["meta"], build / "logs", tuple(group_keys)))
    if len(items) < 2:
        return 0
    start, done = time.monotonic(), 0
    by_runner: dict = {}
    for item in items:
        by_runner.setdefault(runner_of(item.meta), []).append(item)
    chunks = [(runner, group[k:k + BATCH_MAX]) for runner, group in by_runner.items()
              for k in range(0, len(group), BATCH_MAX)]
    for runner, chunk in chunks:
        try:
            records = prove_batch(chunk, runner, image=image, limits=limits)
        except Exception as exc:  # noqa: BLE001  the tasks are proven alone: nothing is lost but time
            print(f"[batch] {len(chunk)} tasks not proven together ({exc.__class__.__name__}: {exc}); each is "
                  f"proven alone", file=out, flush=True)
            continue
        for task, record in records.items():
            build, digest = inputs[task]
            write_json(build / BATCH_PROOF, {"inputs": digest, "proof": record})
        done += len(records)
    left = len(items) - done
    rest = "" if not left else f"; the other {left} {'is' if left == 1 else 'are'} proven alone"
    print(f"[batch] {done} of {len(items)} tasks proven together in {time.monotonic() - start:.0f}s{rest}",
          file=out, flush=True)
    return done


class Progress:
    """Prints ``[prove 12/40] task: status (s) | kept K, free F, rejected R | elapsed, ETA`` as proofs finish.

    ``total`` is how many proofs this run knows up front it will make (a proof older than its task's render or
    image, or none), ``most`` (when known) how many it can make at most: the chosen tasks. Which others need a proof
    is known only as the run goes on (a render that changes, an image rebuilt, other limits), so the first proof
    states both, and a count past ``total`` says so instead of raising the total. Shared by the worker threads of
    one doit run. The clock starts when the first proof does (``begin``), so an image built before it is not
    counted as proving.
    """

    def __init__(self, total: int = 0, out=None, most: int | None = None):
        self.total, self.most, self.out, self.start, self.counts = total, most, out, None, Counter()

    def begin(self) -> None:
        """A proof (or a batch of them) starts: the first one starts the clock and states the total."""
        if self.start is None:
            self.start = time.monotonic()
            if self.most is not None and self.most > self.total:
                print(f"[prove] {self.total} of the {self.most} chosen tasks need a proof now; another is proved too "
                      "when its render or image changes during this run, so the count may pass "
                      f"{self.total} (at most {self.most})", file=self.out or sys.stderr, flush=True)

    def done(self, record: dict) -> None:
        self.begin()
        self.counts[record["status"]] += 1
        n = sum(self.counts.values())
        elapsed = time.monotonic() - self.start
        if n <= self.total:
            count, left = f"{n}/{self.total}", self.total - n
        else:  # past what was known up front: no ETA for proofs nobody can count yet
            count, left = f"{n}, past the {self.total} known up front" + (
                f", at most {self.most}" if self.most is not None else ""), 0
        eta = f", ~{elapsed / n * left:.0f}s left" if n and left else ""
        tally = ", ".join(f"{k} {self.counts[k]}" for k in ("kept", "free", "rejected") if self.counts[k])
        reason = f" ({record['reason']})" if record["status"] == "rejected" else ""
        print(f"[prove {count}] {record['task']}: {record['status']}{reason} "
              f"in {record.get('seconds', 0):.1f}s | {tally} | {elapsed:.0f}s elapsed{eta}",
              file=self.out or sys.stderr, flush=True)


def publish(suite: Suite, tasks: list[str], strict: bool = False, selection: dict | None = None,
            group_keys: tuple[str, ...] = (), labels: dict[str, dict] | None = None) -> dict:
    """Publish the proven tasks among ``tasks`` (every task of the tier that still exists upstream) and write
    the manifest; returns it.

    Kept and free tasks (free only when not ``strict``) are copied to ``evals/<tier>/tasks/<task>/`` with
    their reference solution in ``evals/<tier>/answers/<task>/``; a task folder whose content is unchanged
    is left alone. Every other folder there is removed. Tasks not yet proven are listed with status
    ``unproven``. Each entry (``rules.records.ManifestEntry``) carries the task's groups (``group_keys``: the
    tier's; an unproven task's from its render, else from ``labels``, task → groups, when the tier knows them
    without rendering); the manifest's ``languages`` counts the statuses per label of the first group key.
    """
    entries: list[ManifestEntry] = []
    published: set[str] = set()
    for task in sorted(tasks):
        build = suite.build_dir / task
        proof = read_json(build / "proof.json")
        if proof is None:
            meta = (read_json(build / "render.json") or {}).get("meta", {"task": task})
            known = (labels or {}).get(task, {})
            groups = {k: meta.get(k) or known.get(k) for k in group_keys}
            entries.append(ManifestEntry.unproven(task, groups))
            continue
        proof = Proof.from_json(proof, group_keys, build / "proof.json")
        keep = proof.status == "kept" or (proof.status == "free" and not strict)
        if keep:
            record = read_json(build / SYNC_RECORD) or {}
            extra = {TESTS_FILE: _tests_json(proof.tests)}
            if proof.task_fields:  # what the proof found that the task's own record must say (Proof.task_fields)
                extra[TASK_FILE] = _task_json(build / "task" / TASK_FILE, proof.task_fields)
            synced = {"task": _sync(build / "task", suite.tasks_dir / task, extra, record.get("task")),
                      "answer": _sync(build / "answer", suite.answers_dir / task, None, record.get("answer"))}
            write_json(build / SYNC_RECORD, synced, only_if_changed=True)
            published.add(task)
        entries.append(ManifestEntry.of(proof, keep, strict))
    for root in (suite.tasks_dir, suite.answers_dir):
        if root.is_dir():
            for d in root.iterdir():
                if d.name not in published and not d.name.startswith("."):
                    shutil.rmtree(d) if d.is_dir() else d.unlink()
    manifest = _manifest(suite, strict, selection, [e.to_json() for e in entries], len(published), group_keys)
    write_json(suite.manifest_path, manifest, only_if_changed=True)
    return manifest


def _manifest(suite: Suite, strict: bool, selection: dict | None, entries: list[dict], published: int,
              group_keys: tuple[str, ...]) -> dict:
    """``manifest.json``'s data: the entries, counts by status and, by the first group's label, ``languages``."""
    counts = Counter(e["status"] for e in entries)
    by_group: dict[str, Counter] = {}
    for e in entries:
        label = e.get(group_keys[0]) if group_keys else None
        by_group.setdefault(label or "?", Counter())[e["status"]] += 1
    return {"version": MANIFEST_FORMAT, "tier": suite.name, "strict": strict, "selection": selection or {},
            "counts": dict(sorted(counts.items())), "published": published,
            "languages": {k: dict(sorted(v.items())) for k, v in sorted(by_group.items())}, "tasks": entries}


def _tests_json(tests: list[str]) -> bytes:
    """A published task's ``tests.json``: the test ids its reference solution passed (``tests``), which every
    grading of the task must see pass (rules.grade.expected_tests)."""
    return (json.dumps({"version": 1, "tests": sorted(tests or [])}, indent=2) + "\n").encode()


TASK_FILE = "task.json"


def _task_json(staged: Path, fields: dict) -> bytes:
    """A published task's ``task.json``: the staged one with the proof's ``fields`` laid over it, written as a
    render writes it (``rules.records.TaskMeta.file``: sorted keys, two-space indent)."""
    meta = {**(read_json(staged) or {}), **fields}
    return (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode()


SYNC_RECORD = "published.json"  # in a task's build folder: what its last publish found (see _sync)


def _signature(root: Path) -> list | None:
    """Every file below ``root`` with its size, modification time (ns) and mode, by path: a cheap stand-in for
    its contents (stat only, nothing read). None when ``root`` is not a folder."""
    if not root.is_dir():
        return None
    out = []
    for top, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(top, name)
            st = os.lstat(path)
            out.append([os.path.relpath(path, root), st.st_size, st.st_mtime_ns, st.st_mode])
    return out


def _sync(src: Path, dst: Path, extra: dict[str, bytes] | None = None, last: dict | None = None) -> dict:
    """Make ``dst`` a copy of ``src`` (modes kept) plus the ``extra`` files (name → content); a no-op when
    the contents already match. Returns the record to pass as ``last`` next time: when neither tree's files
    changed size, time or mode since then (and ``extra`` is the same), nothing is read at all, so publishing a
    tier where one task changed reads only that task's files."""
    from rules.files import sha256_bytes, tree_digest

    extra = extra or {}
    extra_digest = {name: sha256_bytes(data) for name, data in sorted(extra.items())}
    if last and last.get("extra") == extra_digest and last.get("src") == _signature(src) \
            and last.get("dst") is not None and last.get("dst") == _signature(dst):
        return last
    want = {**tree_digest(src), **extra_digest}
    if not (dst.is_dir() and tree_digest(dst) == want):
        staged = dst.with_name(f".{dst.name}.new")
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(src, staged, copy_function=shutil.copy)
        for name, data in extra.items():
            (staged / name).write_bytes(data)
        replace_tree(staged, dst)
    return {"src": _signature(src), "dst": _signature(dst), "extra": extra_digest}


def summary(manifest: dict, selection_vars: tuple[str, ...] = ()) -> str:
    """A few lines for the terminal: counts per language (the swe tier: repository) and status, unproven
    included, the tasks outside every selection so far (``unproven``, under their label or ``"?"``) with the
    tier's ``selection_vars`` that would prove them, the proofs' notes and the rejections with reasons."""
    lines = [f"tier {manifest['tier']}: " + ", ".join(f"{v} {k}" for k, v in manifest["counts"].items())
             + f"; {manifest['published']} published"]
    for lang, counts in manifest["languages"].items():
        if lang != "?":
            lines.append(f"  {lang:11} " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    # every unproven task, under "?" (never rendered) or its own label (a tier that knows it: Selection.labels)
    outside = sum(counts.get("unproven", 0) for counts in manifest["languages"].values())
    if outside:
        wider = [f"{n}=" for n in selection_vars if n != "all"]
        how = " or a wider ".join(["all=1"] * ("all" in selection_vars) + ["/".join(wider)] * bool(wider))
        lines.append(f"  outside every selection so far: {outside} tasks not proven (not a failure"
                     + (f"; {how} proves them)" if how else ")"))
    for e in manifest["tasks"]:
        for note in e.get("notes") or ():
            lines.append(f"  {e['status']} {e['task']}: {note}")
        if e["status"] == "rejected":
            again = (" (the machine's doing: proved again when its inputs or limits change, or with reprove=1)"
                     if e.get("environmental") else "")
            lines.append(f"  rejected {e['task']}: {e['reason']}{again}")
    return "\n".join(lines)
