"""Work trees: laying them from a task (its ``setup.sh``, the reference solution over it), keeping them
(``archive_work``/``unpack_work``), measuring and checking what an agent left (``tree_size``,
``tree_problem``, ``remove_special_files``, ``work_digest``, ``work_diff``) and the tree a grading reads
(``graded_tree``: the work tree itself, or its patch laid on a fresh base when the task's ``task.json`` says
``"graded": "patch"``). Knows no tier, no agent and no container: trials and proofs build on it.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tarfile
import tempfile
from pathlib import Path

from rules.files import read_json, write_atomic

DIFF_CAP = 1024 * 1024  # bytes of work.diff kept
SCAN_CAP = 16 * 1024 * 1024  # bytes of a graded change the suspicion scan reads (rules.scan)
WORK_TREE_DEPTH = 200  # a work tree (or /lab/out) with folders nested deeper than this is not read by lab


def lay_work_tree(task_dir: Path, work_tree: Path, answer_dir: Path | None = None) -> None:
    """Run the task's ``setup.sh`` into ``work_tree``; then lay the reference solution from ``answer_dir``
    over it when given. Raises RuntimeError with setup.sh's output when it fails."""
    # no `git gc --auto` in the background after setup.sh's commit: a tree of more files than gc.auto (6,700; django's
    # 6,800) would start one, still writing into .git while the caller removes or copies the tree
    env = {**os.environ, "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "gc.auto", "GIT_CONFIG_VALUE_0": "0"}
    proc = subprocess.run(["sh", str(Path(task_dir) / "setup.sh"), str(work_tree)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"setup.sh failed ({proc.returncode}): {proc.stderr.strip()[:2000]}")
    if answer_dir is not None:
        for p in sorted(Path(answer_dir).rglob("*")):
            if p.is_file():
                dst = Path(work_tree) / p.relative_to(answer_dir)
                dst.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(dst, p.read_bytes(), p.stat().st_mode & 0o777)


def lay_work_tree_like(task_dir: Path, laid: Path, work_tree: Path) -> None:
    """Lay ``work_tree`` exactly as ``lay_work_tree(task_dir, work_tree)`` would, given ``laid``, a tree it laid
    from the same task and nothing changed since: for a task of a tier whose ``setup_copies`` is true (its
    setup.sh only copies, ``rules.tier.Tier``) a copy of ``laid`` as ``cp -R`` makes one (the same paths,
    contents, permission bits and symlinks, stored as links; fresh mtimes) without a shell, else its setup.sh
    again. Raises RuntimeError as ``lay_work_tree`` does."""
    if not _setup_copies(task_dir):
        lay_work_tree(task_dir, work_tree)
        return
    laid, work_tree = Path(laid), Path(work_tree)
    folders = []
    try:
        for root, dirs, files in os.walk(laid):
            dst_root = work_tree / os.path.relpath(root, laid)
            dst_root.mkdir(mode=0o700, parents=True, exist_ok=True)
            folders.append((dst_root, os.stat(root).st_mode))
            for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
                src, dst = os.path.join(root, name), dst_root / name
                if os.path.islink(src):
                    os.symlink(os.readlink(src), dst)
                else:
                    shutil.copyfile(src, dst)
                    os.chmod(dst, stat.S_IMODE(os.lstat(src).st_mode))
        for folder, mode in reversed(folders):  # last: a folder without write permission is filled first
            os.chmod(folder, stat.S_IMODE(mode))
    except OSError as exc:
        raise RuntimeError(f"copying the work tree {laid} to {work_tree} failed: {exc}") from None


def _setup_copies(task_dir: Path) -> bool:
    """Whether the tier of the task in ``task_dir`` (its task.json's ``tier``) declares that its setup.sh only
    copies; a task of no known tier runs its setup.sh (always right, only slower)."""
    from rules import tiers
    from rules.config import ConfigError

    tier = (read_json(Path(task_dir) / "task.json") or {}).get("tier")
    try:
        return bool(tier) and bool(getattr(tiers.get(tier), "setup_copies", False))
    except ConfigError:
        return False


def archive_work(work: Path, path: Path) -> None:
    """Write the tree ``work`` to the gzip'd tar ``path`` (atomically): symlinks are stored as links, never
    followed; only regular files, folders and links (``remove_special_files`` ran before)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    with tarfile.open(tmp, "w:gz", compresslevel=6) as tar:
        for folder, dirs, files in os.walk(work, followlinks=False):
            dirs.sort()
            for name in sorted(dirs) + sorted(files):
                p = Path(folder) / name
                tar.add(p, arcname=p.relative_to(work).as_posix(), recursive=False)
    os.replace(tmp, path)


def unpack_work(path: Path, dest: Path) -> None:
    """Lay the work tree kept in ``path`` (``archive_work``) into the folder ``dest``; symlinks come back as
    links, and no member can land outside ``dest``."""
    Path(dest).mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "r:gz") as tar:
        if hasattr(tarfile, "tar_filter"):
            tar.extractall(dest, filter="tar")
        else:  # Python < 3.11.4: check by hand what the filter checks
            root = os.path.realpath(dest)
            for m in tar.getmembers():
                target = os.path.realpath(os.path.join(root, m.name))
                if os.path.commonpath([root, target]) != root or not (m.isfile() or m.isdir() or m.issym()):
                    raise tarfile.TarError(f"{path}: member {m.name!r} is not a work-tree file")
            tar.extractall(dest)


def remove_special_files(root: Path) -> list[str]:
    """Remove everything below ``root`` that is not a regular file, folder or symlink (device nodes, fifos,
    sockets an agent may create: reading them on the host could hang or read host devices). Returns their
    relative paths. Never follows symlinks."""
    removed = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in files + dirs:
            p = Path(folder) / name
            mode = p.lstat().st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                p.unlink()
                removed.append(p.relative_to(root).as_posix())
    return sorted(removed)


def tree_problem(root: Path) -> str | None:
    """Why lab will not read the tree ``root`` the agent wrote (its work tree, its ``/lab/out``), or None:
    folders nested deeper than ``WORK_TREE_DEPTH`` (lab's walks, ``shutil.rmtree`` and ``tarfile`` recurse:
    a deeper tree would crash them) or an entry that cannot be listed or stat'ed (e.g. a path longer than the
    system allows). Walks iteratively, so no tree can crash it."""
    stack = [(os.fspath(root), 0)]
    while stack:
        folder, depth = stack.pop()
        if depth > WORK_TREE_DEPTH:
            return f"folders nested deeper than {WORK_TREE_DEPTH} levels"
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, depth + 1))
                    else:
                        entry.stat(follow_symlinks=False)
        except OSError as exc:
            return f"{exc.strerror or exc} at depth {depth}"
    return None


def remove_tree(path: Path) -> None:
    """Remove the folder ``path`` and everything in it, however deep (``rm -rf``: ``shutil.rmtree`` recurses
    and fails on a tree deeper than Python's recursion limit); a missing folder is fine."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        subprocess.run(["rm", "-rf", "--one-file-system", "--", os.fspath(path)], check=False)


def fresh_folder(folder: Path) -> Path:
    """Make ``folder`` an empty folder (whatever was there removed, however deep); returns it."""
    remove_tree(folder)
    folder.mkdir(parents=True)
    return folder


def tree_size(root: Path) -> int:
    """Bytes of the regular files below ``root`` (symlinks not followed)."""
    total = 0
    for folder, _dirs, files in os.walk(root, followlinks=False):
        for name in files:
            st = (Path(folder) / name).lstat()
            if stat.S_ISREG(st.st_mode):
                total += st.st_size
    return total


def work_diff(stub: Path, work: Path, cap: int = DIFF_CAP) -> str:
    """``diff -ruN`` of the work tree against the stub (symlinks compared, not followed), labelled ``stub/``
    and ``work/`` wherever the two trees are and whatever their names (two trees of one name in two folders are
    still two trees), cut to ``cap`` bytes."""
    with tempfile.TemporaryDirectory(prefix="lab-diff-") as tmp:
        # the labels are links in a folder of lab's own; the trailing "/" goes through them, --no-dereference
        # keeps every link inside the trees a link
        os.symlink(Path(stub).resolve(), Path(tmp) / "stub")
        os.symlink(Path(work).resolve(), Path(tmp) / "work")
        proc = subprocess.run(["diff", "-ruN", "--no-dereference", "stub/", "work/"], cwd=tmp,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout
    if len(out) > cap:
        out = out[:cap] + f"\n[... {len(proc.stdout) - cap} bytes of diff cut by lab ...]\n".encode()
    return out.decode("utf-8", errors="replace")


def work_digest(root: Path) -> str:
    """SHA-256 (hex) of everything a grading can read of the tree ``root``: every entry's relative path and
    kind, a file's content and mode bits, a folder's mode bits, a symlink's target (never followed). Two trees
    with the same digest grade alike (modification times are left out: the grader builds from scratch)."""
    h = hashlib.sha256()
    root = Path(root)
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(dirs) + sorted(files):
            p = Path(folder) / name
            rel = os.fsencode(p.relative_to(root).as_posix())
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                h.update(b"l\0" + rel + b"\0" + os.fsencode(os.readlink(p)) + b"\0")
            elif stat.S_ISDIR(st.st_mode):
                h.update(b"d\0" + rel + b"\0" + oct(stat.S_IMODE(st.st_mode)).encode() + b"\0")
            else:
                h.update(b"f\0" + rel + b"\0" + oct(stat.S_IMODE(st.st_mode)).encode() + b"\0")
                with open(p, "rb") as f:
                    h.update(hashlib.file_digest(f, "sha256").digest() if hasattr(hashlib, "file_digest")
                             else hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def work_patch(task_dir: Path, work_tree: Path) -> str:
    """An agent's work as a patch: the diff from the task's base tree (laid afresh by its setup.sh) to the files
    of ``work_tree`` (``rules.upstream.diff_against``: the agent's own ``.git``, ignored files, byte code and test
    caches left out). Empty when the agent changed nothing."""
    from rules.upstream import diff_against

    with tempfile.TemporaryDirectory(prefix="lab-base-") as tmp:
        base = Path(tmp) / "base"
        lay_work_tree(Path(task_dir), base)
        return diff_against(base, work_tree)


def graded_diff(task_dir: Path, stub: Path, graded: Path, cap: int = SCAN_CAP) -> str:
    """The change a grading read, as a unified diff cut to ``cap`` bytes: for a task graded as a patch, the
    patch the ``graded`` tree (``graded_tree``'s: a fresh base with the patch applied) holds against its own
    base commit (``diff_against``, git's format; only that scratch tree's ``.git`` takes the objects), else
    ``diff -ruN`` of ``graded`` against the ``stub`` (``work_diff``)."""
    if (read_json(Path(task_dir) / "task.json") or {}).get("graded") == "patch":
        from rules.upstream import diff_against

        return diff_against(graded, graded)[:cap]
    return work_diff(stub, graded, cap)


def graded_tree(task_dir: Path, work: Path, dest: Path) -> tuple[Path, str]:
    """The tree a grading reads for the agent's ``work``: the work tree itself, or, for a task whose task.json
    says ``"graded": "patch"``, a fresh base laid at ``dest`` with the work tree's patch applied (``work_patch``),
    so a trial's verdict and the prediction made of it mean the same. Returns (tree, note); the note says when
    the patch did not apply (the base is graded then)."""
    if (read_json(Path(task_dir) / "task.json") or {}).get("graded") != "patch":
        return work, ""
    from rules.upstream import apply_patch

    patch = work_patch(task_dir, work)
    shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    lay_work_tree(task_dir, dest)
    problem = apply_patch(dest, patch) if patch.strip() else None
    return dest, (f"the work tree's patch does not apply to a fresh base ({problem}); the base was graded"
                  if problem else "")
