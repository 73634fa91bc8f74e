"""Containers that run one command: ``run`` (a fresh container per command, removed after) and services
(``start_service``: a container beside an agent's for one trial). ``create_container`` and ``start_container`` are
the steps ``run`` and ``box.start_box`` share: lab's labels, limits and hardening, and the null network's holder.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from rules.config import Limits
from rules.sandbox import engine
from rules.sandbox.engine import LABEL, Mount, RunResult, SandboxError, StartError, capped, client
from rules.sandbox.netns import holder_gone, is_null, network_mode
from rules.sandbox.owners import run_labels, stopping


def _docker_mounts(mounts: Iterable[Mount]) -> list:
    """lab's ``Mount``s as the Docker SDK's."""
    return [engine.docker.types.Mount(target=m.target, source=m.source, type=m.kind, read_only=m.read_only)
            for m in mounts]


def create_container(image: str, command: list[str] | None, *, mounts: Iterable[Mount] = (),
                     env: dict[str, str] | None = None, network: str = "none", limits: Limits = Limits(),
                     workdir: str | None = None, labels: dict[str, str] | None = None, user: str | None = None,
                     read_only: bool = False, tmpfs: dict[str, str] | None = None,
                     capabilities: tuple[str, ...] | None = None, entrypoint: list[str] | None = None,
                     stdin_open: bool = False, logs: bool = True):
    """Create (not start) a container of ``image`` with lab's labels, limits (CPUs, memory without swap,
    processes), log configuration (``logs``: the engine keeps the output, at most 10 MB, else none) and
    hardening options: the one place ``run`` and ``start_box`` share.
    Raises SandboxError when the image is missing or the engine refuses."""
    if stopping():
        raise SandboxError("lab is stopping: no container is started any more")
    c = client()
    LogConfig = engine.docker.types.LogConfig
    all_labels = {LABEL: "1", **run_labels(), **(labels or {})}
    mode, network_mounts = network_mode(network, image, labels, read_only)
    docker_mounts = _docker_mounts(mounts) + network_mounts
    try:
        return c.containers.create(
            image, command, detach=True, environment=env or {}, network_mode=mode, mounts=docker_mounts,
            working_dir=workdir, labels=all_labels, user=user, stdin_open=stdin_open, read_only=read_only,
            tmpfs=tmpfs or None,
            **({"entrypoint": entrypoint} if entrypoint is not None else {}),
            **({"cap_drop": ["ALL"], "cap_add": list(capabilities), "security_opt": ["no-new-privileges"]}
               if capabilities is not None else {}),
            nano_cpus=int(limits.cpus * 1e9), mem_limit=limits.memory, memswap_limit=limits.memory,
            pids_limit=limits.pids,
            log_config=(LogConfig(type="json-file", config={"max-size": "10m", "max-file": "1"}) if logs
                        else LogConfig(type="none")),
        )
    except engine.docker.errors.ImageNotFound:
        raise SandboxError(f"image {image!r} is missing; build it with `doit image`") from None
    except engine.docker.errors.APIError as exc:
        if is_null(network) and holder_gone(mode):
            return create_container(image, command, mounts=mounts, env=env, network=network, limits=limits,
                                    workdir=workdir, labels=labels, user=user, read_only=read_only, tmpfs=tmpfs,
                                    capabilities=capabilities, entrypoint=entrypoint, stdin_open=stdin_open,
                                    logs=logs)
        raise SandboxError(f"cannot create a container of {image!r}: {exc}") from None


def start_container(container, network: str, recreate) -> object:
    """Start ``container``; when that fails because its ``NULL`` network's holder is gone, remove it and start
    ``recreate()`` (a new container on a new holder) instead. Returns the started container; raises the
    engine's APIError otherwise."""
    try:
        container.start()
        return container
    except engine.docker.errors.APIError:
        mode = container.attrs.get("HostConfig", {}).get("NetworkMode", "")
        if not is_null(network) or not holder_gone(mode):
            raise
    try:
        container.remove(force=True)
    except engine.docker.errors.APIError:
        pass
    container = recreate()
    try:
        container.start()
    except engine.docker.errors.APIError:
        try:
            container.remove(force=True)
        except engine.docker.errors.APIError:
            pass
        raise
    return container


def run(image: str, command: list[str], *, mounts: Iterable[Mount] = (), env: dict[str, str] | None = None,
        network: str = "none", limits: Limits = Limits(), workdir: str | None = None,
        labels: dict[str, str] | None = None, user: str | None = None, log_path: Path | None = None,
        read_only: bool = False, tmpfs: dict[str, str] | None = None,
        capabilities: tuple[str, ...] | None = None, watch: Callable[[], str] | None = None) -> RunResult:
    """Run ``command`` in a fresh container of ``image`` and remove the container afterwards.

    ``network`` is a Docker network mode ("none", "host", or ``ServiceHandle.network``, i.e. ``"container:<id>"``:
    join the network namespace of a service started with ``start_service``), ``NULL`` (no network, like "none",
    in the loopback-only namespace this thread keeps for the ``lab.role`` label: ``netns._null_network``; for
    images lab trusts) or ``null_network(<trusted image>)`` (the same, for images it does not). ``limits`` caps CPUs,
    memory (no swap), processes and wall-clock seconds; at the timeout the whole container is killed (every process
    in it), and the result has ``timed_out`` set and ``exit_code`` None. The engine keeps at most 10 MB of output on
    disk; the result keeps ``OUTPUT_CAP`` bytes of it, and ``log_path`` (if given) receives the same capped text.

    Hardening, for containers that run untrusted code: ``read_only`` mounts the image's filesystem read-only;
    ``tmpfs`` maps mount points to tmpfs options (e.g. ``{"/tmp": "size=1g,exec"}``: private, size-capped,
    and charged to the container's memory); ``capabilities`` (a tuple of names such as ``"CHOWN"``) keeps only
    those Linux capabilities and sets no-new-privileges (None: the engine's default set).
    ``watch``: called about every ``WATCH_EVERY`` seconds while the container runs; a non-empty answer (the
    reason) kills it as the timeout does, with ``stopped`` set to that reason and ``timed_out`` false.

    Raises SandboxError when the image is missing or the container cannot be created, StartError (a
    SandboxError) when it cannot be started.
    """
    import requests.exceptions

    def create():
        return create_container(image, command, mounts=mounts, env=env, network=network, limits=limits,
                                workdir=workdir, labels=labels, user=user, read_only=read_only, tmpfs=tmpfs,
                                capabilities=capabilities)

    container = create()
    start = time.monotonic()
    timed_out, stopped = False, ""
    exit_code: int | None = None
    try:
        try:
            container = start_container(container, network, create)
        except engine.docker.errors.APIError as exc:
            raise StartError(f"cannot start a container of {image!r}: {exc}") from None
        deadline = start + limits.timeout
        while True:
            left = deadline - time.monotonic()
            try:
                exit_code = int(container.wait(timeout=max(1, min(left, engine.WATCH_EVERY) if watch else left))
                                ["StatusCode"])
                break
            except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
                if watch is None or time.monotonic() >= deadline:
                    timed_out = True
                else:
                    stopped = (watch() if watch is not None else "") or ""
                    if not stopped:
                        continue
            try:
                container.kill()
            except engine.docker.errors.APIError:
                pass
            container.wait(timeout=60)
            break
        seconds = time.monotonic() - start
        raw = container.logs(stdout=True, stderr=True) or b""
        container.reload()
        oom = bool(container.attrs.get("State", {}).get("OOMKilled"))
        result = RunResult(exit_code=None if timed_out or stopped else exit_code, output=capped(raw), seconds=seconds,
                           timed_out=timed_out, oom_killed=oom, output_bytes=len(raw),
                           image_id=container.attrs.get("Image", ""), stopped=stopped)
    finally:
        try:
            container.remove(force=True)
        except engine.docker.errors.APIError:
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
                  ready: list[str] | None = None, log_path: Path | None = None, network: str = "none",
                  mounts: Iterable[Mount] = (), workdir: str | None = None) -> ServiceHandle:
    """Start ``command`` in a container of ``image`` with network ``network``: ``none`` (its own namespace holds
    only a loopback interface), or another service's ``ServiceHandle.network`` to share its namespace; and the limits' CPUs, memory and processes; wait until ``ready`` (a probe command
    run inside it, if given) exits 0, for at most ``limits.timeout`` seconds; ``mounts`` and ``workdir`` as for
    ``run``. Returns its handle; call
    ``stop`` when done (``cleanup`` removes it if its owner dies first).

    Raises SandboxError when the image is missing, the container cannot start, exits, or is not ready in
    time; the container is then removed and the message ends with the tail of its output (all of it, capped,
    goes to ``log_path`` if given).
    """
    c = client()
    all_labels = {LABEL: "1", **run_labels(), f"{LABEL}.role": "service", **(labels or {})}  # cleanup's run ids
    try:
        container = c.containers.create(
            image, command, detach=True, network_mode=network, labels=all_labels, working_dir=workdir,
            mounts=_docker_mounts(mounts),
            nano_cpus=int(limits.cpus * 1e9), mem_limit=limits.memory, memswap_limit=limits.memory,
            pids_limit=limits.pids,
            log_config=engine.docker.types.LogConfig(type="json-file", config={"max-size": "10m", "max-file": "1"}))
    except engine.docker.errors.ImageNotFound:
        raise SandboxError(f"service image {image!r} is missing; build it with `doit service_image`") from None
    except engine.docker.errors.APIError as exc:
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
    except (SandboxError, engine.docker.errors.APIError) as exc:
        output = stop(handle, log_path)
        tail = "\n".join(output.rstrip().splitlines()[-20:])
        raise SandboxError(f"{exc}\nlast lines of its output:\n{tail}") from None
    return handle


def service_exec(handle: ServiceHandle, command: list[str]) -> tuple[int, str]:
    """Run ``command`` in the running service container of ``handle``: (exit code, output capped at
    ``OUTPUT_CAP`` bytes). Raises SandboxError when the container is gone or the engine refuses."""
    try:
        res = client().containers.get(handle.id).exec_run(command)
    except engine.docker.errors.APIError as exc:  # NotFound is an APIError
        raise SandboxError(f"cannot run {command[0]} in the service container {handle.image}: {exc}") from None
    return res.exit_code, capped(res.output or b"")


def service_output(handle: ServiceHandle) -> str:
    """The output of the running service container of ``handle`` so far, capped at ``OUTPUT_CAP`` bytes.
    Raises SandboxError when the container is gone or the engine refuses."""
    try:
        return capped(client().containers.get(handle.id).logs(stdout=True, stderr=True) or b"")
    except engine.docker.errors.APIError as exc:  # NotFound is an APIError
        raise SandboxError(f"cannot read the output of the service container {handle.image}: {exc}") from None


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
    except engine.docker.errors.NotFound:
        return "removed"


def stop(handle: ServiceHandle, log_path: Path | None = None) -> str:
    """Remove the service container of ``handle`` (killing it) and return its output, capped at
    ``OUTPUT_CAP`` bytes (also written to ``log_path`` if given). A container already gone gives ""."""
    output = ""
    try:
        container = client().containers.get(handle.id)
        output = capped(container.logs(stdout=True, stderr=True) or b"")
        ended = _ended(container)
        if ended:
            output += f"\n[lab: the service's container had stopped before it was removed: {ended}]\n"
        container.remove(force=True)
    except engine.docker.errors.NotFound:
        pass
    except engine.docker.errors.APIError:
        try:
            client().api.remove_container(handle.id, force=True)
        except engine.docker.errors.APIError:
            pass
    if log_path is not None:
        from rules.files import write_atomic
        write_atomic(log_path, output)
    return output
