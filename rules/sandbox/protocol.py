"""How lab talks to a box's PID 1: the shell loop it runs (``BOX_IDLE``) and the line of shell words that makes it
run a command (``command_line``). A network holder (``netns``) runs the same loop, idle.
"""
from __future__ import annotations

from rules.sandbox.engine import SandboxError

# PID 1 of a box (``sh -c BOX_IDLE sh <the box's marker>``): lab sends each command on the container's stdin, one
# line of shell words (``command_line``). PID 1 idles in `wait` (which also reaps the orphans a command leaves behind)
# for a subshell of its own that blocks reading that line, then runs the command (`exec`: a program, never a
# builtin of the shell) with stdin from /dev/null; when it ends, every other process in the box (what the command
# left running in the background) is killed (`kill -9 -1` reaches every process of the box's own pid namespace
# but its init and the caller: every box has one, ``create_container`` never shares it; again while any is left, at most
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


def command_line(command: list[str]) -> bytes:
    """The line that makes a box's PID 1 (``BOX_IDLE``) run ``command`` (exec form)."""
    if not command or any("\0" in a for a in command):
        raise SandboxError(f"cannot run {command!r} in a box: a command needs a program and no NUL byte")
    return (" ".join(_word(a) for a in command) + "\n").encode("utf-8", "surrogateescape")
