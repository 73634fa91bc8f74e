"""Command-line values a user types (``jobs=``, switches such as ``all=``): a value lab cannot take stops the
command with one line naming it and what to give instead."""
from __future__ import annotations

import os

import pytest


def test_jobs_takes_a_whole_number_from_one_to_the_cap_else_one_line():
    from rules.cli import MAX_JOBS, jobs

    assert jobs(None) == (os.cpu_count() or 1) and jobs("3") == 3 and jobs(str(MAX_JOBS)) == MAX_JOBS
    for raw in ("0", "-1", "x", "1.5", str(MAX_JOBS + 1), "99999"):
        with pytest.raises(SystemExit, match=rf"jobs={raw}: give a whole number .* from 1 to {MAX_JOBS}; nothing"):
            jobs(raw)


def test_a_switch_takes_yes_or_no_words_and_refuses_anything_else():
    from rules.tier import flag

    given = {"all": "yes", "strict": "0", "reprove": "2", "x": "no"}
    var = lambda name, default=None: given.get(name, default)  # noqa: E731 - doit's get_var's shape
    assert flag(var, "all") and not flag(var, "strict") and not flag(var, "x") and not flag(var, "unset")
    with pytest.raises(SystemExit, match=r"reprove=2: give 1 \(or true, yes, on\) or 0 \(or false, no, off\)"):
        flag(var, "reprove")


@pytest.mark.parametrize("args, line", [
    ((), "regrade needs agent=NAME (the agent whose stored trials are graded again)"),
    (("agent=nosuch",), "regrade: no stored trials of agent 'nosuch' in "),
])
def test_regrade_without_trials_to_grade_says_so_in_one_line_without_doit_s_head(lab_home, args, line):
    from conftest import run_doit

    res = run_doit(lab_home, "regrade", *args, timeout=120)
    said = res.stdout + res.stderr
    assert res.code != 0 and line in said, said
    assert "TaskFailed" not in said, said
