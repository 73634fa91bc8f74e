"""The scripted model fixture's tool table: how to "write CONTENT to PATH" with each agent's own file-writing
tool, and how each agent says it is done.

``WRITERS`` maps a tool name (as the agent lists it in the request's ``tools``) to a function
``(path, content, old) -> arguments`` (a dict, sent JSON-encoded as the tool call's ``arguments``); ``path`` is
relative to the agent's work tree (``/work``; ``WORK`` joins it when a tool wants an absolute path); ``old`` is
the text the file holds now (the script's ``old``; None: unknown or no file), for a tool that replaces text
rather than writing a whole file.
``READERS`` and ``READ_FIRST``: see below. ``FINISHERS`` maps a tool name to the arguments of the agent's finishing tool (an agent that ends its turn on a
plain reply needs no row). One row per line, so that rows added for several agents merge without conflict.
"""
from __future__ import annotations

import shlex

WORK = "/work"


def absolute(path: str) -> str:
    """``path`` below the work tree, as an absolute path (``/work/x.py``)."""
    return path if path.startswith("/") else f"{WORK}/{path}"


def shell_write(path: str, content: str) -> str:
    """A shell command that writes ``content`` to ``path`` (below the work tree) exactly, for an agent whose
    only tool that can write a file is its shell."""
    return f"printf '%s' {shlex.quote(content)} > {shlex.quote(absolute(path))}"


WRITERS = {
    "write_file": lambda path, content, old: {"file_path": absolute(path), "content": content},  # gemini-cli, qwen-code
    "write": lambda path, content, old: {"filePath": absolute(path), "content": content},  # opencode 1.18
    "lab_fixture_write": lambda path, content, old: {"path": path, "content": content},
    "Write": lambda path, content, old: {"file_path": absolute(path), "content": content},  # claude-code 2.1.332
    # cline 3.0.65 (@cline/core 0.0.86): creates a missing file from new_text; an existing one only by replacing
    # old_text (exactly once), so the whole old text is replaced
    "editor": lambda path, content, old: {"path": absolute(path), "new_text": content,
                                          **({"old_text": old} if old else {})},
    # codex 0.171.0 over the Responses API behind the gateway offers no file-writing tool (no apply_patch), only
    # its shell, exec_command (cmd required; the tool's output comes back as its result)
    "exec_command": lambda path, content, old: {"cmd": shell_write(path, content), "workdir": WORK},
    "bash": lambda path, content, old: {"command": shell_write(path, content)},  # mini-swe-agent 2.4.6 (mini.yaml)
    # openhands (openhands-tools 1.34.0): `create` refuses an existing file, so an existing one is replaced whole
    "file_editor": lambda path, content, old: ({"command": "str_replace", "path": absolute(path), "old_str": old,
                                                "new_str": content} if old else
                                               {"command": "create", "path": absolute(path), "file_text": content}),
}

# Agents whose writing tool refuses to overwrite a file not read first in the session (qwen-code 0.24's
# write_file): the fixture calls the reading tool on the path first. READERS maps a reading tool to the value of
# its first required argument (from the tool's schema in the request).
READ_FIRST = {"write_file"}
READERS = {
    "read_file": absolute,  # qwen-code, gemini-cli
}

# Agents whose finishing step is a call of their writing tool itself (a shell command they recognise):
# SHELL_FINISHERS maps that tool to the finishing call's arguments.
SHELL_FINISHERS = {
    "bash": lambda: {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"},  # mini-swe-agent 2.4.6
}

FINISHERS = {
    "lab_fixture_done": lambda: {},
    "submit_and_exit": lambda: {"summary": "The file is written as the task asks.", "verified": True},  # cline 3.0.65
    "finish": lambda: {"message": "The file is written as the task asks."},  # openhands (openhands-sdk 1.34.0)
}
