"""A tier's upstream checkout (GitPython): clone or fetch, then check out the pinned ref.

The only module that imports ``git``.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

SHA = re.compile(r"^[0-9a-f]{40}$")


class UpstreamError(Exception):
    """The upstream cannot be reached or has no such ref; the message names the setting to change."""


def _git():
    import git  # imported on first use: doit's no-op runs never need it

    return git


def _record(dest: Path) -> Path:
    return Path(dest).with_name(f"{Path(dest).name}.checkout.json")


def head(dest: Path) -> str | None:
    """The commit checked out in ``dest``, or None when there is no checkout there."""
    git = _git()
    try:
        return git.Repo(dest).head.commit.hexsha
    except (git.exc.InvalidGitRepositoryError, git.exc.NoSuchPathError, ValueError):
        return None


def is_current(dest: Path, url: str, ref: str) -> bool:
    """True when ``dest`` already has commit ``ref`` (a full SHA) checked out from ``url``: nothing to pull.
    A branch or tag ref is never current (it may have moved)."""
    import json

    if not SHA.match(ref):
        return False
    if any((Path(dest) / ".git" / name).exists() for name in LOCKS):
        return False  # a git was killed half-way here: the pull must look (and clear the lock)
    try:
        record = json.loads(_record(dest).read_text())
        detached = (Path(dest) / ".git" / "HEAD").read_text().strip()
    except (OSError, ValueError):
        return False
    if Path(url).exists():
        url = str(Path(url).resolve())
    return record == {"url": url, "ref": ref, "commit": ref} and detached == ref


def checkout(url: str, ref: str, dest: Path, settings: str = "evals/<tier>/suite.toml",
             notes: list[str] | None = None) -> str:
    """Make ``dest`` a checkout of ``url`` (a git URL or a local path) at ``ref`` (commit, branch or tag).

    Clones into a temporary folder beside ``dest`` and renames it into place, so a failed clone leaves no
    half-made checkout; an existing checkout is fetched and switched (detached) to ``ref``, discarding
    local edits. A changed ``url`` is always fetched from, so a wrong one fails here. Returns the commit
    SHA. Raises UpstreamError naming ``upstream=``/``ref=`` and the ``settings`` file.

    When the upstream cannot be reached but an existing checkout of the same ``url`` already has ``ref`` (a
    branch or tag as last fetched), that commit is checked out and one line saying so is appended to
    ``notes`` (when given): work goes on offline from the last fetch rather than failing.
    """
    from rules.files import write_json

    git = _git()
    dest = Path(dest)
    if Path(url).exists():
        url = str(Path(url).resolve())
    if (dest / ".git").is_dir():
        clear_stale_locks(dest)
    try:
        if (dest / ".git").exists():
            repo = git.Repo(dest)
            moved = repo.remotes.origin.url != url
            if moved:
                repo.remotes.origin.set_url(url)
            if moved or not (SHA.match(ref) and _has(repo, ref)):
                try:
                    repo.remotes.origin.fetch(tags=True, force=True)
                except git.exc.GitCommandError as exc:
                    last = None if moved else _last_fetched(repo, ref)
                    if last is None:
                        raise
                    if notes is not None:
                        said = (exc.stderr or str(exc)).strip().splitlines() or ["no answer"]
                        why = said[-1].strip().strip("'\" ")[:160]
                        notes.append(f"upstream {url!r} unreachable ({why}): using {ref!r} as last fetched, {last[:12]}")
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
            try:
                repo = git.Repo.clone_from(url, tmp / "repo", no_checkout=True)
                (tmp / "repo").rename(dest)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            repo = git.Repo(dest)
    except git.exc.GitCommandError as exc:
        raise UpstreamError(
            f"cannot reach upstream {url!r}: {exc.stderr.strip()[:300] if exc.stderr else exc}. "
            f"Pass upstream=URL_OR_PATH (e.g. a local clone) or change `upstream` in {settings}."
        ) from None
    commit = None
    for candidate in (f"origin/{ref}", ref):
        if _has(repo, candidate):
            commit = repo.commit(candidate).hexsha
            break
    if commit is None:
        raise UpstreamError(f"upstream {url!r} has no ref {ref!r}. Pass ref=REV or change `ref` in {settings}.")
    repo.git.checkout("--force", "--detach", commit)
    repo.git.clean("-ffdx")
    write_json(_record(dest), {"url": url, "ref": ref, "commit": commit})
    return commit


LOCKS = ("index.lock", "HEAD.lock", "config.lock", "packed-refs.lock", "shallow.lock", "FETCH_HEAD.lock",
         "ORIG_HEAD.lock")


def clear_stale_locks(dest: Path) -> list[str]:
    """Remove the lock files a killed git left in ``dest/.git`` (``index.lock`` and the like) when no process
    holds them: none has one open, and no git process works in ``dest``. Returns the removed files' names.
    Raises UpstreamError (one line: what holds it and what to do) when a process still does."""
    git_dir = Path(dest) / ".git"
    locks = [git_dir / name for name in LOCKS if (git_dir / name).exists()]
    if not locks:
        return []
    holders = _lock_holders(Path(dest), locks)
    if holders:
        pid, what = holders[0]
        raise UpstreamError(f"{locks[0]} is held by a running process (pid {pid}: {what}): wait for it to end, or "
                            f"stop it, then pull again")
    removed = []
    for lock in locks:
        try:
            lock.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise UpstreamError(f"{lock} is left from a git that was killed and cannot be removed ({exc.strerror}): "
                                f"remove it by hand (rm {lock}), then pull again") from None
        removed.append(lock.name)
    return removed


def _lock_holders(dest: Path, locks: list[Path]) -> list[tuple[int, str]]:
    """Processes (pid, command name) that have one of ``locks`` open, or are git working below ``dest``."""
    import os

    wanted = {str(p) for p in locks} | {str(p.resolve()) for p in locks}
    root = str(dest.resolve())
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            comm = Path(entry.path, "comm").read_text().strip()
        except OSError:
            continue
        try:
            cwd = os.readlink(f"{entry.path}/cwd")
        except OSError:
            cwd = ""
        if comm.startswith("git") and (cwd == root or cwd.startswith(root + "/")) and not _reader(entry.path):
            out.append((int(entry.name), comm))
            continue
        try:
            fds = os.listdir(f"{entry.path}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{entry.path}/fd/{fd}") in wanted:
                    out.append((int(entry.name), comm))
                    break
            except OSError:
                continue
    return out


def _reader(proc: str) -> bool:
    """Whether the git process at ``/proc/<pid>`` only reads: GitPython's long-lived ``git cat-file``
    helpers (this process's own, or another reader's), which never take a lock."""
    try:
        argv = Path(proc, "cmdline").read_bytes().split(b"\0")
    except OSError:
        return True  # gone meanwhile
    return len(argv) > 1 and argv[1] == b"cat-file"


def _last_fetched(repo, ref: str) -> str | None:
    """The commit ``ref`` (a branch as ``origin/<ref>``, a tag, or a commit) had at the last fetch, or None."""
    for candidate in (f"origin/{ref}", ref):
        if _has(repo, candidate):
            return repo.commit(candidate).hexsha
    return None


def _has(repo, ref: str) -> bool:
    git = _git()
    try:
        repo.commit(ref)
        return True
    except (git.exc.BadName, ValueError, git.exc.GitCommandError):
        return False
