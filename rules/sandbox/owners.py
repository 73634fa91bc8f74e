"""Which run owns a container, and removing what runs left: every container lab starts carries its run's labels
(``run_labels``); ``cleanup`` removes those of runs provably gone (``owner_alive``), ``remove_own`` this process's
own as it stops.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from rules.sandbox import engine
from rules.sandbox.engine import LABEL, client


def cleanup(only_dead_owners: bool = True) -> int:
    """Remove containers lab started whose run is provably gone (a killed run leaves some behind); with
    ``only_dead_owners=False`` remove every lab container. Returns how many were removed.

    A container's run is provably gone only when it was started on this host in this boot and pid namespace
    and that pid no longer runs or runs a process that started at another time (``owner_alive``); a container of
    another boot of this host is gone too. Containers of another host or pid namespace (a containerised CI
    sharing the engine), or without run labels (lab before run ids), are left alone."""
    removed = 0
    # the low-level list (one call, labels included): the high-level one inspects each container in turn and
    # fails when another run removes one of them in between
    for cont in client().api.containers(all=True, filters={"label": LABEL}):
        if only_dead_owners and owner_alive(cont.get("Labels") or {}):
            continue
        try:
            client().api.remove_container(cont["Id"], force=True)
            removed += 1
        except engine.docker.errors.APIError:
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


def owner_alive(labels: dict[str, str], here: dict[str, str] | None = None) -> bool:
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


def stopping() -> bool:
    """Whether ``remove_own`` was called: this process starts no container any more (``create_container`` and
    the null network's holders refuse)."""
    return _stopping


def remove_own() -> int:
    """Remove every container this process started (its ``lab.run`` label: boxes, gradings, services, network
    holders), running or not; how many. For a run that is being stopped (``rules.cli``: SIGTERM, Ctrl-C): an
    agent's container would otherwise run on, and spend, until the next run's ``cleanup``. Does nothing when this
    process never talked to the engine; never raises."""
    global _stopping
    _stopping = True  # (a worker thread whose container goes may try to start another: it is refused)
    if engine.docker is None:
        return 0
    removed = 0
    try:
        for cont in client().api.containers(all=True, filters={"label": f"{LABEL}.run={run_labels()[LABEL + '.run']}"}):
            try:
                client().api.remove_container(cont["Id"], force=True)
                removed += 1
            except engine.docker.errors.APIError:
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
