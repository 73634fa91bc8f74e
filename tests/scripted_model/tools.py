"""The scripted model fixture's tool table: how to "write CONTENT to PATH" with each agent's own file-writing
tool, and how each agent says it is done.

``WRITERS`` maps a tool name (as the agent lists it in the request's ``tools``) to a function
``(path, content) -> arguments`` (a dict, sent JSON-encoded as the tool call's ``arguments``); ``path`` is
relative to the agent's work tree (``/work``; ``WORK`` joins it when a tool wants an absolute path).
``READERS`` and ``READ_FIRST``: see below. ``FINISHERS`` maps a tool name to the arguments of the agent's finishing tool (an agent that ends its turn on a
plain reply needs no row). One row per line, so that rows added for several agents merge without conflict.
"""
from __future__ import annotations

WORK = "/work"


def absolute(path: str) -> str:
    """``path`` below the work tree, as an absolute path (``/work/x.py``)."""
    return path if path.startswith("/") else f"{WORK}/{path}"


WRITERS = {
    "write_file": lambda path, content: {"file_path": absolute(path), "content": content},  # gemini-cli, qwen-code
    "write": lambda path, content: {"filePath": absolute(path), "content": content},  # opencode 1.18
    "lab_fixture_write": lambda path, content: {"path": path, "content": content},
    "Write": lambda path, content: {"file_path": absolute(path), "content": content},  # claude-code 2.1.332
}

# Agents whose writing tool refuses to overwrite a file not read first in the session (qwen-code 0.24's
# write_file): the fixture calls the reading tool on the path first. READERS maps a reading tool to the value of
# its first required argument (from the tool's schema in the request).
READ_FIRST = {"write_file"}
READERS = {
    "read_file": absolute,  # qwen-code, gemini-cli
}

FINISHERS = {
    "lab_fixture_done": lambda: {},
}
