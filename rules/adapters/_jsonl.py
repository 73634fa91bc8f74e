"""Helpers the npm agents' adapters share: reading JSON events from an agent's console output."""
from __future__ import annotations

import json


def events(output: str) -> list[dict]:
    """The JSON objects of ``output``: one per line (JSON lines), or the items of a JSON array printed whole;
    lines that are not JSON objects (log lines, banners) are skipped."""
    found: list[dict] = []
    for line in output.splitlines():
        line = line.strip()
        if not line or line[0] not in "[{":
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        found.extend(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, dict))
    return found


def text(value) -> str:
    """``value`` as text for a trajectory: strings as they are, anything else as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
