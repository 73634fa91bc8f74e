"""What `doit gen` prints while it proves and at its end (rules.build.Progress, rules.build.summary)."""
from __future__ import annotations

import io

from rules import build


def test_the_eta_clock_starts_at_the_first_proof_not_when_the_tasks_were_made(monkeypatch):
    """The first gen built the grader image between making the tasks and the first proof, and counted it as
    proving (`~5861s left` for 18 proofs, seen by a newcomer)."""
    now = [0.0]
    monkeypatch.setattr(build.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    progress = build.Progress(out=out)
    progress.total = 3
    now[0] = 500.0  # the image build
    progress.begin()
    now[0] = 510.0
    progress.done({"task": "python-hello", "status": "kept", "seconds": 10.0})
    assert "[prove 1/3] python-hello: kept in 10.0s | kept 1 | 10s elapsed, ~20s left" in out.getvalue(), out.getvalue()


def test_the_prove_count_states_its_total_up_front_and_never_raises_it(monkeypatch):
    """A newcomer watched `[prove 41/41]`, `[prove 42/42]`: proofs nobody could count up front (a render that
    changed during the run) raised the total with each. The first proof says how many are known and how many
    there can be at most; a count past the known total says so, and gives no ETA it cannot know."""
    now = [0.0]
    monkeypatch.setattr(build.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    progress = build.Progress(total=1, most=3, out=out)
    for n, task in enumerate(("a", "b", "c"), 1):
        now[0] = 10.0 * n
        progress.done({"task": task, "status": "kept", "seconds": 10.0})
    lines = out.getvalue().splitlines()
    assert lines[0] == ("[prove] 1 of the 3 chosen tasks need a proof now; another is proved too when its render or "
                        "image changes during this run, so the count may pass 1 (at most 3)"), lines
    assert lines[1].startswith("[prove 1/1] a: kept"), lines
    assert lines[2].startswith("[prove 2, past the 1 known up front, at most 3] b: kept"), lines
    assert lines[3].startswith("[prove 3, past the 1 known up front, at most 3] c: kept") and "left" not in lines[3]
    quiet = io.StringIO()
    whole = build.Progress(total=2, most=2, out=quiet)  # every proof known up front: nothing more to say
    whole.done({"task": "a", "status": "kept", "seconds": 1.0})
    assert quiet.getvalue().startswith("[prove 1/2] a: kept"), quiet.getvalue()


def test_the_summary_says_what_the_tasks_outside_every_selection_are():
    """A newcomer read `not rendered 207 unproven` as 207 failures: the row says they are outside every
    selection so far, not a failure, and how to prove them, after the languages."""
    manifest = {"tier": "aider", "counts": {"kept": 2, "unproven": 5}, "published": 2,
                "languages": {"?": {"unproven": 5}, "python": {"kept": 2}}, "tasks": []}
    lines = build.summary(manifest, ("langs", "limit", "all")).splitlines()
    assert lines[1].split() == ["python", "2", "kept"], lines
    assert lines[2].startswith("  outside every selection so far: 5 tasks not proven (not a failure;"), lines
    assert "all=1" in lines[2] and "langs=/limit=" in lines[2] and "?" not in build.summary(manifest)
    swe = build.summary({**manifest, "tier": "swe"}, ("instances", "limit", "all")).splitlines()[2]
    assert "instances=/limit=" in swe and "langs=" not in swe, swe  # each tier's own variables


def test_gen_of_a_tier_this_home_lacks_says_so(tmp_path):
    """`doit gen:kat` (a typo) did nothing and exited 0 (a red team's): it names the missing suite.toml and the
    tiers the home has, in one line."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from conftest import AGENTS, run_doit

    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "agents.toml").write_text(AGENTS.read_text())
    res = run_doit(tmp_path, "gen:kat")
    said = res.stdout + res.stderr
    assert res.code != 0 and "kat: no such tier in this lab home" in said and "suite.toml is missing" in said, said
    assert "TaskFailed" not in said


def test_a_home_without_evals_says_what_a_home_is_and_which_variable_chose_it(tmp_path):
    """A newcomer's LAB_HOME=<empty folder> got `tiers here: []` and no word on what a home must hold."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from conftest import run_doit

    for args in (("gen:aider",), ("run", "agent=noop")):
        res = run_doit(tmp_path, *args)
        said = res.stdout + res.stderr
        assert res.code != 0, said
        assert "no such tier in this lab home" in said and "[]" not in said and "Traceback" not in said, said
        assert ("the tiers here: none: a lab home is a folder holding evals/<tier>/suite.toml and evals/agents.toml; "
                f"LAB_HOME={tmp_path} chose this folder") in said, said


def test_the_summary_counts_each_repository_kept_rejected_and_unproven(tmp_path, monkeypatch):
    """gen:swe's summary per repository: a tier that knows every task's label without rendering it
    (``Selection.labels``) has its unproven tasks counted under that label, not under "?"."""
    from rules import config

    monkeypatch.setattr(config, "EVALS", tmp_path / "evals")
    monkeypatch.setattr(config, "STATE", tmp_path / ".lab")
    suite = config.Suite("swe", "", "", ())
    labels = {"o__a-1": {"repo": "o/a"}, "o__a-2": {"repo": "o/a"}, "o__b-1": {"repo": "o/b"},
              "o__b-2": {"repo": "o/b"}, "o__b-3": {"repo": "o/b"}}
    manifest = build.publish(suite, sorted(labels), group_keys=("repo",), labels=labels)
    assert manifest["languages"] == {"o/a": {"unproven": 2}, "o/b": {"unproven": 3}}
    lines = build.summary({**manifest, "languages": {"o/a": {"kept": 1, "unproven": 1},
                                                     "o/b": {"rejected": 1, "unproven": 2}}},
                          ("instances", "limit", "all")).splitlines()
    assert lines[1].split() == ["o/a", "1", "kept,", "1", "unproven"], lines
    assert lines[2].split() == ["o/b", "1", "rejected,", "2", "unproven"], lines
    assert lines[3].startswith("  outside every selection so far: 3 tasks not proven"), lines
