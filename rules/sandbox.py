"""Where containers run: the one module that talks to Docker (through the Docker SDK).

Everything else in lab asks for an image, or to run a command in a container with some folders mounted and
some limits, and gets back a ``RunResult``. A later backend (a cluster) only has to offer the same few
functions: ``ensure_base_image``, ``build_image``, ``image_id``, ``run``, ``start_box``, ``box_exec``,
``stop_box``, ``start_service``, ``stop`` and ``cleanup``.

Two ways to run a command: ``run`` starts a fresh container for it and removes it after (~0.17 s even for
``true``); a *box* (``start_box``) is a long-lived container whose PID 1, a small shell loop of lab's, runs one
command after another as lab sends them on its stdin (``box_exec``: ~3 ms each, where ``docker exec`` costs ~30 ms
of CPU), each with the container's environment, user and working directory; ``stop_box`` removes it. A trial's
agent runs in one box for all its tries.

No network: ``network="none"`` is Docker's own (a new network namespace per container, ~80 ms of CPU to make
and tear down, measured here); ``NULL`` (what lab's graders use) and ``null_network(image)`` (what network-less
agents use: the namespace held by a container of an image lab trusts) are as network-less, in a namespace lab
keeps per worker thread and role and lends to one container after another (``_null_network``).

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
import threading
import time
from dataclasses import dataclass, field
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


def _cap(data: bytes, cap: int = OUTPUT_CAP, elided: int = 0) -> str:
    """``data`` as text, its middle elided past ``cap`` bytes; ``elided``: bytes already cut from between
    ``data``'s two halves (``_Capped``)."""
    if len(data) > cap or elided:
        half = cap // 2
        elided += max(0, len(data) - cap)
        data = data[:half] + f"\n[... {elided} bytes elided by lab ...]\n".encode() + data[-half:]
    return data.decode("utf-8", errors="replace")


# ---- the null network: a loopback-only network namespace per worker thread and role, lent out in turn ----

NULL = "lab-null"  # a network mode of lab's own for ``run`` and ``start_box``: no network, see ``_null_network``
_holders: dict[tuple[int, str, str], str] = {}  # (thread id, role, holder image) -> the id of the holder
_holders_lock = threading.Lock()
_no_holder: set[str] = set()  # images that cannot hold one (no /bin/sh): their containers get "none"


def null_network(holder_image: str) -> str:
    """A network mode for ``run`` and ``start_box``: ``NULL``, but with the namespace held by a container of
    ``holder_image`` (an image lab built and trusts: its grader's) instead of one of the container's own image.
    For containers of images lab does not trust (agents'): a holder's program lives on in the namespace the
    thread's later containers join, so it must never be one an agent's author wrote."""
    return f"{NULL}:{holder_image}"


def _is_null(network: str) -> bool:
    """Whether ``network`` is ``NULL`` or a ``null_network(...)``."""
    return network == NULL or network.startswith(NULL + ":")


def _null_network(image: str, role: str) -> str:
    """The Docker network mode for a container asked to run with ``NULL`` (``image``: the image its holder is
    started from, the container's own or the one ``null_network`` names): ``container:<id>`` of a
    holder, an idle container with ``network_mode="none"`` (loopback only) kept for this thread and ``role``
    (the ``lab.role`` label: graders and agents never share one), started on first use; ``"none"`` when no
    holder can be started (an image without ``/bin/sh``).

    Why it is as good as "none": a holder's namespace has no interface but its own loopback, like Docker's. It is
    lent to one container at a time (a thread starts its containers one after another, and ``run`` and
    ``stop_box`` remove theirs, killing every process in them, before they return), and lent again only when no
    socket is left in it (``_holder_clean``: a closed TCP connection outlives its process), so nothing of a
    container is left in it when the next one starts; the holder's /etc/hosts, /etc/resolv.conf and
    /etc/hostname, which Docker gives every container joining it, are read-only in every one of them (``_create``
    mounts them so in a writable container); without CAP_NET_ADMIN (Docker's default set
    lacks it, the graders drop every capability) and with /proc/sys read-only, no container can change the
    namespace's settings. Why: Docker makes and destroys a network namespace for every "none" container, ~80 ms
    of CPU of the ~170 ms a container's start and removal costs (measured on this machine kind: 184 vs 95 ms).
    The holders of a process are removed when it exits; those of a killed run by ``cleanup``. A holder runs the
    /bin/sh of ``image`` (``_start_holder``), and that shell lives on in the namespace the later containers join:
    ``NULL`` is for images lab trusts (graders'); an agent's container asks for ``null_network(<grader image>)``."""
    if image in _no_holder:
        return "none"
    key = (threading.get_ident(), role, image)  # (never a holder of another image: it may be one lab trusts less)
    holder = _holders.get(key)
    if holder is not None and not _holder_clean(holder):
        _drop_holder(holder)
        holder = None
    if holder is None:
        try:
            holder = _start_holder(image, role)
        except SandboxError:
            _no_holder.add(image)
            return "none"
        with _holders_lock:
            if not _holders:
                import atexit
                atexit.register(_stop_holders)
            _holders[key] = holder
    return f"container:{holder}"


# The host name of a null network's holder, which every container joining it takes (Docker gives a joining
# container its holder's), and which the holder's /etc/hosts names, as 127.0.0.1: a program that looks its own
# host name up (the JVM's JUnit report does) finds it there instead of asking the namespace's resolvers, whose
# addresses have no route in it: each such try adds to the namespace's IP counters ("OutNoRoutes"), after which
# the namespace cannot be lent again (``_holder_clean``: counters carry numbers from one container to the next).
HOLDER_HOSTNAME = "lab-null"


def _start_holder(image: str, role: str) -> str:
    """Start a holder (``_null_network``) of ``image`` for ``role``; its id. Its labels are lab's and its run's
    only: the image's own (an agent image's ``lab.agent``) are blanked, since it outlives the containers it
    serves and is nobody's. Raises SandboxError when the engine refuses."""
    if _stopping:
        raise SandboxError("lab is stopping: no container is started any more")
    c = client()
    try:
        blank = {k: "" for k in (c.api.inspect_image(image).get("Config") or {}).get("Labels") or {}}
        container = c.containers.create(
            image, None, entrypoint=["sh", "-c", BOX_IDLE], stdin_open=True, detach=True, network_mode="none",
            hostname=HOLDER_HOSTNAME, extra_hosts={HOLDER_HOSTNAME: "127.0.0.1"},
            labels={**blank, LABEL: "1", **run_labels(), f"{LABEL}.box": "1", "lab.role": "null-network",
                    "lab.for": role},
            read_only=True, cap_drop=["ALL"], security_opt=["no-new-privileges"], pids_limit=8,
            mem_limit=32 * 1024**2, memswap_limit=32 * 1024**2, nano_cpus=int(0.1e9),
            log_config=docker.types.LogConfig(type="none"))
    except docker.errors.APIError as exc:
        raise SandboxError(f"cannot create a network holder of {image!r}: {exc}") from None
    try:
        container.start()
    except docker.errors.APIError as exc:
        try:
            container.remove(force=True)
        except docker.errors.APIError:
            pass
        raise SandboxError(f"cannot start a network holder of {image!r}: {exc}") from None
    try:
        facts = client().api.inspect_container(container.id)
        pid = int(facts["State"]["Pid"])
        files = tuple((facts.get(key), target) for key, target in _NETWORK_FILES)
        known = all(isinstance(source, str) and source.startswith("/") for source, _ in files)
        _holder_facts[container.id] = _HolderFacts(pid, _counters(pid), files if known else None)
    except (docker.errors.APIError, KeyError, TypeError, ValueError):
        pass
    return container.id


@dataclass(frozen=True)
class _HolderFacts:
    """What lab read of a holder as it started: its PID 1 as this host sees it, its namespace's traffic counters
    then (``_counters``; None when they could not be read) and the files Docker gives the containers joining it
    (((the holder's file on the engine's host, where a container sees it), ...), after ``_NETWORK_FILES``; None
    when the engine did not say where they are)."""

    pid: int
    counters: str | None
    files: tuple[tuple[str, str], ...] | None


_holder_facts: dict[str, _HolderFacts] = {}  # holder id -> what lab read of it as it started


# The files Docker gives a container of its network namespace: (the engine's key for the holder's file, where a
# container sees it). A container joining a holder gets the holder's own files, writable unless it is read-only.
_NETWORK_FILES = (("HostsPath", "/etc/hosts"), ("ResolvConfPath", "/etc/resolv.conf"), ("HostnamePath", "/etc/hostname"))


# Where a namespace's sockets are listed (as a process in it sees them): any line past the header is a socket.
# TCP's tables are not read (the kernel walks its whole connection hash for them: ~4 ms each, measured here): the
# namespace's counts in sockstat say the same (``_holder_clean``).
_SOCKET_TABLES = ("udp", "udp6", "raw", "raw6", "icmp", "icmp6", "udplite", "udplite6", "unix",
                  "ip6_flowlabel")  # (an IPv6 flow label a socket leased lingers after it, and can be read)
_SOCKET_COUNTS = ("sockstat", "sockstat6")  # "TCP: inuse 0 orphan 0 tw 0 alloc 1 mem 0", ...: this namespace's
# A namespace's traffic counters (lo's bytes and packets, every protocol's statistics) are the namespace's, and
# any container in it reads them: a container that sent N packets would tell N to the next one (another trial's),
# a message. A holder is lent again only while they are as it was made (``_holder_clean``): one in which
# anything was sent is replaced.
_COUNTER_FILES = ("dev", "snmp", "snmp6", "netstat")


def _net_text(pid: int, name: str) -> str:
    """The text of /proc/<pid>/net/<name> (the network namespace of host process ``pid``), "" when this kernel
    has no such file (no IPv6: no socket or counter of it either). Raises OSError when it cannot be read."""
    try:
        with open(f"/proc/{pid}/net/{name}", encoding="ascii", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def _counters(pid: int) -> str | None:
    """The traffic counters of the network namespace of host process ``pid`` (``_COUNTER_FILES`` of its
    /proc/<pid>/net, one text); None when they cannot be read."""
    try:
        return "\0".join(_net_text(pid, name) for name in _COUNTER_FILES)
    except OSError:
        return None


def _holder_clean(holder: str) -> bool:
    """Whether the namespace of ``holder`` has no socket left in it (read from /proc/<its PID 1>/net on this
    host) and nothing was ever sent in it (its traffic counters are as they were when it started, ``_counters``),
    so that it can be lent again. False when lab cannot tell (no PID known, /proc not readable: the
    engine is elsewhere): the holder is then replaced. Why: a TCP connection closed by the side that closes
    first stays in TIME_WAIT (~60 s), FIN_WAIT or LAST_ACK after its process and container are gone; it
    belongs to the namespace and keeps the next container from binding its port (EADDRINUSE)."""
    facts = _holder_facts.get(holder)
    if facts is None or not facts.pid or not os.path.isdir(f"/proc/{facts.pid}/net"):
        return False
    if facts.counters is None or _counters(facts.pid) != facts.counters:  # something was sent: they would tell
        return False
    try:
        # every protocol's sockets in use (TCP's in any state but TIME_WAIT), and TCP's in TIME_WAIT ("tw");
        # "orphan", "alloc", "mem" count the whole host's
        words = " ".join(_net_text(facts.pid, name) for name in _SOCKET_COUNTS).split()
        if any(word in ("inuse", "tw") and value != "0" for word, value in zip(words, words[1:])):
            return False
        return not any(len(_net_text(facts.pid, table).splitlines()) > 1 for table in _SOCKET_TABLES)
    except OSError:
        return False


def _holder_gone(network: str) -> bool:
    """Whether ``network`` is a holder's (``container:<id>`` in ``_holders``) that no longer runs; if so, it is
    forgotten (the next ``_null_network`` starts another). A holder may be removed under a run by another
    process's ``cleanup(only_dead_owners=False)``."""
    if not network.startswith("container:"):
        return False
    holder = network.split(":", 1)[1]
    with _holders_lock:
        keys = [k for k, v in _holders.items() if v == holder]
    if not keys:
        return False
    try:
        running = bool(client().api.inspect_container(holder).get("State", {}).get("Running"))
    except docker.errors.NotFound:
        running = False
    if running:
        return False
    _drop_holder(holder)
    return True


def _drop_holder(holder: str) -> None:
    """Forget the holder ``holder`` (the next ``_null_network`` of its thread and role starts another) and remove
    its container, if it is still there."""
    with _holders_lock:
        for k in [k for k, v in _holders.items() if v == holder]:
            del _holders[k]
    _holder_facts.pop(holder, None)
    try:
        client().api.remove_container(holder, force=True)
    except docker.errors.APIError:
        pass


def _stop_holders() -> None:
    """Remove this process's network holders (at its exit)."""
    with _holders_lock:
        holders = list(_holders.values())
        _holders.clear()
    for holder in holders:
        try:
            client().api.remove_container(holder, force=True)
        except Exception:  # noqa: BLE001  (at exit: the engine may be gone; cleanup() removes it later)
            pass


def _network(network: str, image: str, labels: dict[str, str] | None, read_only: bool) -> tuple[str, list]:
    """The Docker network mode for ``network`` (``NULL`` and ``null_network(...)`` resolved by
    ``_null_network``) and the mounts it needs (``docker.types.Mount``). A container joining a holder gets the
    holder's /etc/hosts, /etc/resolv.conf and /etc/hostname, bind-mounted writable unless the container is
    read-only, and what a writable one wrote there would be the next container's: a writable one gets them
    mounted read-only instead (a mount of the container's own at one of them makes Docker use that one), or
    Docker's "none" when lab does not know where they are."""
    if not _is_null(network):
        return network, []
    holder_image = network.split(":", 1)[1] if network != NULL else image
    mode = _null_network(holder_image, (labels or {}).get("lab.role", ""))
    if read_only or mode == "none":
        return mode, []
    facts = _holder_facts.get(mode.split(":", 1)[1])
    files = facts.files if facts is not None else None
    if files is None:
        return "none", []
    return mode, [docker.types.Mount(target=target, source=source, type="bind", read_only=True)
                  for source, target in files]


def _create(image: str, command: list[str] | None, *, mounts: Iterable[Mount] = (), env: dict[str, str] | None = None,
            network: str = "none", limits: Limits = Limits(), workdir: str | None = None,
            labels: dict[str, str] | None = None, user: str | None = None, read_only: bool = False,
            tmpfs: dict[str, str] | None = None, capabilities: tuple[str, ...] | None = None,
            entrypoint: list[str] | None = None, stdin_open: bool = False, logs: bool = True):
    """Create (not start) a container of ``image`` with lab's labels, limits (CPUs, memory without swap,
    processes), log configuration (``logs``: the engine keeps the output, at most 10 MB, else none) and
    hardening options: the one place ``run`` and ``start_box`` share.
    Raises SandboxError when the image is missing or the engine refuses."""
    if _stopping:
        raise SandboxError("lab is stopping: no container is started any more")
    c = client()
    LogConfig, DockerMount = docker.types.LogConfig, docker.types.Mount
    all_labels = {LABEL: "1", **run_labels(), **(labels or {})}
    mode, network_mounts = _network(network, image, labels, read_only)
    docker_mounts = [DockerMount(target=m.target, source=m.source, type=m.kind, read_only=m.read_only)
                     for m in mounts] + network_mounts
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
    except docker.errors.ImageNotFound:
        raise SandboxError(f"image {image!r} is missing; build it with `doit image`") from None
    except docker.errors.APIError as exc:
        if _is_null(network) and _holder_gone(mode):
            return _create(image, command, mounts=mounts, env=env, network=network, limits=limits, workdir=workdir,
                           labels=labels, user=user, read_only=read_only, tmpfs=tmpfs, capabilities=capabilities,
                           entrypoint=entrypoint, stdin_open=stdin_open, logs=logs)
        raise SandboxError(f"cannot create a container of {image!r}: {exc}") from None


def _start(container, network: str, recreate) -> object:
    """Start ``container``; when that fails because its ``NULL`` network's holder is gone, remove it and start
    ``recreate()`` (a new container on a new holder) instead. Returns the started container; raises the
    engine's APIError otherwise."""
    try:
        container.start()
        return container
    except docker.errors.APIError:
        mode = container.attrs.get("HostConfig", {}).get("NetworkMode", "")
        if not _is_null(network) or not _holder_gone(mode):
            raise
    try:
        container.remove(force=True)
    except docker.errors.APIError:
        pass
    container = recreate()
    try:
        container.start()
    except docker.errors.APIError:
        try:
            container.remove(force=True)
        except docker.errors.APIError:
            pass
        raise
    return container


def run(image: str, command: list[str], *, mounts: Iterable[Mount] = (), env: dict[str, str] | None = None,
        network: str = "none", limits: Limits = Limits(), workdir: str | None = None,
        labels: dict[str, str] | None = None, user: str | None = None, log_path: Path | None = None,
        read_only: bool = False, tmpfs: dict[str, str] | None = None,
        capabilities: tuple[str, ...] | None = None) -> RunResult:
    """Run ``command`` in a fresh container of ``image`` and remove the container afterwards.

    ``network`` is a Docker network mode ("none", "host", or ``ServiceHandle.network``, i.e. ``"container:<id>"``:
    join the network namespace of a service started with ``start_service``), ``NULL`` (no network, like "none",
    in the loopback-only namespace this thread keeps for the ``lab.role`` label: ``_null_network``; for images lab
    trusts) or ``null_network(<trusted image>)`` (the same, for images it does not). ``limits`` caps CPUs, memory (no
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

    def create():
        return _create(image, command, mounts=mounts, env=env, network=network, limits=limits, workdir=workdir,
                       labels=labels, user=user, read_only=read_only, tmpfs=tmpfs, capabilities=capabilities)

    container = create()
    start = time.monotonic()
    timed_out = False
    exit_code: int | None = None
    try:
        try:
            container = _start(container, network, create)
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


# ---- a box: one long-lived container in which commands run one after another ----

# PID 1 of a box (``sh -c BOX_IDLE sh <the box's marker>``): lab sends each command on the container's stdin, one
# line of shell words (``_line``). PID 1 idles in `wait` (which also reaps the orphans a command leaves behind)
# for a subshell of its own that blocks reading that line, then runs the command (`exec`: a program, never a
# builtin of the shell) with stdin from /dev/null; when it ends, every other process in the box (what the command
# left running in the background) is killed (`kill -9 -1` reaches every process of the box's own pid namespace
# but its init and the caller: every box has one, ``_create`` never shares it; again while any is left, at most
# 100 passes), and the subshell writes the end line ``\n<marker> <n> <exit code>\n`` on stdout and on stderr (the
# two streams reach lab apart: each has all of the command's output once its end line came). If the subshell
# dies before (the command killed it), PID 1 kills every other process itself (a command that killed its
# subshell leaves nothing running either) and writes the end line with the subshell's status. ``n`` counts the
# box's commands, so an end line left over from an earlier command is never taken for this one's. A command
# that writes an end line of its own only ends its run early: lab then finds its processes running and kills
# the box (``box_exec``). No program from the box's filesystem runs but the command itself: the agent may have
# replaced any of them. PID 1 sets no signal handler, so nothing inside the box can stop it (the kernel drops
# unhandled signals sent to a namespace's init from inside it); lab removes the box with SIGKILL from outside.
# Stdin stays open for the container's life (``stdin_open``, never "once"); at its end (it cannot come while
# the box runs) PID 1 exits, and the box is found stopped.
# (`end`, a function of PID 1's own shell: the kill, then the end line with its argument as the exit code)
BOX_IDLE = ('exec 3<&0; id=$1; k=0; nl=$(printf "\\n_"); nl=${nl%_}; '
            'end() { n=0; while kill -9 -1 2>/dev/null && [ $n -lt 100 ]; do n=$((n+1)); done; '
            'printf "\\n%s %s %s\\n" "$id" "$k" "$1"; printf "\\n%s %s %s\\n" "$id" "$k" "$1" >&2; }; '
            'while :; do k=$((k+1)); (read -r line <&3 || exit 99; eval "set -- $line"; '
            '(exec "$@") </dev/null 3<&-; end $?) & wait $!; s=$?; '
            '[ $s -eq 99 ] && exit 99; [ $s -ne 0 ] && end $s; done')


def _word(arg: str) -> str:
    """``arg`` as one word of the line ``BOX_IDLE`` reads (with ``read -r``, then ``eval``): single-quoted, a
    newline as ``$nl`` (the line must stay one line) and any other control character through ``printf`` (none
    reaches the engine's attach stream, where a detach key sequence would end it)."""
    out = []
    for ch in arg:
        if ch == "'":
            out.append("'\\''")
        elif ch == "\n":
            out.append("'\"$nl\"'")
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"'\"$(printf '\\{ord(ch):03o}')\"'")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def _line(command: list[str]) -> bytes:
    """The line that makes a box's PID 1 (``BOX_IDLE``) run ``command`` (exec form)."""
    if not command or any("\0" in a for a in command):
        raise SandboxError(f"cannot run {command!r} in a box: a command needs a program and no NUL byte")
    return (" ".join(_word(a) for a in command) + "\n").encode("utf-8", "surrogateescape")


@dataclass
class Box:
    """A long-lived container started by ``start_box``: its id, image, image id, the user and working
    directory each ``box_exec`` runs with, and ``dead`` (set when lab killed it at a timeout or found it
    stopped: the caller starts another box). ``ooms``: the engine's OOM events seen so far (internal)."""

    id: str
    image: str
    image_id: str = ""
    workdir: str | None = None
    user: str | None = None
    dead: bool = False
    why_dead: str = ""  # why lab killed it, when not at a timeout or an OOM kill (e.g. a process outlived its command)
    since: int = 0  # epoch seconds, a little before the box was created: where its OOM events start
    ooms: int = 0
    paused: bool = False  # frozen between commands (``box_exec``): nothing in it runs while lab reads its folders
    procs: str | None = None  # its cgroup's process list on this host, when lab can read it (``_procs_file``)
    init: int = 0  # its PID 1 as this host sees it (with ``procs``)
    marker: str = ""  # what its end lines start with (``BOX_IDLE``)
    sent: int = 0  # commands sent to it so far
    stream: object = None  # the engine's attach socket: its stdin, and its stdout and stderr as frames
    unread: bytearray = field(default_factory=bytearray)  # bytes read from ``stream``, not yet a whole frame
    removed: bool = False  # ``stop_box`` removed it (asking the engine again would only be told it is gone)


def start_box(image: str, *, mounts: Iterable[Mount] = (), env: dict[str, str] | None = None,
              network: str = "none", limits: Limits = Limits(), workdir: str | None = None,
              labels: dict[str, str] | None = None, user: str | None = None, read_only: bool = False,
              tmpfs: dict[str, str] | None = None, capabilities: tuple[str, ...] | None = None) -> Box:
    """Start a container of ``image`` that idles (its PID 1 is ``sh -c BOX_IDLE``, the image's entrypoint and
    command are not used; the engine keeps no log of it: lab reads its output as it comes) until ``stop_box``;
    run commands in it with ``box_exec``. Mounts, environment,
    network, limits (CPUs, memory without swap, processes: the idle PID 1 and its subshell take two of them;
    ``limits.timeout`` is not used here, each ``box_exec`` has its own), labels, user and hardening are those of
    ``run``; each exec inherits the environment and gets ``workdir`` and ``user``.

    Raises SandboxError when the image is missing or the container cannot be created, StartError when it
    cannot start (an image without ``/bin/sh`` cannot hold a box: run its commands with ``run`` instead)."""
    import secrets

    since = int(time.time()) - 1
    marker = f"lab-end-{secrets.token_hex(8)}"

    def create():
        return _create(image, None, entrypoint=["sh", "-c", BOX_IDLE, "sh", marker], stdin_open=True, mounts=mounts,
                       env=env, network=network, limits=limits, workdir=workdir,
                       labels={f"{LABEL}.box": "1", **(labels or {})}, user=user, read_only=read_only, tmpfs=tmpfs,
                       capabilities=capabilities, logs=False)

    container = create()
    box = Box(id=container.id, image=image, image_id=container.attrs.get("Image", ""), workdir=workdir, user=user,
              since=since, marker=marker)
    try:
        container = _start(container, network, create)
        box.id = container.id
        # (nothing is written before the first command: attaching after the start loses nothing)
        box.stream = client().api.attach_socket(box.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1,
                                                                "detachKeys": "ctrl-@"})
    except docker.errors.APIError as exc:
        stop_box(box)
        hint = " (the image has no /bin/sh to keep a box alive)" if "sh" in str(exc) and "not found" in str(exc) else ""
        raise StartError(f"cannot start a container of {image!r}{hint}: {exc}") from None
    box.procs, box.init = _procs_file(box.id)
    return box


def _procs_file(container_id: str) -> tuple[str | None, int]:
    """The ``cgroup.procs`` file listing the processes of the running container ``container_id`` as this process
    sees them, and the pid of its PID 1 here; (None, 0) when lab cannot read it reliably (a remote engine, lab in another pid namespace, an unknown
    cgroup layout): then ``_left_over`` asks the engine (``docker top``, ~10 ms and a ``ps`` on the engine's host,
    against ~0.3 ms here). Found from the container's PID 1 (the engine's ``State.Pid``): its
    ``/proc/<pid>/cgroup`` must name the container's full id, and the file must list that pid."""
    try:
        pid = int(client().api.inspect_container(container_id)["State"]["Pid"])
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except (docker.errors.APIError, KeyError, ValueError, OSError):
        return None, 0
    for line in lines:  # "<n>:<controllers>:<path>"; cgroup v2: "0::<path>"
        _, controllers, path = line.split(":", 2)
        if container_id not in path or (controllers and "pids" not in controllers.split(",")):
            continue
        root = Path("/sys/fs/cgroup") if not controllers else Path("/sys/fs/cgroup/pids")
        procs = root / path.lstrip("/") / "cgroup.procs"
        try:
            if str(pid) in procs.read_text().split():
                return str(procs), pid
        except OSError:
            pass
    return None, 0


def _top_here(procs: str, init: int) -> dict | None:
    """``docker top``'s answer (``{"Titles": ["PID", "PPID", "CMD", "STAT"], "Processes": [[pid, ppid, command
    line, state letters], ...]}``, a zombie's command line ending in ``<defunct>`` as ``ps`` shows it and its state
    ``Z``, which tells it apart from a live process whose last argument is ``<defunct>``; ``Zl`` as ps shows a
    process whose main thread ended while other threads run on) from the cgroup's process list
    ``procs`` and ``/proc``, the container's PID 1 (``init``, this host's pid) first and the others by pid (the
    list's own order is not defined; ``left_over_in`` takes the first process whose parent is outside for PID 1,
    and an exec'd process's parent is outside too); None when the list cannot be read (the container is gone). A
    process that ends while it is read is left out, as ``ps`` would."""
    try:
        pids = sorted(Path(procs).read_text().split(), key=lambda p: (p != str(init), int(p)))
    except (OSError, ValueError):
        return None
    rows = []
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        state, ppid = stat[stat.rindex(")") + 2:].split()[:2]
        if state == "Z" and _threads(pid) > 1:  # a leader that ended while its other threads run: alive (ps: Zl)
            state = "Zl"
        cmd = cmdline.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace") or f"[{name}]"
        rows.append([pid, ppid, f"[{name}] <defunct>" if state == "Z" else cmd, state])
    return {"Titles": ["PID", "PPID", "CMD", "STAT"], "Processes": rows}


def _threads(pid: str) -> int:
    """How many threads /proc lists for process ``pid`` (0 when it is gone)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


class _Capped:
    """A stream's bytes kept as ``_cap`` keeps them (the first and the last ``cap // 2`` bytes), counted in
    full, in memory bounded by about ``2 * cap``."""

    def __init__(self, cap: int = OUTPUT_CAP):
        self.cap, self.half = cap, cap // 2
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        if len(self.head) < self.cap:
            self.head += data[:self.cap - len(self.head)]
        self.tail += data
        if len(self.tail) > self.cap:
            del self.tail[:-self.half]

    def text(self) -> str:
        if self.total <= self.cap:
            return bytes(self.head).decode("utf-8", errors="replace")
        return _cap(bytes(self.head[:self.half]) + bytes(self.tail[-self.half:]), self.cap,
                    elided=self.total - self.cap)


def box_exec(box: Box, command: list[str], *, timeout: float, log_path: Path | None = None,
             last: bool = False) -> RunResult:
    """Run ``command`` (exec form) in ``box`` with the box's user and working directory and the container's
    environment, for at most ``timeout`` seconds; returns a ``RunResult`` like ``run``'s.

    The output (stdout and stderr) is read as it comes and kept as ``run`` keeps it (``OUTPUT_CAP`` bytes, the
    middle elided; also written to ``log_path``); ``output_bytes`` counts every byte. When the command ends,
    whatever it left running in the box is killed (``BOX_IDLE``). At the timeout the whole container is killed
    and removed (every process in it), the result has ``timed_out`` set and ``exit_code`` None, and the box is
    ``dead``. ``oom_killed``: the engine reported an OOM kill in the box while this command ran, counted from
    Docker's ``oom`` events (a command in a box has no OOM flag of its own, and on Docker 20.10 with cgroup v1, measured
    here, the container's ``State.OOMKilled`` stays false while PID 1 lives and turns true, for good, only when
    the container is killed later: it cannot tell which command ran out of memory). A box found stopped after
    the command (its PID 1 killed) is marked ``dead`` too, and so is a box in which a process outlived the
    command (one ``BOX_IDLE``'s kill cannot reach: another user's, or one that ended its run early by writing
    an end line of its own), which lab kills (``why_dead`` says so):
    nothing a command started runs on after it, whatever its user. Between commands the box is frozen (``docker
    pause``; the next ``box_exec`` resumes it): a process that escaped both (PID 1 under ``ptrace``) cannot touch the mounted folders while
    the caller reads them. ``last``: the caller runs nothing more in this box; instead of being checked and
    frozen it is killed and removed at once (dead, ``why_dead`` says so), which is cheaper (~15 ms) and stronger.

    Raises SandboxError when the box is dead or gone, or the command cannot be sent to it."""
    import re

    if box.dead:
        raise SandboxError(f"the box {box.id[:12]} of {box.image!r} is dead (killed or stopped); start another")
    api = client().api
    if box.paused:
        try:
            api.unpause(box.id)
        except docker.errors.APIError as exc:
            box.dead = not box_alive(box)
            raise SandboxError(f"cannot resume the box {box.id[:12]} of {box.image!r}: {exc}") from None
        box.paused = False
    line = _line(command)
    box.sent += 1
    # (an exit code has at most 3 digits: a longer number, which int() may refuse, is a forged line, and output)
    end = re.compile(rb"\n" + re.escape(f"{box.marker} {box.sent} ".encode()) + rb"(\d{1,3})\n")
    hold = len(box.marker) + 32  # bytes of a stream held back while they may be the start of its end line
    out, codes, held = _Capped(), {}, {1: b"", 2: b""}
    start = time.monotonic()
    sock = _raw_socket(box.stream)
    try:
        sock.sendall(line)
    except (OSError, AttributeError) as exc:
        box.dead = not box_alive(box)
        raise SandboxError(f"cannot send a command to the box {box.id[:12]} of {box.image!r}: {exc}") from None
    timed_out = False
    try:
        for stream, data in _frames(box, sock, start + timeout):
            if stream not in held or stream in codes:
                continue
            data = held[stream] + data
            found = end.search(data)
            if found:
                out.add(data[:found.start()])
                held[stream] = b""
                codes[stream] = int(found.group(1))
                if len(codes) == 2:
                    break
            else:
                out.add(data[:-hold])
                held[stream] = data[-hold:]
    except TimeoutError:
        timed_out = True
    for stream in (1, 2):
        if stream not in codes:
            out.add(held[stream])
    exit_code: int | None = codes.get(1, codes.get(2))
    if timed_out:
        _kill(box)
        exit_code = None
    elif len(codes) < 2:  # the stream ended without its end lines: the box stopped under the command
        try:
            state = api.inspect_container(box.id)["State"]
            running, exit_code = bool(state.get("Running")), int(state.get("ExitCode") or 137)
        except (docker.errors.APIError, KeyError, TypeError, ValueError):
            running, exit_code = False, 137
        _kill(box)
        if running:  # the box runs on: lab lost its stream to it (only the engine ends one), not the agent's doing
            stop_box(box)
            raise SandboxError(f"lab lost its stream to the box {box.id[:12]} of {box.image!r} while its command ran "
                               "(the engine closed it); the box was removed: run again")
    seconds = time.monotonic() - start
    oom = _oom_events(box)
    if exit_code is None or exit_code >= 128 or oom:
        box.dead = box.dead or not box_alive(box)
    if last and not box.dead:
        box.why_dead = "lab removes it after its last command"
        box.dead = True  # (``stop_box`` below kills it as it removes it)
    if not box.dead:
        left = _left_over(box)
        for wait in (0.02, 0.05, 0.1, 0.2):  # a process killed a moment ago may still be on its way out: look again
            if not left:
                break
            time.sleep(wait)
            left = _left_over(box)
        if left:  # BOX_IDLE's kill could not reach it (another user's process): the whole box goes
            box.why_dead = f"a process outlived the command ({left[0][:80]})"
            _kill(box)
    if not box.dead:
        _pause(box)
    result = RunResult(exit_code=None if timed_out else exit_code, output=out.text(), seconds=seconds,
                       timed_out=timed_out, oom_killed=oom, output_bytes=out.total, image_id=box.image_id)
    if box.dead:
        stop_box(box)
    if log_path is not None:
        from rules.files import write_atomic
        write_atomic(log_path, result.output)
    return result


def _raw_socket(stream):
    """The socket under the engine's attach stream (``attach_socket`` gives a ``socket.SocketIO`` on a local
    engine, the socket itself over TLS)."""
    return getattr(stream, "_sock", stream)


def _frames(box: Box, sock, deadline: float):
    """The frames (stream number 1 or 2, bytes) the engine sends on ``box``'s attach stream (each an 8-byte
    header: stream, three zero bytes, big-endian length; then the data), read from ``sock`` in this thread until
    it ends (the box stopped) or the caller stops taking them; what was read past the last frame taken waits in
    ``box.unread`` for the next command. Raises TimeoutError at ``deadline`` (``time.monotonic()``)."""
    import select
    import struct

    buf = box.unread
    while True:
        while len(buf) >= 8:
            stream, size = struct.unpack(">BxxxL", bytes(buf[:8]))
            if len(buf) < 8 + size:
                break
            data = bytes(buf[8:8 + size])
            del buf[:8 + size]
            yield stream, data
        pending = getattr(sock, "pending", None)  # (a TLS socket may hold decrypted bytes select cannot see)
        if not (pending and pending()):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            poll = select.poll()
            poll.register(sock.fileno(), select.POLLIN | select.POLLPRI)
            if not poll.poll(min(left, 3600) * 1000):
                continue  # (the deadline is looked at again)
        try:
            data = sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            return  # the box was removed under the stream
        if not data:
            return
        buf += data


def _left_over(box: Box) -> list[str]:
    """The command lines of the processes running in ``box`` beside its idle PID 1 and that one's subshell
    (its cgroup's process list read here, ``_top_here``, or else ``docker top``; PIDs as the host sees them).
    Empty when the box holds nothing else, or is gone."""
    top = _top_here(box.procs, box.init) if box.procs else None
    if top is None:
        try:
            top = client().api.top(box.id, ps_args="-eo pid,ppid,stat,args")  # (the state: see left_over_in)
        except docker.errors.APIError:
            return []
    return left_over_in(top)


def left_over_in(top: dict) -> list[str]:
    """``_left_over`` on the engine's ``top`` answer (``{"Titles": [..., "PID", "PPID", ..., "CMD" or "COMMAND",
    ...], "Processes": [[...], ...]}``, with a "STAT" column when known): every process but the box's PID 1 (the
    one whose parent is outside the box), its idle subshell (a child of PID 1 with PID 1's command line: PID 1
    runs one at a time, so a second such child is a process made to look like it, and is listed) and zombies
    (dead, waiting for PID 1 to reap them: state ``Z`` but not ``Zl``, a process whose main thread ended while
    other threads run; without a "STAT" column, a command line ending in ``<defunct>``, which a live process can
    forge with its last argument, and which a live process whose main thread ended shows)."""
    titles = top.get("Titles") or []
    try:
        pid_at, ppid_at = titles.index("PID"), titles.index("PPID")
        cmd_at = titles.index("CMD" if "CMD" in titles else "COMMAND")
    except ValueError:
        return []
    stat_at = titles.index("STAT") if "STAT" in titles else None
    procs = [(row[pid_at], row[ppid_at], row[cmd_at],
              _zombie(row[stat_at]) if stat_at is not None else row[cmd_at].endswith("<defunct>"))
             for row in top.get("Processes") or []]
    pids = {pid for pid, _, _, _ in procs}
    init = next((pid for pid, ppid, _, _ in procs if ppid not in pids), None)  # the one whose parent is outside
    idle = next((cmd for pid, _, cmd, _ in procs if pid == init), None)  # its subshell: a fork, the same command line
    live = [(pid, ppid, cmd) for pid, ppid, cmd, dead in procs if pid != init and not dead]
    idles = [cmd for _, ppid, cmd in live if ppid == init and cmd == idle]
    return [cmd for _, ppid, cmd in live if not (ppid == init and cmd == idle)] + idles[1:]


def _zombie(stat: str) -> bool:
    """Whether ps's state letters ``stat`` are a dead process's: ``Z``, but not ``Zl``, a thread group whose
    first thread ended while others run on."""
    return stat.startswith("Z") and "l" not in stat


def _pause(box: Box) -> None:
    """Freeze every process in ``box`` (the cgroup freezer) until the next ``box_exec``: whatever escaped the
    command's kill and ``_left_over`` (PID 1 itself under ``ptrace``) cannot write to the mounted folders while lab archives, digests and grades them. A box that
    cannot be paused is killed."""
    try:
        client().api.pause(box.id)
        box.paused = True
    except docker.errors.APIError as exc:
        box.why_dead = f"it could not be paused after the command ({' '.join(str(exc).split())[:120]})"
        _kill(box)


def _oom_events(box: Box) -> bool:
    """Whether the engine reported an OOM kill in ``box`` since the last call (counts its ``oom`` events from
    the box's start until now; assumes the engine's clock is this machine's, as for the local engine)."""
    try:
        events = client().api.events(since=box.since, until=f"{time.time():.9f}",
                                     filters={"container": box.id, "event": "oom"}, decode=True)
        try:
            count = sum(1 for _ in events)
        finally:
            events.close()
    except docker.errors.APIError:
        return False
    seen, box.ooms = box.ooms, max(box.ooms, count)
    return count > seen


def _kill(box: Box) -> None:
    box.dead = True
    try:
        client().api.kill(box.id)
    except docker.errors.APIError:
        pass  # already stopped or gone


def box_alive(box: Box) -> bool:
    """Whether the box's container still runs (False once it is dead, stopped or removed)."""
    if box.dead:
        return False
    try:
        return bool(client().api.inspect_container(box.id).get("State", {}).get("Running"))
    except docker.errors.NotFound:
        return False


def stop_box(box: Box) -> None:
    """Remove the box's container (killing every process in it) and mark it dead; a box already removed is
    fine (idempotent)."""
    box.dead = True
    if box.removed:
        return
    stream, box.stream = box.stream, None
    if stream is not None:
        try:
            stream.close()
        except OSError:
            pass
    try:
        client().api.remove_container(box.id, force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as exc:
        if "already in progress" not in str(exc):
            raise SandboxError(f"cannot remove the box {box.id[:12]} of {box.image!r}: {exc}") from None
    box.removed = True


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


def boxes_left() -> bool:
    """Whether any agent box (a container ``start_box`` made) exists on the engine, asked through the docker
    CLI (no SDK import: a quick check for commands that start no container). False when the CLI is missing or
    fails: the next trial's ``cleanup`` still removes what a killed run left."""
    cli = shutil.which("docker")
    if not cli:
        return False
    proc = subprocess.run([cli, "ps", "-aq", "--filter", f"label={LABEL}.box=1"], capture_output=True, text=True)
    return proc.returncode == 0 and bool(proc.stdout.strip())


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


_stopping = False  # set by ``remove_own``: this process starts no container any more


def remove_own() -> int:
    """Remove every container this process started (its ``lab.run`` label: boxes, gradings, services, network
    holders), running or not; how many. For a run that is being stopped (``rules.cli``: SIGTERM, Ctrl-C): an
    agent's container would otherwise run on, and spend, until the next run's ``cleanup``. Does nothing when this
    process never talked to the engine; never raises."""
    global _stopping
    _stopping = True  # (a worker thread whose container goes may try to start another: it is refused)
    if docker is None:
        return 0
    removed = 0
    try:
        for cont in client().api.containers(all=True, filters={"label": f"{LABEL}.run={run_labels()[LABEL + '.run']}"}):
            try:
                client().api.remove_container(cont["Id"], force=True)
                removed += 1
            except docker.errors.APIError:
                pass
    except Exception:  # noqa: BLE001  (stopping: the engine may be gone; the next run's cleanup removes them)
        pass
    return removed


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
