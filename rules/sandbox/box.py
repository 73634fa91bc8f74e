"""A box: one long-lived container in which commands run one after another (``start_box``, ``box_exec``,
``stop_box``), sent to its PID 1 (``protocol``) and read back from the engine's attach stream; what a command
leaves running is found (``left_over_in``) and the box killed, and between commands the box is frozen.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from rules.config import Limits
from rules.sandbox import engine
from rules.sandbox.containers import create_container, start_container
from rules.sandbox.engine import (LABEL, OUTPUT_CAP, WATCH_EVERY, Mount, RunResult, SandboxError, StartError, capped,
                                  client)
from rules.sandbox.protocol import BOX_IDLE, command_line

# bytes of a stream's partial line held back (``_read_to_end``) until its newline comes, at most
LINE_HOLD = 64 * 1024


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
        return create_container(image, None, entrypoint=["sh", "-c", BOX_IDLE, "sh", marker], stdin_open=True,
                                mounts=mounts, env=env, network=network, limits=limits, workdir=workdir,
                                labels={f"{LABEL}.box": "1", **(labels or {})}, user=user, read_only=read_only,
                                tmpfs=tmpfs, capabilities=capabilities, logs=False)

    container = create()
    box = Box(id=container.id, image=image, image_id=container.attrs.get("Image", ""), workdir=workdir, user=user,
              since=since, marker=marker)
    try:
        container = start_container(container, network, create)
        box.id = container.id
        # (nothing is written before the first command: attaching after the start loses nothing)
        box.stream = client().api.attach_socket(box.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1,
                                                                "detachKeys": "ctrl-@"})
    except engine.docker.errors.APIError as exc:
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
    except (engine.docker.errors.APIError, KeyError, ValueError, OSError):
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
    """A stream's bytes kept as ``capped`` keeps them (the first and the last ``cap // 2`` bytes), counted in
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
        return capped(bytes(self.head[:self.half]) + bytes(self.tail[-self.half:]), self.cap,
                    elided=self.total - self.cap)


def box_exec(box: Box, command: list[str], *, timeout: float, log_path: Path | None = None,
             last: bool = False, watch: Callable[[], str] | None = None) -> RunResult:
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
    ``watch``: called about every ``WATCH_EVERY`` seconds while the command runs; a non-empty answer (the reason)
    ends the command as the timeout does (the whole box killed, ``exit_code`` None, the box ``dead``), with
    ``stopped`` set to that reason and ``timed_out`` false.

    Raises SandboxError when the box is dead or gone, or the command cannot be sent to it."""
    if box.dead:
        raise SandboxError(f"the box {box.id[:12]} of {box.image!r} is dead (killed or stopped); start another")
    api = client().api
    if box.paused:
        _resume(box, api)
    line = command_line(command)
    box.sent += 1
    start = time.monotonic()
    sock = _raw_socket(box.stream)
    try:
        sock.sendall(line)
    except (OSError, AttributeError) as exc:
        box.dead = not box_alive(box)
        raise SandboxError(f"cannot send a command to the box {box.id[:12]} of {box.image!r}: {exc}") from None
    out, codes, timed_out, stopped = _read_to_end(box, sock, start + timeout, watch)
    exit_code = _exit_code(box, api, codes, timed_out or bool(stopped))
    seconds = time.monotonic() - start
    oom = _oom_events(box)
    if exit_code is None or exit_code >= 128 or oom:
        box.dead = box.dead or not box_alive(box)
    if last and not box.dead:
        box.why_dead = "lab removes it after its last command"
        box.dead = True  # (``stop_box`` below kills it as it removes it)
    if not box.dead:
        _kill_left_over(box)
    if not box.dead:
        _pause(box)
    result = RunResult(exit_code=None if timed_out or stopped else exit_code, output=out.text(), seconds=seconds,
                       timed_out=timed_out, oom_killed=oom, output_bytes=out.total, image_id=box.image_id,
                       stopped=stopped)
    if box.dead:
        stop_box(box)
    if log_path is not None:
        from rules.files import write_atomic
        write_atomic(log_path, result.output)
    return result


def _resume(box: Box, api) -> None:
    """Unfreeze ``box`` (``_pause``) through the engine's ``api``. Raises SandboxError when the engine refuses
    (the box is then dead if it no longer runs)."""
    try:
        api.unpause(box.id)
    except engine.docker.errors.APIError as exc:
        box.dead = not box_alive(box)
        raise SandboxError(f"cannot resume the box {box.id[:12]} of {box.image!r}: {exc}") from None
    box.paused = False


def _read_to_end(box: Box, sock, deadline: float, watch: Callable[[], str] | None = None
                 ) -> tuple[_Capped, dict[int, int], bool, str]:
    """The output of ``box``'s last command sent (its ``box.sent``-th), read from ``sock`` until the end lines
    of both streams came (``BOX_IDLE``), the stream ended, ``deadline`` (``time.monotonic()``) passed or
    ``watch`` (see ``_frames``) gave a reason: (the output, {stream number: the exit code its end line gave},
    whether the deadline passed, the watch's reason or "")."""
    import re

    # (an exit code has at most 3 digits: a longer number, which int() may refuse, is a forged line, and output)
    line = re.escape(f"{box.marker} {box.sent} ".encode()) + rb"(\d{1,3})\n"
    end = re.compile(rb"\n" + line)
    end_at_start = re.compile(line)  # the end line's own newline already passed on with the line before it
    hold = len(box.marker) + 32  # bytes of a stream held back while they may be the start of its end line
    # Each stream's bytes are passed on up to its last newline, so that the two streams meet only between lines:
    # a stream's partial line waits for its newline (an agent's JSON line is never cut by a line of the other
    # stream, which lost the JSON event); a partial line past LINE_HOLD bytes is passed on as before, all but hold.
    out, codes, held, at_start = _Capped(), {}, {1: b"", 2: b""}, {1: True, 2: True}
    timed_out, stopped = False, ""
    try:
        for stream, data in _frames(box, sock, deadline, watch):
            if stream not in held or stream in codes:
                continue
            data = held[stream] + data
            found = end.search(data) or (end_at_start.match(data) if at_start[stream] else None)
            if found:
                out.add(data[:found.start()])
                held[stream] = b""
                codes[stream] = int(found.group(1))
                if len(codes) == 2:
                    break
                continue
            cut = data.rfind(b"\n") + 1
            if len(data) - cut > LINE_HOLD:
                cut = max(0, len(data) - hold)
            if cut:
                out.add(data[:cut])
                at_start[stream] = data[cut - 1:cut] == b"\n"
            held[stream] = data[cut:]
    except TimeoutError:
        timed_out = True
    except Watched as exc:
        stopped = str(exc)
    for stream in (1, 2):
        if stream not in codes:
            out.add(held[stream])
    return out, codes, timed_out, stopped


def _exit_code(box: Box, api, codes: dict[int, int], timed_out: bool) -> int | None:
    """The exit code of ``box``'s command, from its end lines' ``codes`` (``_read_to_end``): None at the timeout
    (the box is killed); the box's own when the stream ended without them (the box stopped under the command; it
    is killed too). Raises SandboxError, the box removed, when it runs on without its stream (the engine closed
    it, not the agent)."""
    exit_code: int | None = codes.get(1, codes.get(2))
    if timed_out:
        _kill(box)
        exit_code = None
    elif len(codes) < 2:  # the stream ended without its end lines: the box stopped under the command
        try:
            state = api.inspect_container(box.id)["State"]
            running, exit_code = bool(state.get("Running")), int(state.get("ExitCode") or 137)
        except (engine.docker.errors.APIError, KeyError, TypeError, ValueError):
            running, exit_code = False, 137
        _kill(box)
        if running:  # the box runs on: lab lost its stream to it (only the engine ends one), not the agent's doing
            stop_box(box)
            raise SandboxError(f"lab lost its stream to the box {box.id[:12]} of {box.image!r} while its command ran "
                               "(the engine closed it); the box was removed: run again")
    return exit_code


def _kill_left_over(box: Box) -> None:
    """Kill ``box`` when a process outlived its command (``_left_over``: one ``BOX_IDLE``'s kill could not
    reach, another user's); ``why_dead`` says which."""
    left = _left_over(box)
    for wait in (0.02, 0.05, 0.1, 0.2):  # a process killed a moment ago may still be on its way out: look again
        if not left:
            break
        time.sleep(wait)
        left = _left_over(box)
    if left:  # BOX_IDLE's kill could not reach it (another user's process): the whole box goes
        box.why_dead = f"a process outlived the command ({left[0][:80]})"
        _kill(box)


def _raw_socket(stream):
    """The socket under the engine's attach stream (``attach_socket`` gives a ``socket.SocketIO`` on a local
    engine, the socket itself over TLS)."""
    return getattr(stream, "_sock", stream)


class Watched(Exception):
    """A command's watch gave a reason to end it (the exception's text)."""


def _frames(box: Box, sock, deadline: float, watch: Callable[[], str] | None = None):
    """The frames (stream number 1 or 2, bytes) the engine sends on ``box``'s attach stream (each an 8-byte
    header: stream, three zero bytes, big-endian length; then the data), read from ``sock`` in this thread until
    it ends (the box stopped) or the caller stops taking them; what was read past the last frame taken waits in
    ``box.unread`` for the next command. Raises TimeoutError at ``deadline`` (``time.monotonic()``), and
    Watched when ``watch()``, called about every ``WATCH_EVERY`` seconds, gives a reason."""
    import select
    import struct

    buf = box.unread
    look = time.monotonic() + WATCH_EVERY
    while True:
        if watch is not None and time.monotonic() >= look:
            reason = watch()
            if reason:
                raise Watched(reason)
            look = time.monotonic() + WATCH_EVERY
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
            if watch is not None:
                left = min(left, max(0.0, look - time.monotonic()))
            poll = select.poll()
            poll.register(sock.fileno(), select.POLLIN | select.POLLPRI)
            if not poll.poll(min(left, 3600) * 1000):
                continue  # (the deadline and the watch are looked at again)
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
        except engine.docker.errors.APIError:
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
    except engine.docker.errors.APIError as exc:
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
    except engine.docker.errors.APIError:
        return False
    seen, box.ooms = box.ooms, max(box.ooms, count)
    return count > seen


def _kill(box: Box) -> None:
    box.dead = True
    try:
        client().api.kill(box.id)
    except engine.docker.errors.APIError:
        pass  # already stopped or gone


def box_alive(box: Box) -> bool:
    """Whether the box's container still runs (False once it is dead, stopped or removed)."""
    if box.dead:
        return False
    try:
        return bool(client().api.inspect_container(box.id).get("State", {}).get("Running"))
    except engine.docker.errors.NotFound:
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
    except engine.docker.errors.NotFound:
        pass
    except engine.docker.errors.APIError as exc:
        if "already in progress" not in str(exc):
            raise SandboxError(f"cannot remove the box {box.id[:12]} of {box.image!r}: {exc}") from None
    box.removed = True
