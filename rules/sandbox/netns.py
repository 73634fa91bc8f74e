"""The null network: a loopback-only network namespace per worker thread and role, held by an idle container
(a holder) and lent to one container after another (``NULL``, ``null_network``; the why is ``_null_network``'s).
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass

from rules.sandbox import engine
from rules.sandbox.engine import LABEL, SandboxError, client
from rules.sandbox.owners import run_labels, stopping
from rules.sandbox.protocol import BOX_IDLE

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


def is_null(network: str) -> bool:
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
    /etc/hostname, which Docker gives every container joining it, are read-only in every one of them
    (``containers.create_container`` mounts them so in a writable container); without CAP_NET_ADMIN (Docker's default
    set lacks it, the graders drop every capability) and with /proc/sys read-only, no container can change the
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
    if stopping():
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
            log_config=engine.docker.types.LogConfig(type="none"))
    except engine.docker.errors.APIError as exc:
        raise SandboxError(f"cannot create a network holder of {image!r}: {exc}") from None
    try:
        container.start()
    except engine.docker.errors.APIError as exc:
        try:
            container.remove(force=True)
        except engine.docker.errors.APIError:
            pass
        raise SandboxError(f"cannot start a network holder of {image!r}: {exc}") from None
    try:
        facts = client().api.inspect_container(container.id)
        pid = int(facts["State"]["Pid"])
        files = tuple((facts.get(key), target) for key, target in _NETWORK_FILES)
        known = all(isinstance(source, str) and source.startswith("/") for source, _ in files)
        _holder_facts[container.id] = _HolderFacts(pid, _counters(pid), files if known else None)
    except (engine.docker.errors.APIError, KeyError, TypeError, ValueError):
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


def holder_gone(network: str) -> bool:
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
    except engine.docker.errors.NotFound:
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
    except engine.docker.errors.APIError:
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


def network_mode(network: str, image: str, labels: dict[str, str] | None, read_only: bool) -> tuple[str, list]:
    """The Docker network mode for ``network`` (``NULL`` and ``null_network(...)`` resolved by
    ``_null_network``) and the mounts it needs (``docker.types.Mount``). A container joining a holder gets the
    holder's /etc/hosts, /etc/resolv.conf and /etc/hostname, bind-mounted writable unless the container is
    read-only, and what a writable one wrote there would be the next container's: a writable one gets them
    mounted read-only instead (a mount of the container's own at one of them makes Docker use that one), or
    Docker's "none" when lab does not know where they are."""
    if not is_null(network):
        return network, []
    holder_image = network.split(":", 1)[1] if network != NULL else image
    mode = _null_network(holder_image, (labels or {}).get("lab.role", ""))
    if read_only or mode == "none":
        return mode, []
    facts = _holder_facts.get(mode.split(":", 1)[1])
    files = facts.files if facts is not None else None
    if files is None:
        return "none", []
    return mode, [engine.docker.types.Mount(target=target, source=source, type="bind", read_only=True)
                  for source, target in files]
