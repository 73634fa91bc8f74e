"""The images lab builds: the grader image (all toolchains, offline), one image per agent, and one per service
(``rules.services``: e.g. a local model server, built from the Debian base image).

Dockerfiles are Jinja2 templates under ``templates/images/``; the build context is that folder plus the
host's CA bundle. After a build, each image is stamped: ``.lab/images/<name>.json`` holds its id and the
toolchain versions also written into its labels. Downstream doit tasks depend on the stamp, so a rebuilt
image (a new id) re-proves the tasks, while a no-change rebuild leaves the stamp, and them, alone.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

from rules import context, sandbox
from rules.config import STATE, TEMPLATES
from rules.files import read_json, write_json
from rules.render import render

# LAB_GRADER_IMAGE and LAB_GRADER_TRACKS (comma-separated) are for working on one track's image alone
GRADER = os.environ.get("LAB_GRADER_IMAGE", "lab/grader:latest")
TRACK_ORDER = tuple(t for t in ("python", "go", "javascript", "cpp", "java", "rust")  # grader layers, steadiest first
                    if t in os.environ.get("LAB_GRADER_TRACKS", t).split(","))
HOST_CA = context.HOST_CA


def stamps_dir() -> Path:
    """The folder of every image stamp of this lab home (``.lab/images/``)."""
    return STATE / "images"


def stamp_path(name: str) -> Path:
    """Where the stamp of image ``name`` (``grader``, ``agent-<agent>``) is kept."""
    return stamps_dir() / f"{name}.json"


def _image_files() -> list[Path]:
    """Every file under ``templates/images/`` but Python's bytecode caches (``rules.context.image_files``)."""
    return context.image_files(TEMPLATES)


def grader_templates() -> list[Path]:
    """Every template file the grader image is built from (its doit ``file_dep``)."""
    return [p for p in _image_files() if not {"agents", "services"} & set(p.relative_to(TEMPLATES / "images").parts)]


def context_files() -> dict[str, bytes]:
    """The build context (``rules.context.context_files``): every file under ``templates/images/`` and the
    host's CA bundle."""
    return context.context_files(TEMPLATES)


def grader_dockerfile(base: str) -> str:
    """The grader's Dockerfile text, ``FROM`` the tag ``base``."""
    return render("images/grader.Dockerfile.j2", base=base, tracks=TRACK_ORDER)


def staging_tag(tag: str) -> str:
    """The tag an image ``tag`` is built under before it is labelled: ``<repo>:staging`` for ``<repo>:latest``,
    else ``<repo>:<version>-staging``, so two tags of one repository (``LAB_GRADER_IMAGE``) never build
    through the same staging tag."""
    repo, _, version = tag.rpartition(":")
    if not repo or "/" in version:  # no version given: docker's own default
        repo, version = tag, "latest"
    return f"{repo}:staging" if version == "latest" else f"{repo}:{version}-staging"


def build_and_stamp(name: str, tag: str, dockerfile: str, log=sys.stderr, stamp_file: bool = True) -> dict:
    """Build ``dockerfile`` as ``tag``, read its toolchain versions (``lab-versions`` in the image), label
    the image with them and write the stamp ``{"image", "id", "toolchains"}``; returns the stamp.

    The stamp file is rewritten only when the image id changed. Raises SandboxError on a failed build.
    """
    staging = staging_tag(tag)
    sandbox.build_image(staging, dockerfile, context_files(), log=log)
    probe = sandbox.run(staging, ["lab-versions"], network="none")
    try:
        toolchains = json.loads(probe.output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        toolchains = {"raw": probe.output[-500:]}
    labels = {"lab.toolchains": json.dumps(toolchains, sort_keys=True)}
    image = sandbox.build_image(tag, f"FROM {staging}\n", {}, labels=labels, log=log)
    stamp = {"image": tag, "id": image, "toolchains": toolchains}
    if stamp_file:  # tests build without touching the project's stamp (it would re-prove the project's tier)
        write_json(stamp_path(name), stamp, only_if_changed=True)
    return stamp


def build_grader(base_image: str, log=sys.stderr, stamp_file: bool = True) -> dict:
    """Build the grader image from the Debian image ``base_image`` (pulled, or bootstrapped locally) and
    stamp it (unless ``stamp_file`` is False). Returns the stamp. Raises SandboxError."""
    base = sandbox.ensure_base_image(base_image, log=log)
    return build_and_stamp("grader", GRADER, grader_dockerfile(base), log=log, stamp_file=stamp_file)


def built_here(image: str, since: float) -> bool:
    """True when the engine's image ``image`` (a tag or id) was made at or after ``since`` (Unix seconds, read
    before the build began): this build made it. False when the build found it whole in Docker's cache, made
    before (by another lab home on the same engine, or an earlier build of this one): a stamp records which
    (``built_here``), so that ``doit prune:<tier>`` removes only images this home made."""
    created = sandbox.image_created(image)
    return created is not None and created >= since


def agent_stamp_name(agent, base: str | None = None) -> str:
    """The stamp name of ``agent``'s image built ``FROM`` ``base`` (None: the grader image): ``agent-<name>``,
    or ``agent-<name>-on-<base>`` on another base (a swe task's environment image)."""
    if base is None or base == GRADER:
        return agent.stamp_name
    return f"{agent.stamp_name}-on-" + re.sub(r"[^a-zA-Z0-9_.-]+", "-", base).strip("-.")[:100]


def build_agent(agent, log=sys.stderr, base: str | None = None, base_image: str = "debian:bookworm") -> dict:
    """Build the image of ``agent`` (a ``rules.agents.Agent``) ``FROM`` ``base`` (None: the grader image
    ``GRADER``; a swe task's environment image, so the agent can run the repository's tests) and stamp it
    (``agent_stamp_name``); its template may build the agent's own prefix in the Debian image ``base_image``
    (pulled, or bootstrapped locally), or in another suite of it when the agent's build table names one
    (``debian_suite = "trixie"``: a newer Python than ``base_image`` has). Returns the stamp. Raises SandboxError
    (failed build) or AgentError (no template)."""
    base = base or GRADER
    suite = dict(agent.build).get("debian_suite")
    debian = sandbox.ensure_base_image(f"{base_image.rsplit(':', 1)[0]}:{suite}" if suite else base_image, log=log)
    if base == GRADER:
        return build_and_stamp(agent.stamp_name, agent.tag(base), agent.dockerfile(base, debian), log=log)
    # another base has no lab-versions to read toolchains from: build the tag straight, no staging tag shared
    since = time.time()
    image = sandbox.build_image(agent.tag(base), agent.dockerfile(base, debian), context_files(), log=log)
    path = stamp_path(agent_stamp_name(agent, base))
    old = read_json(path)
    if isinstance(old, dict) and old.get("id") == image and old.get("base") == base:
        return old  # the same image: whoever made it, the stamp already says
    stamp = {"image": agent.tag(base), "id": image, "base": base, "built_here": built_here(image, since)}
    write_json(path, stamp, only_if_changed=True)
    return stamp


def build_service(service, base_image: str, log=sys.stderr) -> dict:
    """Build the image of ``service`` (a ``rules.services.Service``) ``FROM`` the Debian image ``base_image``
    (pulled, or bootstrapped locally) and stamp it as ``service.stamp_name``: ``{"image", "id", "build",
    "seconds"}`` (the build's wall-clock seconds). Returns the stamp. Raises SandboxError (failed build) or
    ServiceError (no template)."""
    import time

    base = sandbox.ensure_base_image(base_image, log=log)
    start = time.monotonic()
    image = sandbox.build_image(service.tag(), service.dockerfile(base), context_files() | service.context_files(),
                                labels={"lab.service.build": json.dumps(dict(service.build), sort_keys=True)}, log=log)
    stamp = {"image": service.tag(), "id": image, "build": dict(service.build),
             "seconds": round(time.monotonic() - start, 1)}
    old = read_json(stamp_path(service.stamp_name)) or {}
    if old.get("id") != image:  # a no-change rebuild leaves the stamp (and the trials that depend on it) alone
        write_json(stamp_path(service.stamp_name), stamp)
    return stamp


def stamp_current(name: str) -> bool:
    """True when the stamp of image ``name`` exists and the engine still has that exact image (doit's
    ``uptodate`` check: a removed image is rebuilt)."""
    stamp = read_json(stamp_path(name))
    if not stamp:
        return False
    try:
        return sandbox.image_id_quick(stamp["image"]) == stamp["id"]
    except sandbox.SandboxError:
        return False
