"""A proof rejected for the machine's sake (its reference ran past the proof's time limit) stands on the next
`doit gen`, as any other rejection: proving a reference that hangs again on every gen cost twice the proof
timeout (20 minutes with the default limits) on each no-op gen. It is proven again when its inputs or limits
change (doit's own tracking) or when asked: `doit gen:<tier> reprove=1`. Driven through doit on the toy tier."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import run_doit  # noqa: E402
from fixture_toy import TOPICS, make_toy_home, write_topics  # noqa: E402

docker = pytest.mark.docker
HANG = {"hang.py": "def hang(n):\n    return 0\n",
        "reference.py": "import time\n\n\ndef hang(n):\n    time.sleep(120)\n    return 2 * n\n",
        "test_hang.py": "from hang import hang\n\n\ndef test_1():\n    assert hang(1) == 2\n",
        "about.md": "# hang\n\nWrite `hang(n)`.\n"}


@pytest.fixture(scope="module")
def hang_home(tmp_path_factory, grader_image) -> Path:
    """A toy home with one ordinary topic and one whose reference hangs, proved with an 8 s limit."""
    home = tmp_path_factory.mktemp("reprove") / "home"
    folder = make_toy_home(home)
    for topic in ("square", "identity", "broken"):
        for name in TOPICS[topic]:
            (folder / "source" / topic / name).unlink()
        (folder / "source" / topic).rmdir()
    write_topics(folder / "source", {"hang": HANG})
    suite = folder / "suite.toml"
    suite.write_text(suite.read_text().replace("timeout = 60", "timeout = 8"))
    return home


@docker
def test_a_timeout_rejection_is_proved_again_only_when_asked(hang_home):
    first = run_doit(hang_home, "gen:toy", "jobs=1", timeout=600)
    assert first.code == 0, first.stdout[-3000:] + first.stderr[-3000:]
    proof = hang_home / ".lab" / "build" / "toy" / "toy-hang" / "proof.json"
    record = json.loads(proof.read_text())
    assert (record["status"], record["environmental"]) == ("rejected", "timeout"), record
    assert "or with reprove=1" in first.stdout
    again = run_doit(hang_home, "gen:toy", "jobs=1", timeout=600)
    assert again.code == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert again.executed("prove:") == set(), again.stdout[-3000:]
    asked = run_doit(hang_home, "gen:toy", "jobs=1", "reprove=1", timeout=600)
    assert asked.code == 0, asked.stdout[-3000:] + asked.stderr[-3000:]
    assert asked.executed("prove:") == {"prove:toy/toy-hang"}, asked.stdout[-3000:]
