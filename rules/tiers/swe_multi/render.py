"""Rendering one swe-multi instance into a task: the parts every language shares (the work tree at the base
commit, the prompt, setup.sh, the held-out test patch, the gold patch as the reference solution, task.json) and the
runner's own (where the tests are, how check.sh runs them: ``Runner``)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from rules.tier import Rejected
from rules.tiers.swe import swebench
from rules.tiers.swe_multi.env import Env
from rules.tiers.swe_multi.languages import NAMES

TIER = "swe-multi"
RENDER = 4  # raise when what a render writes changes (its tasks render and prove again)
GROUPS = ("repo", "language")


@dataclass(frozen=True)
class Runner:
    """One language's runner (a module of this package): ``language`` (a key of ``languages.NAMES``),
    ``report`` (the ``rules.reports`` format its check.sh leaves), ``subtest_sep`` (how a dataset name standing
    for several report ids joins them: ``rules.tiers.swe.swebench.members``), ``template_dir`` (its
    ``lay_tests.sh.j2``, ``canaries.sh.j2``, ``run.sh.j2`` and ``env.Dockerfile.j2``), ``env_for(repo,
    version)`` (its ``Env`` or None), ``tests(inst, tar, tests_after, base_files)`` → (check.sh fields, the
    dataset names that stand for several ids, the agents' test command, the image's build inputs) raising
    Rejected, ``build(env, repo, commit, inputs)`` (builds and stamps the image, returns the stamp) and
    ``pretest(fields, base_files)`` (check.sh's fields for the pre-existing tests alone, as the base commit has
    them, or None when the base has none: ``pretest.sh``); ``canary_writer``: the canary writer its image copies
    when it is not the aider tier's of that language (``lab_grader/<language>_canaries.py``)."""

    language: str
    report: str
    subtest_sep: str
    template_dir: str
    env_for: Callable
    tests: Callable
    build: Callable
    pretest: Callable
    canary_writer: Path | None = None


def render(inst: swebench.Instance, env: Env, runner: Runner, repos: str | None, test_timeout: int = 900):
    """Render ``inst`` into a task (reads its repository; writes nothing). Returns
    ``rules.tiers.aider.exercises.Rendered``: ``prompt.txt``, ``setup.sh``, ``check.sh``, ``task.json``,
    ``workspace.tar``, ``holdout/test.patch`` and, when the base commit has tests in the instance's packages,
    ``pretest.sh`` (those tests alone, no held-out one: what an attempt must not break, read by lab alone,
    ``rules.tiers.swe.swerun``); answer files = the files of the gold patch as it leaves them.
    Raises Rejected (a patch that does not apply, tests that cannot be found) and Unavailable (its repository
    is not under ``repos`` and cannot be cloned, or its clone is not whole)."""
    from rules.records import TaskMeta
    from rules.render import render as render_template

    co = swebench.checkout(inst, repos)
    if not inst.fail_to_pass:
        raise Rejected("the instance has no FAIL_TO_PASS test: nothing would tell its fix from the base")
    fields, parents, test_cmd, _ = runner.tests(inst, co.tar, co.tests_after, co.base_files)
    ids = fields.pop("report_ids", None) or {}  # dataset name → report id, where the runner's differ (Rust, JavaScript, Java)
    # dataset tests lab never expects (they need a network, which a grading has not): as the swe tier's "excluded"
    excluded = sorted(set(fields.pop("excluded", None) or ()) & set(inst.fail_to_pass + inst.pass_to_pass))
    if excluded and all(n in excluded for n in inst.fail_to_pass):
        raise Rejected(f"every FAIL_TO_PASS test needs a network: {', '.join(inst.fail_to_pass)}")
    inst = dataclasses.replace(inst, fail_to_pass=tuple(n for n in inst.fail_to_pass if n not in excluded),
                               pass_to_pass=tuple(n for n in inst.pass_to_pass if n not in excluded))
    touched = swebench.patch_paths(inst.test_patch)
    names = list(inst.fail_to_pass) + [n for n in inst.pass_to_pass if n not in inst.fail_to_pass]
    context = dict(
        task=inst.id, repo=inst.repo, repo_version=inst.version, problem_statement=inst.problem_statement,
        date=co.date, language_name=NAMES[runner.language],
        test_patch_files=touched, test_patch_base_files=[p for p in touched if p in co.base_files],
        runner_dir=runner.template_dir, test_timeout=test_timeout, **fields)
    meta = TaskMeta(
        task=inst.id, tier=TIER, groups={"repo": inst.repo, "language": runner.language}, report=runner.report,
        test_files=touched, solution_files=[], test_cmd=test_cmd, graded="patch",
        extra={
            "exercise": inst.id, "repo_version": inst.version, "base_commit": inst.base_commit, "env": env.name,
            "image": env.tag, "test_patch_files": touched, "gold_files": sorted(co.gold),
            # report ids (a Go test's is its dataset name; a JavaScript test's is its file and full name)
            "fail_to_pass": [ids.get(n, n) for n in inst.fail_to_pass],
            "pass_to_pass": [ids.get(n, n) for n in inst.pass_to_pass if n not in inst.fail_to_pass],
            "test_names": {ids.get(n, n): n for n in names},
            "truncated": sorted(ids.get(n, n) for n in parents), "subtest_sep": runner.subtest_sep,
            "excluded": excluded,  # dataset test names lab never expects (they need a network)
            "canaries": "manifest",  # check.sh names its canaries in a manifest only root writes (rules.grade)
            # the grading mounts this task where only root reads it (rules.grade.PRIVATE_TASK): the tested code
            # never reads the dataset's test names, which would tell the canaries in its -test.run apart
            "private_task": True,
            # held-out tests that call the fix's new API leave the base's test package unbuilt (SWE-bench's grading
            # never runs the base): its PASS_TO_PASS tests cannot pass there (rules.tiers.swe.swebench.prove)
            "base_may_not_build": True,
        })
    pre = runner.pretest(fields, co.base_files)
    pretest = None if pre is None else render_template("swe_multi/check.sh.j2", holdout=False, **{**context, **pre})
    return swebench.assemble(co, inst.test_patch, context, "swe_multi/check.sh.j2", meta, pretest=pretest)


def image_inputs(inst: swebench.Instance, runner: Runner, repos: str | None):
    """What ``runner.build`` needs of ``inst`` besides its environment (Go: the test packages to compile into
    the image's build cache), from its repository. Raises Rejected or Unavailable as ``render``."""
    co = swebench.checkout(inst, repos, reference=False)
    return co.repo, runner.tests(inst, co.tar, co.tests_after, co.base_files)[3]
