"""Rust check.sh, as root before any graded code: the Cargo.toml that is graded.

Cargo.toml is a solution file only for its dependencies: the agent's ``[dependencies]`` are kept (registry
crates only: no path, git or registry source), and everything else (package, features, targets) comes from the
pristine manifest, so no test target, feature or build script can be swapped. It only reads the two manifests
(tomllib) and writes TOML.

    python3 -I -m lab_grader.cargo_manifest PRISTINE AGENT DEPS_OUT

rewrites AGENT (the work tree's Cargo.toml) as the merge and writes the dependency set to DEPS_OUT as one JSON
line, as the image's seeds name theirs (templates/images/grader/rust/crates.py: deps_key). A manifest that is
not valid TOML ends it with a traceback and a non-zero exit.
"""
from __future__ import annotations

import json
import re
import sys
import tomllib

ALLOWED = {"version", "features", "default-features", "package"}  # of a dependency's table: no sources


def load(path: str) -> dict:
    """The TOML document at ``path``. Raises OSError or tomllib.TOMLDecodeError."""
    with open(path, "rb") as f:
        return tomllib.load(f)


def key(k: str) -> str:
    """``k`` as a TOML key: bare when it may be, else quoted."""
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


def value(v) -> str:
    """``v`` (a bool, number, string, list or table) as an inline TOML value. Raises ValueError for others."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
    raise ValueError(f"unsupported TOML value {v!r}")


def table(name: str, d: dict) -> list[str]:
    """The lines of table ``[name]``: its plain keys, then each sub-table as a table of its own."""
    lines = [f"[{name}]"] + [f"{key(k)} = {value(v)}" for k, v in d.items() if not isinstance(v, dict)]
    for k, v in d.items():
        if isinstance(v, dict):
            lines += ["", *table(f"{name}.{key(k)}", v)]
    return lines


def merge(pristine: dict, agent: dict) -> tuple[dict, dict]:
    """The graded manifest and its dependency set: ``pristine`` with ``agent``'s dependencies (each table cut
    down to ``ALLOWED``) in place of its own."""
    deps = {}
    for name, spec in (agent.get("dependencies") or {}).items():
        deps[name] = {k: v for k, v in spec.items() if k in ALLOWED} if isinstance(spec, dict) else spec
    merged = {k: v for k, v in pristine.items() if k != "dependencies"}
    if deps:
        merged["dependencies"] = deps
    return merged, deps


def dumps(doc: dict) -> str:
    """``doc`` as TOML text: top-level plain keys first (e.g. ``[[bin]]`` arrays, inline), then its tables."""
    out = [f"{key(k)} = {value(v)}" for k, v in doc.items() if not isinstance(v, dict)]
    for name, d in doc.items():
        if isinstance(d, dict):
            out += ["", *table(key(name), d)]
    out.append("")
    return "\n".join(out).lstrip("\n")


def main(argv: list[str]) -> None:
    """``PRISTINE AGENT DEPS_OUT``: rewrite AGENT as the merge, write the dependency set to DEPS_OUT."""
    merged, deps = merge(load(argv[0]), load(argv[1]))
    text = dumps(merged)  # before AGENT is opened: a value TOML cannot hold leaves it as it was
    with open(argv[1], "w") as f:
        f.write(text)
    with open(argv[2], "w") as f:
        f.write(json.dumps(deps, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
