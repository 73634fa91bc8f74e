"""Where containers run: the one module that talks to Docker (through the Docker SDK).

Everything else in lab asks for an image, or to run a command in a container with some folders mounted and
some limits, and gets back a ``RunResult``. A later backend (a cluster) only has to offer the same few
functions: ``ensure_base_image``, ``build_image``, ``image_id``, ``run``, ``start_service``, ``stop`` and
``cleanup``.

Errors: ``SandboxError`` for anything the engine refused or could not do (no engine, missing image, failed
build). Its message names the thing and the fix. A command that fails *inside* a container is not an error:
it is a ``RunResult`` with a non-zero exit code.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from rules.config import Limits

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
    """What a container did: exit code (None when it was killed for its timeout), its combined stdout and
    stderr (capped at ``OUTPUT_CAP`` bytes, the middle elided), wall-clock seconds, and flags."""

    exit_code: int | None
    output: str
    seconds: float
    timed_out: bool = False
    oom_killed: bool = False
    output_bytes: int = 0  # how much the container wrote in all, before the cap
    image_id: str = ""


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


def _cap(data: bytes, cap: int = OUTPUT_CAP) -> str:
    if len(data) > cap:
        half = cap // 2
        data = data[:half] + f"\n[... {len(data) - cap} bytes elided by lab ...]\n".encode() + data[-half:]
    return data.decode("utf-8", errors="replace")


def run(image: str, command: list[str], *, mounts: Iterable[Mount] = (), env: dict[str, str] | None = None,
        network: str = "none", limits: Limits = Limits(), workdir: str | None = None,
        labels: dict[str, str] | None = None, user: str | None = None, log_path: Path | None = None,
        read_only: bool = False, tmpfs: dict[str, str] | None = None,
        capabilities: tuple[str, ...] | None = None) -> RunResult:
    """Run ``command`` in a fresh container of ``image`` and remove the container afterwards.

    ``network`` is a Docker network mode ("none", "host", or ``ServiceHandle.network``, i.e. ``"container:<id>"``:
    join the network namespace of a service started with ``start_service``). ``limits`` caps CPUs, memory (no
    swap), processes and wall-clock seconds; at the timeout the whole container is killed (every process in it),
    and the result has ``timed_out`` set and ``exit_code`` None. The engine keeps at most 10 MB of output on disk;
    the result keeps ``OUTPUT_CAP`` bytes of it, and ``log_path`` (if given) receives the same capped text.

    Hardening, for containers that run untrusted code: ``read_only`` mounts the image's filesystem read-only;
    ``tmpfs`` maps mount points to tmpfs options (e.g. ``{"/tmp": "size=1g,exec"}``: private, size-capped,
    and charged to the container's memory); ``capabilities`` (a tuple of names such as ``"CHOWN"``) keeps only
    those Linux capabilities and sets no-new-privileges (None: the engine's default set).

    Raises SandboxError when the image is missing or the container cannot be created, StartError (a
    SandboxError) when it cannot be started.
    """
    import requests.exceptions

    c = client()
    LogConfig, DockerMount = docker.types.LogConfig, docker.types.Mount
    all_labels = {LABEL: "1", **run_labels(), **(labels or {})}
    docker_mounts = [DockerMount(target=m.target, source=m.source, type=m.kind, read_only=m.read_only)
                     for m in mounts]
    try:
        container = c.containers.create(
            image, command, detach=True, environment=env or {}, network_mode=network, mounts=docker_mounts,
            working_dir=workdir, labels=all_labels, user=user, read_only=read_only, tmpfs=tmpfs or None,
            **({"cap_drop": ["ALL"], "cap_add": list(capabilities), "security_opt": ["no-new-privileges"]}
               if capabilities is not None else {}),
            nano_cpus=int(limits.cpus * 1e9), mem_limit=limits.memory, memswap_limit=limits.memory,
            pids_limit=limits.pids, log_config=LogConfig(type="json-file", config={"max-size": "10m", "max-file": "1"}),
        )
    except docker.errors.ImageNotFound:
        raise SandboxError(f"image {image!r} is missing; build it with `doit image`") from None
    except docker.errors.APIError as exc:
        raise SandboxError(f"cannot create a container of {image!r}: {exc}") from None
    start = time.monotonic()
    timed_out = False
    exit_code: int | None = None
    try:
        try:
            container.start()
        except docker.errors.APIError as exc:
            raise StartError(f"cannot start a container of {image!r}: {exc}") from None
        try:
            exit_code = int(container.wait(timeout=limits.timeout)["StatusCode"])
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            timed_out = True
            try:
                container.kill()
            except docker.errors.APIError:
                pass
            container.wait(timeout=60)
        seconds = time.monotonic() - start
        raw = container.logs(stdout=True, stderr=True) or b""
        container.reload()
        oom = bool(container.attrs.get("State", {}).get("OOMKilled"))
        result = RunResult(exit_code=None if timed_out else exit_code, output=_cap(raw), seconds=seconds,
                           timed_out=timed_out, oom_killed=oom, output_bytes=len(raw),
                           image_id=container.attrs.get("Image", ""))
    finally:
        try:
            container.remove(force=True)
        except docker.errors.APIError:
            pass
    if log_path is not None:
        from rules.files import write_atomic
        write_atomic(log_path, result.output)
    return result


@dataclass(frozen=True)
class ServiceHandle:
    """A running service container: its id, image, and the network mode that joins its namespace."""

    id: str
    image: str
    image_id: str = ""

    @property
    def network(self) -> str:
        """The network mode for ``run`` that puts a container in this service's network namespace."""
        return f"container:{self.id}"


def start_service(image: str, command: list[str], *, limits: Limits = Limits(), labels: dict[str, str] | None = None,
                  ready: list[str] | None = None, log_path: Path | None = None) -> ServiceHandle:
    """Start ``command`` in a container of ``image`` with network ``none`` (its own namespace holds only a
    loopback interface) and the limits' CPUs, memory and processes; wait until ``ready`` (a probe command
    run inside it, if given) exits 0, for at most ``limits.timeout`` seconds. Returns its handle; call
    ``stop`` when done (``cleanup`` removes it if its owner dies first).

    Raises SandboxError when the image is missing, the container cannot start, exits, or is not ready in
    time; the container is then removed and the message ends with the tail of its output (all of it, capped,
    goes to ``log_path`` if given).
    """
    c = client()
    all_labels = {LABEL: "1", **run_labels(), f"{LABEL}.role": "service", **(labels or {})}  # cleanup's run ids
    try:
        container = c.containers.create(
            image, command, detach=True, network_mode="none", labels=all_labels,
            nano_cpus=int(limits.cpus * 1e9), mem_limit=limits.memory, memswap_limit=limits.memory,
            pids_limit=limits.pids,
            log_config=docker.types.LogConfig(type="json-file", config={"max-size": "10m", "max-file": "1"}))
    except docker.errors.ImageNotFound:
        raise SandboxError(f"service image {image!r} is missing; build it with `doit service_image`") from None
    except docker.errors.APIError as exc:
        raise SandboxError(f"cannot create a container of the service image {image!r}: {exc}") from None
    handle = ServiceHandle(id=container.id, image=image, image_id=container.attrs.get("Image", ""))
    try:
        container.start()
        deadline = time.monotonic() + limits.timeout
        while ready:
            container.reload()
            if container.status not in ("running", "created"):
                raise SandboxError(f"the service of {image!r} exited (status {container.status}) before it was ready")
            if container.exec_run(ready).exit_code == 0:
                break
            if time.monotonic() > deadline:
                raise SandboxError(f"the service of {image!r} was not ready after {limits.timeout:g} s "
                                   f"(probe: {' '.join(ready)[:200]})")
            time.sleep(0.5)
    except (SandboxError, docker.errors.APIError) as exc:
        output = stop(handle, log_path)
        tail = "\n".join(output.rstrip().splitlines()[-20:])
        raise SandboxError(f"{exc}\nlast lines of its output:\n{tail}") from None
    return handle


def _ended(container) -> str | None:
    state = container.attrs.get("State", {})
    if state.get("Status") in ("running", "created"):
        return None
    oom = ", killed for running out of memory" if state.get("OOMKilled") else ""
    return f"exit code {state.get('ExitCode')}{oom}"


def service_ended(handle: ServiceHandle) -> str | None:
    """None while the service's container runs; else how it ended (e.g. ``"exit code 137, killed for running
    out of memory"``, or ``"removed"``)."""
    try:
        return _ended(client().containers.get(handle.id))
    except docker.errors.NotFound:
        return "removed"


def stop(handle: ServiceHandle, log_path: Path | None = None) -> str:
    """Remove the service container of ``handle`` (killing it) and return its output, capped at
    ``OUTPUT_CAP`` bytes (also written to ``log_path`` if given). A container already gone gives ""."""
    output = ""
    try:
        container = client().containers.get(handle.id)
        output = _cap(container.logs(stdout=True, stderr=True) or b"")
        ended = _ended(container)
        if ended:
            output += f"\n[lab: the service's container had stopped before it was removed: {ended}]\n"
        container.remove(force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError:
        try:
            client().api.remove_container(handle.id, force=True)
        except docker.errors.APIError:
            pass
    if log_path is not None:
        from rules.files import write_atomic
        write_atomic(log_path, output)
    return output


def cleanup(only_dead_owners: bool = True) -> int:
    """Remove containers lab started whose run is provably gone (a killed run leaves some behind); with
    ``only_dead_owners=False`` remove every lab container. Returns how many were removed.

    A container's run is provably gone only when it was started on this host in this boot and pid namespace
    and that pid no longer runs or runs a process that started at another time (``_alive``); a container of
    another boot of this host is gone too. Containers of another host or pid namespace (a containerised CI
    sharing the engine), or without run labels (lab before run ids), are left alone."""
    removed = 0
    # the low-level list (one call, labels included): the high-level one inspects each container in turn and
    # fails when another run removes one of them in between
    for cont in client().api.containers(all=True, filters={"label": LABEL}):
        if only_dead_owners and _alive(cont.get("Labels") or {}):
            continue
        try:
            client().api.remove_container(cont["Id"], force=True)
            removed += 1
        except docker.errors.APIError:
            pass
    return removed


def _alive(labels: dict[str, str], here: dict[str, str] | None = None) -> bool:
    """Whether the run that labelled a container may still be running: False only when it provably is not.
    ``labels`` are the container's, ``here`` this process's ``run_labels()`` (for tests)."""
    here = here or run_labels()
    host, boot, pidns = (labels.get(f"{LABEL}.{k}") for k in ("host", "boot", "pidns"))
    pid, start = labels.get(f"{LABEL}.pid", ""), labels.get(f"{LABEL}.start", "")
    if not (host and boot and pidns and pid.isdigit() and start):
        return True  # not provable: no run labels (an older lab), left alone
    if host != here[f"{LABEL}.host"]:
        return True  # another machine, or another container sharing this engine
    if boot != here[f"{LABEL}.boot"]:
        return False  # this host rebooted since: that run is gone
    if pidns != here[f"{LABEL}.pidns"]:
        return True  # another pid namespace on this host: its pids mean nothing here
    return _process_start(int(pid)) == start


def _process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot, field 22 of ``/proc/<pid>/stat``), or None
    when no such process runs (or it is a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state is field 3, starttime field 22
    if fields[0] in ("Z", "X"):
        return None
    return fields[19]


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


_run_labels: dict[str, str] | None = None


def run_labels() -> dict[str, str]:
    """This process's run labels, put on every container it starts: ``lab.host`` (host name), ``lab.boot``
    (``/proc/sys/kernel/random/boot_id``), ``lab.pidns`` (the pid namespace's inode), ``lab.pid``,
    ``lab.start`` (the process's start time, ticks since boot) and ``lab.run`` (all of them in one id).
    Together they tell a run that is gone from one that lives elsewhere (``cleanup``)."""
    global _run_labels
    if _run_labels is None or _run_labels[f"{LABEL}.pid"] != str(os.getpid()):
        import socket

        pid = os.getpid()
        try:
            pidns = os.readlink("/proc/self/ns/pid").strip("pid:[]")
        except OSError:
            pidns = ""
        values = {"host": socket.gethostname(), "boot": _read("/proc/sys/kernel/random/boot_id"), "pidns": pidns,
                  "pid": str(pid), "start": _process_start(pid) or ""}
        _run_labels = {f"{LABEL}.{k}": v for k, v in values.items()}
        _run_labels[f"{LABEL}.run"] = "/".join(values[k] for k in ("host", "boot", "pidns", "pid", "start"))
    return dict(_run_labels)


def volume(name: str) -> str:
    """Make sure the named volume exists (for build caches shared across containers) and return its name."""
    try:
        client().volumes.get(name)
    except docker.errors.NotFound:
        client().volumes.create(name, labels={LABEL: "1"})
    return name
