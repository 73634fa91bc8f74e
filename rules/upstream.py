"""A tier's upstream checkout (GitPython): clone or fetch, then check out the pinned ref.

The only module that imports ``git``.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

SHA = re.compile(r"^[0-9a-f]{40}$")


def _git_said(exc: "git.exc.GitCommandError") -> str:
    """git's own reason in one line: the last ``fatal:``/``error:`` line of its stderr without the prefix (git
    prints hints and progress before it), capped at 200 characters."""
    lines = [line.strip() for line in (exc.stderr or "").replace("stderr:", "").strip().strip("'\"").splitlines()
             if line.strip()]
    reasons = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines or [str(exc)]
    return reasons[-1].removeprefix("fatal:").removeprefix("error:").strip().strip("'\" ")[:200]


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
    asked = url
    if Path(url).exists():
        url = str(Path(url).resolve())
    if (dest / ".git").is_dir():
        clear_stale_locks(dest)
    moved = False
    try:
        if (dest / ".git").exists():
            repo = git.Repo(dest)
            moved = repo.remotes.origin.url != url
            if moved:
                repo.remotes.origin.set_url(url)
            if moved or not (SHA.match(ref) and _has(repo, ref)):
                try:
                    if moved:  # what the old upstream had must not pass for the new one's: its refs go
                        repo.git.fetch("origin", "--tags", "--force", "--prune", "--prune-tags")
                    else:
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
        _check_local(asked, settings)
        raise UpstreamError(
            f"cannot reach upstream {url!r} (git: {_git_said(exc)}): pass upstream=URL_OR_PATH (e.g. a local "
            f"clone) or change `upstream` in {settings}"
        ) from None
    commit = None
    for candidate in (f"origin/{ref}", ref):
        if _has(repo, candidate):
            commit = repo.commit(candidate).hexsha
            break
    if commit is not None and moved and moved_from_old(repo, commit):
        commit = None  # a commit the old upstream left in the checkout's objects, which the new one does not have
    if commit is None:
        raise UpstreamError(f"upstream {url!r} has no ref {ref!r}: pass ref=REV or change `ref` in {settings}")
    repo.git.checkout("--force", "--detach", commit)
    repo.git.clean("-ffdx")
    write_json(_record(dest), {"url": url, "ref": ref, "commit": commit})
    return commit


def moved_from_old(repo, commit: str) -> bool:
    """Whether ``commit`` is reachable from none of the checkout's upstream refs (``refs/remotes/origin``, tags):
    only an earlier upstream's objects hold it."""
    return not repo.git.for_each_ref("--contains", commit, "--count=1", "refs/remotes/origin", "refs/tags").strip()


def _check_local(url: str, settings: str) -> None:
    """After git failed on ``url``: refuse an ``upstream=`` that is a local path but no git repository, in words
    that say which (git itself says "repository does not exist" for both a missing folder and a plain one). A URL
    passes untouched, for the caller's own message.
    Raises UpstreamError naming the path and the fix."""
    looks_local = url.startswith(("/", "./", "../", "~")) or (Path(url).exists() and "://" not in url)
    if not looks_local:
        return
    path = Path(url).expanduser()
    fix = f"pass upstream=PATH of a clone of the upstream (git clone URL PATH), or change `upstream` in {settings}"
    if not path.exists():
        raise UpstreamError(f"upstream {url!r}: no such file or folder: {fix}")
    if path.is_dir() and not ((path / ".git").exists() or (path / "HEAD").is_file() and (path / "objects").is_dir()):
        raise UpstreamError(f"upstream {url!r} is a folder but not a git repository (no .git in it, nor a bare "
                            f"repository's HEAD and objects/): {fix}")


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


# ---- many repositories at fixed commits (the swe tier) ----

def is_repository(path: Path) -> bool:
    """Whether ``path`` itself is a git repository, a clone with a work tree or a bare one (a folder inside one,
    or holding one, is not)."""
    git = _git()
    if not Path(path).is_dir():
        return False
    try:
        git.Repo(path, search_parent_directories=False)
        return True
    except (git.exc.InvalidGitRepositoryError, git.exc.NoSuchPathError):
        return False


def mirror(url: str, dest: Path) -> Path:
    """A local git repository with the history of ``url``: ``url`` itself when it is a local repository
    (a clone or a bare mirror), else a bare clone made once at ``dest`` (into a temporary folder renamed into
    place). Returns its path. Raises UpstreamError naming ``repos=`` when it cannot be cloned."""
    git = _git()
    if Path(url).exists():
        try:
            git.Repo(url)
            return Path(url)
        except (git.exc.InvalidGitRepositoryError, git.exc.NoSuchPathError):
            raise UpstreamError(f"{url} is not a git repository; give repos=DIR with one clone per repository") from None
    dest = Path(dest)
    if (dest / "HEAD").exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        git.Repo.clone_from(url, tmp / "repo", bare=True)
        (tmp / "repo").rename(dest)
    except git.exc.GitCommandError as exc:
        raise UpstreamError(f"cannot clone {url!r}: {exc.stderr.strip()[:300] if exc.stderr else exc}. "
                            "Pass repos=DIR holding a local clone of each repository.") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _commit(repo_dir: Path, commit: str):
    git = _git()
    repo = git.Repo(repo_dir)
    try:
        return repo, repo.commit(commit)
    except (git.exc.BadName, ValueError, git.exc.GitCommandError):
        raise UpstreamError(f"{repo_dir} has no commit {commit}; fetch it there, or point repos= at a fuller clone") from None


def commit_time(repo_dir: Path, commit: str) -> int:
    """The commit time of ``commit`` (seconds since the epoch). Raises UpstreamError when it is missing."""
    return _commit(repo_dir, commit)[1].committed_date


def tree_tar(repo_dir: Path, commit: str) -> bytes:
    """The tree of ``commit`` as an uncompressed tar (files, executable bits and symlinks as committed; every
    entry dated at the commit, owned by 0:0, in path order): the same bytes every time. No history, no
    ``.git``. Raises UpstreamError when the commit, or the content of one of its files, is missing."""
    import io
    import tarfile

    _repo, c = _commit(repo_dir, commit)
    when = c.committed_date
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        dirs: set[str] = set()
        for item in sorted(c.tree.traverse(), key=lambda o: o.path):
            if item.type == "tree":
                continue
            if item.type != "blob":  # a submodule: nothing to lay out
                continue
            parts = item.path.split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    info = tarfile.TarInfo(d)
                    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, when
                    tar.addfile(info)
            info = tarfile.TarInfo(item.path)
            info.mtime = when
            try:
                data = item.data_stream.read()
            except ValueError:  # gitdb: "SHA ... could not be resolved": the object is not in this clone
                raise UpstreamError(
                    f"{repo_dir} lacks the content of {item.path} (blob {item.hexsha}) at {commit}: a partial clone "
                    "(a stored snapshot keeps no file of 4 MiB or more); add that file's blob (`git hash-object -w "
                    "FILE` in the clone) or give a whole clone") from None
            if item.mode == 0o120000:
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, data.decode(), 0o777
                tar.addfile(info)
            else:
                info.mode = 0o755 if item.mode & 0o111 else 0o644
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def file_at(repo_dir: Path, commit: str, path: str) -> bytes | None:
    """The content of ``path`` at ``commit``, or None when it does not exist there."""
    _repo, c = _commit(repo_dir, commit)
    try:
        return c.tree[path].data_stream.read()
    except KeyError:
        return None


def patched_files(repo_dir: Path, commit: str, patch: str) -> dict[str, bytes | None]:
    """Apply ``patch`` (a unified git diff) to the tree of ``commit`` without touching any work tree (in a
    temporary index, its new objects in a temporary object folder: the repository is only read) and return the
    new content of every path it touches (None: deleted). Raises UpstreamError with git's message when the
    patch does not apply."""
    import os

    git = _git()
    repo, c = _commit(repo_dir, commit)
    with tempfile.TemporaryDirectory(prefix="lab-patch-") as tmp:
        env = {"GIT_INDEX_FILE": os.path.join(tmp, "index"), **_scratch_objects(repo, tmp)}
        patch_file = os.path.join(tmp, "change.patch")
        Path(patch_file).write_text(patch, encoding="utf-8")
        try:
            repo.git.read_tree(c.hexsha, env=env)
            names = repo.git.apply("--numstat", "-z", "--cached", patch_file, env=env)
            repo.git.apply("--cached", patch_file, env=env)
            tree = repo.git.write_tree(env=env)
        except git.exc.GitCommandError as exc:
            raise UpstreamError(f"the patch does not apply at {commit[:12]}: {(exc.stderr or str(exc)).strip()[:400]}") from None
        paths = _numstat_paths(names)
        out: dict[str, bytes | None] = {p: None for p in paths}
        listed = repo.git.ls_tree("-r", "-z", tree, "--", *paths, env=env) if paths else ""
        for entry in filter(None, listed.split("\0")):
            info, path = entry.split("\t", 1)
            if path in out and info.split()[1] == "blob":
                out[path] = repo.git.cat_file("blob", info.split()[2], env=env, stdout_as_string=False,
                                              strip_newline_in_stdout=False)
        return out


def _scratch_objects(repo, tmp: str) -> dict[str, str]:
    """The git environment that writes new objects into ``tmp/objects`` and reads the repository's own (and its
    alternates') beside them: a patch applied in a temporary index then leaves the repository as it was."""
    import os

    own = os.path.join(repo.git_dir, "objects")
    try:
        with open(os.path.join(own, "info", "alternates"), encoding="utf-8") as f:
            more = [os.path.join(own, line.strip()) for line in f if line.strip() and not line.startswith("#")]
    except OSError:
        more = []
    os.makedirs(os.path.join(tmp, "objects"))
    return {"GIT_OBJECT_DIRECTORY": os.path.join(tmp, "objects"),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.pathsep.join([own] + more)}


def _numstat_paths(text: str) -> list[str]:
    """The paths of ``git apply --numstat -z`` output (renames give both names)."""
    fields = text.split("\0")
    out, i = [], 0
    while i < len(fields):
        f = fields[i]
        if not f:
            i += 1
            continue
        parts = f.split("\t")
        if len(parts) == 3 and parts[2]:
            out.append(parts[2])
            i += 1
        elif len(parts) == 3:  # a rename: the two names follow
            out += [fields[i + 1], fields[i + 2]]
            i += 3
        else:
            i += 1
    return sorted(set(out))


def patch_bytes(patch: str) -> bytes:
    """The bytes of a patch held as text: UTF-8, with the bytes that are not (``diff_against`` reads git's output
    with ``surrogateescape``, so a file in another encoding keeps them as ``\\udc80``-``\\udcff``) restored.
    Raises UnicodeEncodeError for other lone surrogates (``\\ud800``): no bytes stand behind them."""
    return patch.encode("utf-8", "surrogateescape")


def apply_patch(work_tree: Path, patch: str) -> str | None:
    """Apply ``patch`` to the files of ``work_tree`` (a folder laid by a task's setup.sh, a repository of lab's
    making: never run git in a tree an agent has had). Returns None when it
    applied, else git's one-line reason (nothing is changed then: ``git apply`` is all or nothing), also when
    the patch holds characters no bytes stand behind."""
    git = _git()
    with tempfile.TemporaryDirectory(prefix="lab-patch-") as tmp:
        patch_file = Path(tmp) / "change.patch"
        # a patch of files that are not UTF-8 comes from diff_against with its bytes as surrogates: write them back
        try:
            patch_file.write_bytes(patch_bytes(patch if patch.endswith("\n") else patch + "\n"))
        except UnicodeEncodeError:
            return "the patch holds characters that are no bytes (lone surrogates)"
        try:
            git.Git(str(work_tree)).execute(["git", "apply", "--whitespace=nowarn", str(patch_file)])
        except git.exc.GitCommandError as exc:
            lines = (exc.stderr or str(exc)).strip().splitlines()
            return lines[0][:300] if lines else "git apply failed"
    return None


def diff_against(base: Path, work_tree: Path) -> str:
    """The change from the repository ``base`` (a work tree laid by a task's setup.sh: lab's own repository,
    whose HEAD is the base commit) to the files of ``work_tree`` (any folder, e.g. an agent's final work tree;
    its own ``.git`` is never read), as a binary-safe git diff with ``a/``/``b/`` paths: the model_patch of a
    prediction. Files the base's ``.gitignore`` rules ignore are left out, and so is byte code and test-runner
    cache (``__pycache__/``, ``*.pyc``, ``.pytest_cache/``: what running the tests leaves). Empty when nothing
    changed."""
    import os

    git = _git()
    base, work_tree = Path(base).resolve(), Path(work_tree).resolve()
    with tempfile.TemporaryDirectory(prefix="lab-diff-") as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": os.path.join(tmp, "index"), "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_CONFIG_GLOBAL": "/dev/null"}
        excludes = os.path.join(tmp, "exclude")
        Path(excludes).write_text("__pycache__/\n*.py[co]\n.pytest_cache/\n")
        cmd = ["git", "-c", f"core.excludesFile={excludes}", f"--git-dir={base / '.git'}", f"--work-tree={work_tree}"]
        runner = git.Git(str(work_tree))
        runner.execute(cmd + ["read-tree", "HEAD"], env=env)
        runner.execute(cmd + ["add", "-A", "--", "."], env=env)
        return runner.execute(cmd + ["diff", "--cached", "--binary", "HEAD"], env=env, strip_newline_in_stdout=False)
