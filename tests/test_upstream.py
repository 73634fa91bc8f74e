"""The upstream checkout survives what a killed pull leaves behind, and remembers its ref (no Docker)."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixture_upstream import git, make_upstream  # noqa: E402

from rules.upstream import UpstreamError, checkout, is_current  # noqa: E402


@pytest.fixture
def checked_out(tmp_path) -> tuple[Path, Path, str]:
    up = make_upstream(tmp_path / "upstream", only=["python/hello"])
    dest = tmp_path / "state" / "upstream" / "aider"
    sha = git(up, "rev-parse", "HEAD").strip()
    assert checkout(str(up), sha, dest) == sha
    return up, dest, sha


def test_a_stale_index_lock_from_a_killed_pull_is_removed_and_the_pull_proceeds(checked_out):
    up, dest, sha = checked_out
    (dest / ".git" / "index.lock").write_text("")  # what a git killed half-way leaves
    assert not is_current(dest, str(up), sha), "a checkout with a lock left behind is not trusted as current"
    (up / "python" / "exercises" / "practice" / "hello" / "NEW.md").write_text("new\n")
    git(up, "add", "-A")
    git(up, "commit", "-qm", "more")
    new = git(up, "rev-parse", "HEAD").strip()
    assert checkout(str(up), "main", dest) == new
    assert not (dest / ".git" / "index.lock").exists()
    assert (dest / "python" / "exercises" / "practice" / "hello" / "NEW.md").is_file()


def test_a_lock_a_live_process_holds_fails_with_one_line_saying_what_to_do(checked_out):
    up, dest, sha = checked_out
    lock = dest / ".git" / "index.lock"
    lock.write_text("")
    holder = subprocess.Popen([sys.executable, "-c", f"f = open({str(lock)!r}); import time; time.sleep(60)"])
    try:
        for _ in range(100):  # until the holder has the file open
            if any(Path(f"/proc/{holder.pid}/fd", fd).resolve() == lock for fd in _fds(holder.pid)):
                break
            time.sleep(0.05)
        with pytest.raises(UpstreamError) as err:
            checkout(str(up), "main", dest)
    finally:
        holder.kill()
        holder.wait()
    message = str(err.value)
    assert "\n" not in message and f"pid {holder.pid}" in message and "pull again" in message
    assert lock.exists(), "a lock someone holds is never removed"
    assert checkout(str(up), sha, dest) == sha and not lock.exists(), "once the holder is gone the pull proceeds"


def _fds(pid: int) -> list[str]:
    try:
        return [str(p.name) for p in Path(f"/proc/{pid}/fd").iterdir()]
    except OSError:
        return []


def test_upstream_given_again_without_ref_keeps_the_remembered_ref(tmp_path, monkeypatch):
    import rules.tasks as tasks
    from rules.config import Suite
    from rules.files import write_json

    suite = Suite(name="aider", upstream="https://example.org/suite.git", ref="main", languages=("python",))
    local = tmp_path / "clone"
    local.mkdir()
    monkeypatch.setattr(tasks, "STATE", tmp_path)
    write_json(tmp_path / "upstream" / "aider.json", {"upstream": str(local), "ref": "v2"})

    def command_line(**given):
        monkeypatch.setattr(tasks, "get_var", lambda name, default=None: given.get(name, default))
        return tasks._upstream_settings(suite)

    assert command_line() == (str(local), "v2")
    assert command_line(upstream=str(local)) == (str(local), "v2")
    assert command_line(upstream=str(local) + "/")[1] == "v2", "the same folder written another way"
    assert command_line(upstream="https://example.org/other.git") == ("https://example.org/other.git", "main")
    assert command_line(upstream=str(local), ref="v3") == (str(local), "v3")
    assert command_line(ref="v3") == (str(local), "v3")


def test_an_unreachable_upstream_with_a_branch_ref_uses_the_last_fetched_commit_and_says_so(checked_out):
    up, dest, sha = checked_out
    assert checkout(str(up), "main", dest) == sha
    up.rename(up.with_name("gone"))  # the upstream can no longer be reached
    notes: list[str] = []
    assert checkout(str(up), "main", dest, notes=notes) == sha
    assert len(notes) == 1 and "unreachable" in notes[0] and sha[:12] in notes[0] and "\n" not in notes[0]
    with pytest.raises(UpstreamError):  # a ref never fetched is still an error
        checkout(str(up), "no-such-branch", dest, notes=notes)


def test_a_local_upstream_that_is_a_plain_folder_is_refused_as_no_git_repository(tmp_path):
    """git says "repository does not exist" for a folder that exists: lab says which it is, and the fix."""
    plain = tmp_path / "plain"
    (plain / "python").mkdir(parents=True)
    with pytest.raises(UpstreamError) as err:
        checkout(str(plain), "main", tmp_path / "state" / "upstream" / "aider")
    said = str(err.value)
    assert f"upstream {str(plain)!r} is a folder but not a git repository" in said and "git clone" in said, said
    assert not (tmp_path / "state" / "upstream" / "aider").exists()


def test_a_bare_local_upstream_is_taken(tmp_path):
    up = make_upstream(tmp_path / "upstream", only=["python/hello"])
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(up), str(bare)], check=True)
    sha = git(up, "rev-parse", "HEAD").strip()
    assert checkout(str(bare), sha, tmp_path / "dest") == sha


def test_another_repository_given_as_upstream_does_not_pass_off_the_old_one_s_commit(checked_out, tmp_path):
    """A newcomer's finding: `upstream=` another repository, with the pinned commit still in the checkout's objects
    from the old upstream, printed that commit as the new upstream's and kept the old files."""
    up, dest, sha = checked_out
    other = tmp_path / "other"
    other.mkdir()
    (other / "README.md").write_text("another project\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=other, check=True)
    with pytest.raises(UpstreamError, match=f"has no ref '{sha}'"):
        checkout(str(other), sha, dest)
    assert checkout(str(up), sha, dest) == sha, "the right upstream given again is taken"
