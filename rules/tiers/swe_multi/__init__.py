"""The swe-multi tier: SWE-bench Multilingual (300 instances, 41 repositories, 9 languages), each a real repository
at the commit before a fix, the issue as the prompt, held-out FAIL_TO_PASS / PASS_TO_PASS tests, proven and graded
offline under lab's honest-grading contract.

What it shares with the swe tier (``rules.tiers.swe.swebench``), unchanged: the dataset record and its reader
(``Instance``, ``load_dataset``: Multilingual has no ``environment_setup_commit``, the base commit stands in), the
repositories (``repo_dir``: ``repos=DIR`` or a clone kept under ``.lab/upstream/swe/``), the proof by what the
dataset's lists mean (``prove``: the gold patch run three times, flaky tests set apart, the base run checked;
``members`` with the runner's subtest separator), the predictions in and out (``evaluate``, ``read_predictions``,
``pseudo_predictions``: SWE-bench's format) and the templates ``swe/prompt.txt.j2`` and ``swe/setup.sh.j2``. Its
own: the accounting of every instance (``languages``: a candidate, or rejected with what is missing here), one
environment image per instance (``env``), the shared check.sh (``templates/swe_multi/check.sh.j2``; a task is
graded where only root reads it, ``private_task``), one runner per language, and the suspicion scan's table of
each language (``suspicions``: flags beside every ``doit evaluate`` verdict).

Adding a language is one module and one template folder:

- ``rules/tiers/swe_multi/<language>.py`` with a ``runner()`` returning ``render.Runner``: its toolchain table from
  SWE-bench v4.1.0's ``swebench/harness/constants/<language>.py`` (``env_for``), ``tests`` (where the dataset's
  test names live in the tree after the test patch, what check.sh needs to run just them, which names stand for
  several report ids, the agents' test command) and ``build`` (its environment image: toolchain and dependencies
  fetched at build time, none at grading);
- ``templates/swe_multi/<language>/``: ``env.Dockerfile.j2``, ``lay_tests.sh.j2`` (the test files check.sh lays
  back from the base commit), ``canaries.sh.j2`` (the aider tier's canary writer of that language, copied into
  the image) and ``run.sh.j2`` (the tests as the tester, their machine-readable report into ``$out``);
- its name in ``RUNNERS`` below, and a report format of ``rules.reports`` (already there for Rust: libtest JSON,
  ``parse_libtest_json``; JS/TS: jest JSON, ``parse_jest_json``; Java: Surefire's JUnit XML, ``parse_junit``;
  C/C++: googletest's XML, ``parse_gtest_xml``; another project's own format needs a reader added there);
- tests/test_swe_multi_<language>.py: its runner on a fixture repository made at test time.

Trials of agents are the swe tier's (``rules.tiers.swe.SweTrials``: attempts across agents, retry until plausible,
each agent's image built FROM the task's environment image); a task's ``pretest.sh`` (the pre-existing tests of
its packages at the base commit, never a held-out test) is what an attempt must not break. ``doit prune:swe-multi``
removes the environment images no published task needs, as ``prune:swe`` does.

Not built yet: runners other than Go, Rust, Java (Maven), JavaScript/TypeScript (npm with jest or mocha: axios
and immutable-js) and C/C++'s CMake/googletest one (fmt); the other repositories of those languages are rejected
with what is missing (``languages.PENDING``, ``languages.ANT``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from rules.config import TEMPLATES, ConfigError, Limits, Suite
from rules.records import TASK_FORMAT
from rules.tier import ImageSpec, Metric, Profile, Rejected, Selection, TaskSpec, flag
from rules.tiers.swe import SweTrials
from rules.tiers.swe_multi import languages
from rules.tiers.swe_multi.env import IMAGE_PREFIX, STAMP_PREFIX
from rules.tiers.swe_multi.render import GROUPS, RENDER, TIER

PROFILE = Profile(TIER, (Metric("resolved", "resolved", 1),), group="repo", groups="repos", passed="resolved",
                  failed="unresolved", free=False, records=False, attempts=True, verb="resolved",
                  rate_noun="resolved rate", rates="the resolved rate", passes="resolves", try_word="attempt")


def runners() -> dict:
    """The languages this tier runs: language → ``render.Runner`` (imported on first use)."""
    from rules.tiers.swe_multi import c, golang, java, javascript, rust

    return {"c": c.runner(), "go": golang.runner(), "java": java.runner(), "javascript": javascript.runner(),
            "rust": rust.runner()}


# the languages of ``runners()``, known without importing them
RUNNERS = frozenset({"c", "go", "java", "javascript", "rust"})


class SweMultiTier(SweTrials):
    """SWE-bench Multilingual through the seam of rules/tier.py: one environment image per instance, proofs by
    test identity, the swe tier's trials (``SweTrials``), the resolved rate per repository (and its language as a
    group)."""

    name = TIER
    groups = GROUPS
    profile = PROFILE
    selection_vars = ("instances", "limit", "all", "langs")
    env_stamp_prefix = STAMP_PREFIX

    def tasks(self, suite: Suite, var: Callable) -> Selection:
        from rules import images
        from rules.tiers.swe import swebench

        dataset = swebench.dataset_path(suite, var)
        data = swebench.load_dataset(dataset)

        def in_langs(ids: list[str], named: bool) -> list[str]:
            raw_langs = var("langs")
            if not raw_langs:
                return ids
            langs = {x.strip() for x in raw_langs.split(",") if x.strip()}
            bad = sorted(langs - set(languages.NAMES))
            if bad:
                raise Rejected(f"langs=: unknown {', '.join(bad)}; give some of {', '.join(languages.NAMES)}")
            extra = dict(suite.table.get("languages") or {})
            # langs= alone means every instance of those languages, not suite.toml's few (all Go)
            pool = ids if named or flag(var, "all") else list(data)
            chosen = [i for i in pool if languages.language(data[i].repo, extra) in langs]
            if not chosen:
                raise Rejected(f"langs={raw_langs}: none of the {len(pool)} instances chosen is in "
                               f"{', '.join(languages.NAMES[x] for x in sorted(langs))}; nothing to do")
            return chosen

        ids = swebench.select(data, suite, var, in_langs)
        repos = var("repos") or suite.table.get("repos") or None
        templates = tuple(str(p) for p in sorted((TEMPLATES / "swe_multi").rglob("*.j2"))
                          if p.name != "env.Dockerfile.j2") + (
            str(TEMPLATES / "swe" / "prompt.txt.j2"), str(TEMPLATES / "swe" / "setup.sh.j2"))
        made = runners()
        extra = dict(suite.table.get("languages") or {})  # more repositories: {repo: language}
        toolchains = dict(suite.table.get("toolchains") or {})  # more toolchains: {repo: {version: toolchain}}
        specs = []
        for iid in ids:
            inst = data[iid]
            lang = languages.language(inst.repo, extra) or "?"
            why = languages.blocked(inst.repo, RUNNERS, extra)
            runner = made.get(lang) if why is None else None
            env = runner.env_for(inst.repo, inst.version, toolchains) if runner else None
            if runner and env is None:
                why = f"no {languages.NAMES[lang]} toolchain for {inst.repo} {inst.version} in lab's table (rules/tiers/swe_multi/{lang}.py)"
            specs.append(TaskSpec(
                name=iid, groups={"repo": inst.repo, "language": lang}, deps=templates,
                settings={"format": TASK_FORMAT, "render": RENDER, "instance": inst.digest, "env": env.digest() if env else None,
                          "repos": repos, "rejected": why},
                image=env.tag if env else "",
                image_stamp=images.stamp_path(env.stamp_name) if env else None,
                source=(inst, env, runner, why, repos, float(suite.prove.timeout))))
        settings = {"dataset": str(dataset), "instances": ids, "repos": repos}
        labels = {i: {"repo": inst.repo, "language": languages.language(inst.repo, extra) or "?"}
                  for i, inst in data.items()}
        return Selection(list(data), specs, settings, labels=labels)

    def render(self, suite: Suite, spec: TaskSpec):
        from rules.tiers.swe_multi.render import render

        inst, env, runner, why, repos, timeout = spec.source
        if why:
            raise Rejected(why)
        return render(inst, env, runner, repos, test_timeout=int(timeout))

    def images(self, suite: Suite, specs: list[TaskSpec]) -> list[ImageSpec]:
        from rules import images

        out, seen = [], set()
        for spec in specs:
            inst, env, runner, why, repos, _ = spec.source
            if env is None or env.name in seen:
                continue
            seen.add(env.name)
            deps = (str(TEMPLATES / runner.template_dir / "env.Dockerfile.j2"),
                    str(runner.canary_writer or TEMPLATES / "images" / "grader" / "lab_grader"
                        / f"{runner.language}_canaries.py"))
            out.append(ImageSpec(name=env.name, tag=env.tag, stamp=images.stamp_path(env.stamp_name), deps=deps,
                                 settings={"env": env.digest()},
                                 build=lambda env=env, inst=inst, runner=runner, repos=repos: _build(env, inst,
                                                                                                     runner, repos)))
        return out

    def suspicions(self, meta: dict) -> tuple:
        """The table of the task's language (``rules.tiers.swe_multi.suspicions``): what a patch has no business
        adding to the code its test binaries compile; () for a language without one."""
        from rules.tiers.swe_multi.suspicions import TABLE

        return TABLE.get(meta.get("language"), ())

    def prove(self, build: Path, image: str, limits: Limits) -> dict:
        from rules import images
        from rules.build import prove_staged
        from rules.tiers.swe import swebench

        stamp = images.stamp_path(f"{STAMP_PREFIX}{image.split(':', 1)[1]}") \
            if image.startswith(IMAGE_PREFIX + ":") else None
        return prove_staged(build, image=image, limits=limits, stamp=stamp, group_keys=GROUPS, prove=swebench.prove)

    def evaluate(self, predictions: str | None, dataset: str | None) -> str:
        """``doit evaluate suite=swe-multi predictions=FILE|gold|empty``: grade SWE-bench predictions with the
        held-out tests of the published tasks (``rules.tiers.swe.swebench.evaluate``); writes
        evals/swe-multi/evaluations/<name>/ and returns the summary. Raises Rejected or ConfigError."""
        from rules.config import load_suite
        from rules.tiers.swe import swebench

        if not predictions:
            raise ConfigError("give predictions=FILE (SWE-bench JSONL: instance_id, model_name_or_path, "
                              "model_patch), or predictions=gold / predictions=empty")
        suite = load_suite(self.name)
        if not swebench.published(suite):
            raise ConfigError(f"no published swe-multi tasks in {suite.dir}: run `doit gen:swe-multi` first")
        path = Path(predictions)
        if predictions in swebench.PSEUDO and not path.exists():
            path = swebench.pseudo_predictions(suite, predictions,
                                               swebench.dataset_path(suite, lambda n, d=None: dataset or d))
        return swebench.results_summary(swebench.evaluate(suite, path))


def _build(env, inst, runner, repos) -> dict:
    """Build ``env``'s image: the runner's build with what it needs of ``inst`` read from its repository. A
    render problem (Rejected, Unavailable) stops the build with its line."""
    from rules.sandbox import SandboxError
    from rules.tiers.swe_multi.render import image_inputs

    try:
        repo, inputs = image_inputs(inst, runner, repos)
    except Exception as exc:  # Rejected/Unavailable: the task's render says the same and is recorded there
        raise SandboxError(f"environment {env.name}: {exc}") from None
    return runner.build(env, repo, inst.base_commit, inputs)
