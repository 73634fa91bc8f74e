"""The toy tier's fixture: a lab home whose ``evals/toy/`` is tests/toy_tier/ (its module, templates and
suite.toml, declared the documented way: ``plugin = "toy:ToyTier"``) with a folder of topics written here.

Topics, each chosen for the status its proof gives:

- double, square: ordinary tasks (the reference passes, the stub fails) → ``kept``;
- identity: the stub is already right → ``free`` (a noop agent passes it, and only it);
- broken: no test file → ``rejected`` at render, with the reason.
"""
from __future__ import annotations

import shutil
from pathlib import Path

TIER = Path(__file__).resolve().parent / "toy_tier"


def _topic(fn: str, stub: str, reference: str, cases: list[tuple[int, int]]) -> dict[str, str]:
    tests = "".join(f"\n\ndef test_{i}():\n    assert {fn}({x}) == {y}\n" for i, (x, y) in enumerate(cases, 1))
    return {f"{fn}.py": f"def {fn}(n):\n    {stub}\n", "reference.py": f"def {fn}(n):\n    {reference}\n",
            f"test_{fn}.py": f"from {fn} import {fn}{tests}", "about.md": f"# {fn}\n\nWrite `{fn}(n)`.\n"}


TOPICS: dict[str, dict[str, str]] = {
    "double": _topic("double", "return 0", "return 2 * n", [(1, 2), (3, 6)]),
    "square": _topic("square", "return 0", "return n * n", [(2, 4), (3, 9)]),
    "identity": _topic("identity", "return n", "return n", [(1, 1), (5, 5)]),
    "broken": {k: v for k, v in _topic("broken", "return 0", "return 1", [(1, 1)]).items()
               if not k.startswith("test_")},
}
KEPT, FREE, REJECTED = ("toy-double", "toy-square"), ("toy-identity",), ("toy-broken",)


def write_topics(source: Path, topics: dict[str, dict[str, str]] = TOPICS) -> Path:
    """Write ``topics`` (topic → file name → text) into the folder ``source``; returns it."""
    for topic, files in topics.items():
        for name, text in files.items():
            (source / topic).mkdir(parents=True, exist_ok=True)
            (source / topic / name).write_text(text)
    return source


def make_toy_home(home: Path, agents: Path | None = None) -> Path:
    """Lay tests/toy_tier/ into ``home``'s ``evals/toy/`` with the fixture topics in its ``source/`` folder,
    and copy ``agents`` (an agents.toml) beside it. Returns the tier's folder."""
    folder = home / "evals" / "toy"
    shutil.copytree(TIER, folder, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    write_topics(folder / "source")
    if agents is not None and agents.is_file():
        shutil.copy(agents, home / "evals" / "agents.toml")
    return folder
