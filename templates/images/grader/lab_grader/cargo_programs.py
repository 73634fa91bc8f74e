"""Rust check.sh, as the tester: the integration test programs cargo built, from its JSON messages.

    python3 -I -m lab_grader.cargo_programs CARGO_JSON

prints one ``<target name>\\t<executable>`` line per test program cargo's ``--message-format=json`` output names
(a ``compiler-artifact`` of a ``test`` target with an executable); lines that are not such a message, or whose
names cannot be written, are passed over.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import TextIO


def list_programs(lines: Iterable[str], out: TextIO) -> None:
    """Write ``<target name>\\t<executable>`` to ``out`` for each test program in cargo's JSON message
    ``lines``."""
    for line in lines:
        try:
            m = json.loads(line)
            if m.get("reason") == "compiler-artifact" and m.get("executable") and "test" in m["target"]["kind"]:
                print(m["target"]["name"], m["executable"], sep="\t", file=out)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            pass  # (ValueError includes a name the output's encoding cannot hold)


def main(argv: list[str]) -> None:
    """``CARGO_JSON``: print each test program as ``name<TAB>executable``."""
    list_programs(open(argv[0], encoding="utf-8", errors="replace"), sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
