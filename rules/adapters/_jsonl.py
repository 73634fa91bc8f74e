"""Reading an agent's JSON-lines console stream (one JSON object a line, among plain log lines)."""
from __future__ import annotations

import json


def events(output: str) -> list[dict]:
    """Every line of ``output`` that is a JSON object, parsed, in order; other lines are skipped."""
    found = []
    for line in output.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict):
                found.append(item)
    return found


def text(value) -> str:
    """A tool result or message content as text: strings as they are, lists of ``{"text"}`` parts joined,
    anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in value)
    return json.dumps(value)
