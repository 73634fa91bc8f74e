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
    try:
        record = json.loads(_record(dest).read_text())
        detached = (Path(dest) / ".git" / "HEAD").read_text().strip()
    except (OSError, ValueError):
        return False
    if Path(url).exists():
        url = str(Path(url).resolve())
    return record == {"url": url, "ref": ref, "commit": ref} and detached == ref


def checkout(url: str, ref: str, dest: Path, settings: str = "evals/<tier>/suite.toml") -> str:
    """Make ``dest`` a checkout of ``url`` (a git URL or a local path) at ``ref`` (commit, branch or tag).

    Clones into a temporary folder beside ``dest`` and renames it into place, so a failed clone leaves no
    half-made checkout; an existing checkout is fetched and switched (detached) to ``ref``, discarding
    local edits. A changed ``url`` is always fetched from, so a wrong one fails here. Returns the commit
    SHA. Raises UpstreamError naming ``upstream=``/``ref=`` and the ``settings`` file.
    """
    from rules.files import write_json

    git = _git()
    dest = Path(dest)
    if Path(url).exists():
        url = str(Path(url).resolve())
    try:
        if (dest / ".git").exists():
            repo = git.Repo(dest)
            moved = repo.remotes.origin.url != url
            if moved:
                repo.remotes.origin.set_url(url)
            if moved or not (SHA.match(ref) and _has(repo, ref)):
                repo.remotes.origin.fetch(tags=True, force=True)
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


def _has(repo, ref: str) -> bool:
    git = _git()
    try:
        repo.commit(ref)
        return True
    except (git.exc.BadName, ValueError, git.exc.GitCommandError):
        return False
