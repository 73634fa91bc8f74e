"""How an swe task's tests run and are named, one ``Runner`` per kind of test runner; an environment names its
runner (``Env.runner``). check.sh's test run is pytest's (in ``templates/swe/check.sh.j2``) or, for another
runner, ``templates/swe/run_<name>.sh.j2``; whatever it runs, it leaves a JUnit XML report in ``$out`` for the host
(``rules.reports.parse_junit``), under the same contract: written by the run of the graded code, copied out by
root after every tester process is killed, weighed with the canaries (``rules.grade``).

- ``pytest``: pytest's ``--junitxml`` (``rules.tiers.swe.swebench``: ``junit_id``, ``test_ids``, ``run_files``);
- ``django``: django's own ``tests/runtests.py`` with lab's unittest result recorder (``rules.tiers.swe.djangotests``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Runner:
    """One kind of test run: ``name`` (check.sh's ``runner``); ``test_name(name)``:
    whether a dataset name can be a test at all; ``stands_for(name)``: whether it stands for several report ids
    (resolved against the gold patch's run: ``swebench.members``); ``test_ids(instance, test_files)``: each
    FAIL_TO_PASS/PASS_TO_PASS name → its report id, raising Rejected for names with none; ``run_files(instance,
    test_files)``: the files the grading runs; ``labels(files)``: what the runner's command names for them;
    ``test_cmd(files, inifile, pythonpath, deselect, prepare, test_env)``: the agents' command for the
    pre-existing tests, with the environment's ``test_env`` set as the grading sets it."""

    name: str
    test_name: Callable[[str], bool]
    stands_for: Callable[[str], bool]
    test_ids: Callable
    run_files: Callable
    labels: Callable[[list[str]], list[str]]
    test_cmd: Callable[..., str]


def runner_for(name: str) -> Runner:
    """The runner an environment names (``Env.runner``). Raises Rejected naming the known ones."""
    from rules.tier import Rejected

    if name == "pytest":
        from rules.tiers.swe import swebench as s

        return Runner("pytest", s.test_name, s.truncated, s.test_ids, s.run_files, lambda files: list(files),
                      s.test_cmd)
    if name == "django":
        from rules.tiers.swe import djangotests as d

        return Runner("django", d.test_name, d.stands_for, d.test_ids, d.run_files, d.labels, d.test_cmd)
    raise Rejected(f"unknown test runner {name!r} in an swe environment: give runner = \"pytest\" or \"django\"")
