"""Reading an agent's JSON console stream, shared by the adapters of the npm agents."""
from __future__ import annotations

import json


def events(output: str) -> list[dict]:
    """The JSON objects of ``output``: one per line (JSON lines), or the items of a JSON array printed whole
    on one line; lines without JSON (log lines, banners) are skipped, and text before the JSON on a line is left out."""
    found: list[dict] = []
    decoder = json.JSONDecoder()
    for line in output.splitlines():
        # the agent's log holds stdout and stderr together: a warning may stand before the JSON on its line
        starts = [i for i in (line.find("[{"), line.find("{")) if i >= 0]
        if not starts:
            continue
        try:
            value, _ = decoder.raw_decode(line, min(starts))
        except ValueError:
            continue
        found.extend(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, dict))
    return found


def text(value) -> str:
    """A tool result or message content as text for a trajectory: strings as they are, lists of ``{"text"}``
    parts joined by newlines, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, (dict, str)) for p in value):
        return "\n".join(p if isinstance(p, str) else p.get("text", json.dumps(p, ensure_ascii=False))
                         for p in value)
    return json.dumps(value, ensure_ascii=False)
