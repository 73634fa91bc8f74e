"""The tier seam: what doit's gen/prove creators need from a tier, and nothing more.

A tier turns some source (an upstream benchmark checkout, a dataset of instances) into tasks. The creators in
``rules/tasks.py`` loop over the registered tiers and ask each one, through this small interface:

- ``tasks(suite, var)``: a ``Selection``: the names of every task the tier has (the manifest lists them all)
  and the ``TaskSpec`` of each task chosen by the command line (``var(name)`` reads a command-line variable);
- ``render(suite, spec)``: the task's files (pure; raises ``Rejected`` with the reason it cannot be a task);
- ``images(suite, specs)``: the ``ImageSpec`` of each environment image the chosen tasks name that lab builds
  on the tier's behalf (none for a tier whose image another creator builds, such as the aider tier's grader);
- ``prove(build, image, limits)``: prove the staged render in ``build`` and write its ``proof.json``;
- ``group_keys``: the names of the labels its tasks carry (``TaskSpec.groups``; written as top-level keys of
  its records, ``rules.records``);
- optionally ``batches(suite, specs, jobs)`` (batch name → task names) and ``prove_batch(builds, image, limits)``:
  prove several stale tasks together before their own ``prove`` runs, which then takes the batch's proof.

A ``TaskSpec`` names its own image (the tag every stage runs it in) and the stamp that says which build of the
image it was proven with, so a tier with one image per repository and version needs no global grader.
Nothing here imports doit: the creators turn these records into task dicts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from rules import aider
from rules.config import Limits, Suite
from rules.records import TASK_FORMAT


class Rejected(Exception):
    """A task cannot be rendered; the message is the reason recorded in its proof and the manifest."""


class Unavailable(Exception):
    """A task's source cannot be reached here (a repository that does not clone): nothing is recorded, the
    command fails with the message (naming the fix), and the next command tries again."""


@dataclass(frozen=True)
class TaskSpec:
    """One task a tier can render: its stable ``name``; ``groups`` (labels such as ``{"language": "go"}`` or
    ``{"repo": "pallets/flask"}``, also the render's fallback meta when it is rejected); ``deps`` (the files
    its render reads: doit ``file_dep``); ``settings`` (anything else whose change must re-render it: doit
    ``config_changed``); ``image`` (the image tag it is proven and graded in) and ``image_stamp`` (the stamp
    file of that image's build); ``source`` (what ``render`` needs: an exercise, a dataset record)."""

    name: str
    groups: dict[str, str]
    deps: tuple[str, ...]
    settings: dict
    image: str
    image_stamp: Path
    source: Any = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class ImageSpec:
    """An environment image a tier builds: ``name`` (``env:<tier>/<name>`` in doit), ``tag``, ``stamp`` (its
    stamp file, the target), ``deps`` (template files), ``settings`` (what else rebuilds it) and ``build`` (a
    callable taking no arguments that builds, stamps and returns the stamp; raises SandboxError)."""

    name: str
    tag: str
    stamp: Path
    deps: tuple[str, ...]
    settings: dict
    build: Callable[[], dict] = field(compare=False, hash=False)


@dataclass
class Selection:
    """A tier's answer to the command line: ``every`` task name it has, the ``chosen`` specs, and a record of
    the ``settings`` in force (written into the manifest)."""

    every: list[str]
    chosen: list[TaskSpec]
    settings: dict


def flag(var: Callable[..., Any], name: str) -> bool:
    """A command-line switch such as ``all=1``: true for 1, true, yes, on."""
    return str(var(name, "0")).lower() in ("1", "true", "yes", "on")


# tier name → its seam class ("module:class"), imported when first asked for (the swe tier's module is heavy)
SEAMS = {"aider": "rules.tier:AiderTier", "swe": "rules.swebench:SweTier"}


def group_keys(tier: str | None) -> tuple[str, ...]:
    """The group keys tier ``tier`` declares (its seam's ``group_keys``); () for a record of no tier or of a tier
    lab has no seam for (its records carry no groups)."""
    import importlib

    if tier not in SEAMS:
        return ()
    module, name = SEAMS[tier].split(":")
    return tuple(getattr(importlib.import_module(module), name).group_keys)


class AiderTier:
    """The aider tier (Exercism exercises, ``rules.aider``) through the seam; one grader image for all tasks."""

    name = "aider"
    group_keys = aider.GROUP_KEYS

    def tasks(self, suite: Suite, var: Callable[..., Any]) -> Selection:
        from rules import aider, images

        langs = var("langs")
        languages = [x.strip() for x in langs.split(",") if x.strip()] if langs else list(suite.languages)
        raw = var("limit", suite.sample)
        try:
            limit = None if flag(var, "all") else int(raw)
        except ValueError:
            limit = -1
        if limit is not None and limit < 1:
            raise SystemExit(f"limit={raw}: give a whole number of exercises per track, 1 or more (or all=1)")
        unknown = set(languages) - set(suite.languages)
        if unknown:
            raise SystemExit(f"langs=: unknown language(s) {sorted(unknown)}; this tier has {list(suite.languages)}")
        everything = aider.discover(suite.checkout_dir, suite.languages)
        chosen = aider.select([e for e in everything if e.track in languages], limit)
        stamp = images.stamp_path("grader")
        specs = [TaskSpec(name=ex.task, groups=dict(zip(self.group_keys, (ex.track, ex.slug))),
                          deps=tuple(ex.files() + [str(p) for p in aider.templates_for(ex.track)]),
                          settings={"format": TASK_FORMAT}, image=images.GRADER, image_stamp=stamp,
                          source=ex) for ex in chosen]
        return Selection([e.task for e in everything], specs, {"languages": languages, "limit": limit})

    def render(self, suite: Suite, spec: TaskSpec):
        from rules import aider

        try:
            return aider.render(spec.source)
        except aider.ExerciseError as exc:
            raise Rejected(str(exc)) from None

    def images(self, suite: Suite, specs: list[TaskSpec]) -> list[ImageSpec]:
        return []  # the grader image is built by `doit image:grader`

    def prove(self, build: Path, image: str, limits: Limits) -> dict:
        from rules import images
        from rules.build import prove_staged

        return prove_staged(build, image=image, limits=limits, stamp=images.stamp_path("grader"),
                            group_keys=self.group_keys)

    def batches(self, suite: Suite, specs: list[TaskSpec], jobs: int) -> dict[str, list[str]]:
        """Batch name → the chosen tasks it may prove together (``prove_batch``): each track with a batch
        runner (rules.prove.BATCH_RUNNERS) and two tasks or more, split into ``jobs`` batches, round robin, so
        they run side by side."""
        from rules.prove import batch_runner

        by_track: dict[str, list[str]] = {}
        for spec in specs:
            track = spec.groups["language"]
            if batch_runner({"tier": self.name, "language": track}):
                by_track.setdefault(track, []).append(spec.name)
        out = {}
        for track, names in by_track.items():
            if len(names) < 2:
                continue
            parts = max(1, min(jobs, len(names) // 2))
            for k in range(parts):
                out[f"{track}-{k + 1}"] = names[k::parts]
        return out

    def prove_batch(self, builds: list[Path], image: str, limits: Limits) -> int:
        from rules import images
        from rules.build import prove_batch_staged

        return prove_batch_staged(builds, image=image, limits=limits, stamp=images.stamp_path("grader"),
                                  group_keys=self.group_keys)
