"""What every other part of ``rules.sandbox`` needs of the engine: the Docker SDK and its client, lab's errors and
result types, and the engine's stores: images (looked up, pulled or bootstrapped, built) and volumes.

The SDK is imported on first use (``client``); the other submodules read it here, as ``engine.docker``, and keep no
copy of their own: it is None until then.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# The Docker SDK is imported on first use (it costs a quarter second): doit's no-op runs never need it.
docker = None


def _sdk():
    global docker
    if docker is None:
        import docker as sdk
        import docker.errors  # noqa: F401
        import docker.types  # noqa: F401
        docker = sdk
    return docker

LABEL = "lab"  # every container lab starts carries this label, and the labels of its run (``run_labels``)
OUTPUT_CAP = 64 * 1024  # bytes of a container's output kept in a RunResult: the first half and the last half


class SandboxError(Exception):
    """The container engine could not do what was asked; the message says what to do about it."""


class StartError(SandboxError):
    """The container was created but could not start: most often its command does not exist in the image."""


@dataclass(frozen=True)
class Mount:
    """A folder (``kind="bind"``, ``source`` an absolute host path) or a named volume (``kind="volume"``)
    mounted at ``target`` in the container."""

    source: str
    target: str
    read_only: bool = False
    kind: str = "bind"


@dataclass
class RunResult:
    """What a container did: exit code (None when it was killed for its timeout or by its watch), its combined
    stdout and stderr (capped at ``OUTPUT_CAP`` bytes, the middle elided), wall-clock seconds, and flags;
    ``stopped``: why the caller's watch had it killed before it ended ("" when it was not)."""

    exit_code: int | None
    output: str
    seconds: float
    timed_out: bool = False
    oom_killed: bool = False
    output_bytes: int = 0  # how much the container wrote in all, before the cap
    image_id: str = ""
    stopped: str = ""


WATCH_EVERY = 5.0  # seconds between two calls of a command's watch (``box_exec``, ``run``)


_client = None


def client():
    """The Docker client from the environment (``DOCKER_HOST`` or the local socket).

    Raises SandboxError when no engine answers.
    """
    global _client
    if _client is None:
        import requests.exceptions

        _sdk()
        try:
            c = docker.from_env(timeout=300)
            c.ping()
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise SandboxError(
                f"no Docker engine answers ({exc}). Start one (`dockerd >/tmp/dockerd.log 2>&1 &`, "
                "or `bash .ci/run` installs and starts it) or set DOCKER_HOST."
            ) from None
        if c.api.base_url.startswith("http+docker://"):  # a local socket: no proxy applies, so requests need not
            c.api.trust_env = False  # look for one in the environment on every call (~0.25 ms each, 50 a trial)
        _client = c
    return _client


def image_id(name: str) -> str | None:
    """The local image id (``sha256:…``) of ``name``, or None when the engine has no such image."""
    try:
        return client().images.get(name).id
    except docker.errors.ImageNotFound:
        return None


def image_id_quick(name: str) -> str | None:
    """Like ``image_id`` but through the ``docker`` CLI when it is installed (35 ms instead of the SDK's
    import): for doit's up-to-date checks, which run on every command."""
    cli = shutil.which("docker")
    if not cli or os.environ.get("DOCKER_HOST", "").startswith("ssh"):
        return image_id(name)
    proc = subprocess.run([cli, "image", "inspect", "-f", "{{.Id}}", name], capture_output=True, text=True)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def image_created(name: str) -> float | None:
    """When the local image ``name`` was made (Unix seconds; the engine's ``Created``, the commit of its last
    layer or config: an image a build took whole from the cache keeps the time it was first made), or None when
    the engine has no such image."""
    from datetime import datetime

    try:
        text = client().images.get(name).attrs.get("Created") or ""
    except docker.errors.ImageNotFound:
        return None
    # RFC 3339 with nanoseconds (``2026-12-07T11:54:46.40668224Z``): fromisoformat takes at most microseconds
    head, _, frac = text.rstrip("Z").partition(".")
    return datetime.fromisoformat(head + "+00:00").timestamp() + (float(f"0.{frac}") if frac else 0.0)


def image_layers() -> dict[str, tuple[tuple[str, ...], int, bool]]:
    """Every local image's id, build intermediates included, → ``(layers, size, listed)``: the diff ids of its
    layers, bottom first (an image built FROM another starts with its layers; a LABEL-only image has exactly its
    base's), the bytes they take (``Size``), and whether ``docker images`` lists it (False: an intermediate
    step of a build, removed with the last image built on it)."""
    api = client().api
    listed = {img["Id"] for img in api.images()}
    out = {}
    for img in api.images(all=True):
        try:
            info = api.inspect_image(img["Id"])
        except docker.errors.NotFound:  # removed meanwhile
            continue
        out[img["Id"]] = (tuple(info.get("RootFS", {}).get("Layers") or ()), int(info.get("Size") or 0),
                          img["Id"] in listed)
    return out


def remove_image(name: str) -> None:
    """Remove the tag ``name`` and, when no other tag or image needs them, the image and its layers (never by
    force: an image a container still uses stays). Raises SandboxError saying why when the engine refuses."""
    try:
        client().images.remove(image=name, force=False, noprune=False)
    except docker.errors.ImageNotFound:
        return
    except docker.errors.APIError as exc:
        raise SandboxError(f"image {name!r} not removed: {exc.explanation or exc}") from None


def image_labels(name: str) -> dict[str, str]:
    """The labels of the local image ``name``; raises SandboxError when it is missing."""
    try:
        return dict(client().images.get(name).labels or {})
    except docker.errors.ImageNotFound:
        raise SandboxError(f"image {name!r} is missing; build it with `doit image`") from None


def ensure_base_image(name: str, log=sys.stderr) -> str:
    """Make sure the Debian image ``name`` (e.g. ``debian:bookworm``) exists locally and return the tag to
    build ``FROM``.

    Order: the local image; one bootstrapped before (``lab/base:<suite>``); a ``docker pull``; else a local bootstrap (``debootstrap --variant=minbase
    <suite>`` imported with ``docker import``) tagged ``lab/base:<suite>``, whose tag is returned. The
    bootstrap needs root and the ``debootstrap`` package. Raises SandboxError when all three fail.
    """
    if image_id(name):
        return name
    suite = name.rsplit(":", 1)[-1] if ":" in name else "bookworm"
    local = f"lab/base:{suite}"
    if image_id(local):  # bootstrapped before: no pull to try again
        return local
    try:
        print(f"pulling {name} ...", file=log, flush=True)
        client().images.pull(name)
        return name
    except docker.errors.APIError as exc:
        reason = " ".join(str(exc).split())
        print(f"cannot pull {name} ({reason[:400]}); bootstrapping {local} locally with debootstrap", file=log,
              flush=True)
    if not shutil.which("debootstrap"):
        raise SandboxError(
            f"base image {name!r} cannot be pulled and `debootstrap` is not installed to build it locally: "
            "`apt-get install -y debootstrap`, or set base_image in evals/<tier>/suite.toml to an image you have"
        )
    with tempfile.TemporaryDirectory(prefix="lab-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        proc = subprocess.run(
            ["debootstrap", "--variant=minbase", suite, str(rootfs)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        if proc.returncode != 0:
            raise SandboxError(f"debootstrap {suite} failed:\n{proc.stdout[-3000:]}")
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        imp = subprocess.run(["docker", "import", "-", local], stdin=tar.stdout, capture_output=True, text=True)
        tar.wait()
        if imp.returncode != 0 or tar.returncode != 0:
            raise SandboxError(f"docker import of the bootstrapped {suite} failed: {imp.stderr.strip()}")
    return local


def build_image(tag: str, dockerfile: str, files: dict[str, bytes] | None = None,
                buildargs: dict[str, str] | None = None, labels: dict[str, str] | None = None,
                log=sys.stderr) -> str:
    """Build ``dockerfile`` (its text) with ``files`` (path in the context → content) as the build context,
    tag it ``tag`` and return the image id. Builds use host networking (no bridge network is needed).

    Progress lines go to ``log``. Raises SandboxError with the tail of the build log when a step fails.
    """
    with tempfile.TemporaryDirectory(prefix="lab-build-") as ctx:
        Path(ctx, "Dockerfile").write_text(dockerfile, encoding="utf-8")
        for rel, data in (files or {}).items():
            p = Path(ctx, rel)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        tail: list[str] = []
        image = None
        try:
            stream = client().api.build(path=ctx, tag=tag, network_mode="host", rm=True, forcerm=True,
                                        buildargs=buildargs or {}, labels=labels or {}, decode=True)
            for chunk in stream:
                if "error" in chunk:
                    raise SandboxError(f"building {tag} failed: {chunk['error'].strip()}\n" + "".join(tail[-40:]))
                text = chunk.get("stream", "")
                if text:
                    tail.append(text)
                    del tail[:-200]
                    if text.startswith("Step "):
                        print(f"[{tag}] {text.strip()[:150]}", file=log, flush=True)
                if "aux" in chunk and "ID" in chunk["aux"]:
                    image = chunk["aux"]["ID"]
        except docker.errors.APIError as exc:
            raise SandboxError(f"building {tag} failed: {exc}") from None
    return image or image_id(tag) or ""


def capped(data: bytes, cap: int = OUTPUT_CAP, elided: int = 0) -> str:
    """``data`` as text, its middle elided past ``cap`` bytes; ``elided``: bytes already cut from between
    ``data``'s two halves (``box._Capped``)."""
    if len(data) > cap or elided:
        half = cap // 2
        elided += max(0, len(data) - cap)
        data = data[:half] + f"\n[... {elided} bytes elided by lab ...]\n".encode() + data[-half:]
    return data.decode("utf-8", errors="replace")


def volume(name: str) -> str:
    """Make sure the named volume exists (for build caches shared across containers) and return its name."""
    try:
        client().volumes.get(name)
    except docker.errors.NotFound:
        client().volumes.create(name, labels={LABEL: "1"})
    return name
