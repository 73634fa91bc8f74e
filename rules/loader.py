"""lab's doit task loader and reporter: doit's own dodo.py loader, with lab's command policy in front.

doit reads the ``[tool.doit]`` table of pyproject.toml in the folder it starts in; lab's selects this loader
(``loader = "lab"``), so the commands stay plain ``doit gen:aider``, ``doit run agent=tomo``, ``doit list``.
doit gives a loader what a dodo.py never sees: the command (``cmd.name``, ``cmd.execute_tasks``) and its
positional task names. Before the task creators run, ``LabLoader.load_tasks`` hands them to ``rules.cli.start``
(variable checks; the home lock and the stop handler for a command that runs tasks), so importing dodo.py does
nothing, and ``doit list`` or ``doit help`` take no lock and write nothing of lab's.
"""
from __future__ import annotations

import sys

from doit import doit_cmd, get_var
from doit.cmd_base import DodoTaskLoader
from doit.exceptions import TaskFailed
from doit.reporter import ExecutedOnlyReporter

from rules import cli
from rules.config import STATE


class Refused(TaskFailed):
    """A task that cannot run for a reason the user fixes (an unknown agent, a setting without a value): its
    one-line message is the whole failure report, without doit's ``TaskFailed - taskid:<task>`` head."""


class Reporter(ExecutedOnlyReporter):
    """doit's console reporter without the ``--`` line of each up-to-date task (a no-op ``doit gen:aider``
    printed one per task) and without a line for a task whose ``meta`` says ``quiet`` (a summary that speaks
    for itself); a ``Refused`` task's failure is its message alone, and the same reason is written once.
    ``doit -r console`` shows every line."""

    desc = "console, without up-to-date tasks; lab's refusals as their one line"

    def __init__(self, outstream, options):
        super().__init__(PipeSafe(outstream), options)
        self._refusals: list[str] = []

    def execute_task(self, task):
        if not (task.meta or {}).get("quiet"):
            super().execute_task(task)

    def _write_failure(self, result, write_exception=True):
        if isinstance(result["exception"], Refused):
            text = result["exception"].message.rstrip("\n")
            # one reason, once: two tasks stopped by the same cause (a missing repository stops an instance's
            # gen task and its environment's build) give one line
            if write_exception and not any(w.endswith(text) or text.endswith(w) for w in self._refusals):
                self._refusals.append(text)
                self.write(text + "\n")
            return
        super()._write_failure(result, write_exception)


_IN_USE: list[bool] = []


def check_loader() -> None:
    """Stop (SystemExit with one line) when dodo.py is being loaded by doit's plain loader, not ``LabLoader``:
    doit started outside the lab folder reads no ``[tool.doit]`` table, and would skip lab's checks and the
    home lock. dodo.py calls it."""
    if not _IN_USE:
        raise SystemExit(cli.NOT_LOADED)


class LabLoader(DodoTaskLoader):
    """doit's dodo.py loader (options ``-f``, ``-d``, ``-k`` as usual) that adds ``num_process`` from
    ``jobs=`` to dodo.py's DOIT_CONFIG and starts the command (``rules.cli.start``) before making its tasks."""

    def setup(self, opt_values):
        _IN_USE.append(True)
        self._params = opt_values
        super().setup(opt_values)

    def load_doit_config(self) -> dict:
        config = {**super().load_doit_config(), "num_process": cli.jobs(get_var("jobs"))}
        self._dep_file = config.get("dep_file")
        if not STATE.is_dir():
            # doit opens its database before a loader learns the command: in a home no command has run in, an
            # empty one in memory (the same answers) so that `doit list` makes no folder; see load_tasks
            config["dep_file"] = ":memory:"
        return config

    def load_tasks(self, cmd, pos_args):
        variables = dict(doit_cmd._CMDLINE_VARS or {})  # doit 0.37 keeps the name=value pairs only there
        # sys.argv only for what doit drops: a variable given twice, and the command line quoted in the lock
        command = cli.Command(cmd.name, tuple(pos_args), variables, cmd.execute_tasks)
        cli.start(command, sys.argv[1:])
        if cmd.execute_tasks:
            sys.stdout = PipeSafe(sys.stdout)
        if cmd.execute_tasks and cmd.dep_manager.name == ":memory:" and not cli.serves_only(command):
            _database_on_disk(cmd, self._dep_file)
        if cli.serves_only(command):
            # the server runs in doit's main thread, where Ctrl-C lands and ends it quietly (in a worker thread
            # of jobs=N, the interrupt hit doit's wait for results and printed its traceback)
            self._params["num_process"] = 0
        return super().load_tasks(cmd, pos_args)


class PipeSafe:
    """Standard output that survives its reader going away (``doit run agent=x | head``): the first write or
    flush that meets a closed pipe points file descriptor 1 at /dev/null, so the command finishes its work
    (trials, the report's files) and exits as it would have, instead of dying on ``BrokenPipeError`` in
    whatever printed next. Everything else is the wrapped stream's."""

    def __init__(self, stream):
        self._stream = stream

    def _gone(self) -> None:
        import os

        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, self._stream.fileno())
        except (OSError, ValueError):  # not a real file: nothing more will reach it anyway
            pass
        finally:
            os.close(null)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _database_on_disk(cmd, dep_file: str) -> None:
    """Give a task-running command ``cmd`` that doit started on the in-memory database (a home without
    ``.lab``, which ``rules.cli.hold_home`` has made since) the database file ``dep_file`` instead, before any
    task runs, so that what it runs is remembered."""
    from doit.dependency import Dependency
    from doit.globals import Globals

    memory = cmd.dep_manager
    cmd.dep_manager = Globals.dep_manager = Dependency(memory.db_class, dep_file, checker_cls=type(memory.checker),
                                                       codec_cls=type(memory.backend.codec))
