"""The rules package's layering, read from its source by ``ast``: imports go one way (no cycle, counting the
imports made inside functions), and no module imports another's private (``_``) names."""
from __future__ import annotations

import ast
from pathlib import Path

RULES = Path(__file__).resolve().parent.parent / "rules"


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """Every import of a rules module in ``path`` (at module level or inside a function): (module, names)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "rules":
            out += [(f"rules.{a.name}", []) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rules."):
            out.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.startswith("rules.")]
    return out


def _graph() -> dict[str, set[str]]:
    modules = {f"rules.{p.stem}": p for p in RULES.glob("*.py") if p.stem != "__init__"}
    return {name: {m for m, _ in _imports(p) if m in modules and m != name} for name, p in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (module → the modules it imports), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_among_rules_modules_even_inside_functions():
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_trial_never_imports_backends_or_runs():
    graph = _graph()
    assert not graph["rules.trial"] & {"rules.backends", "rules.runs", "rules.tiers.swe.swebench", "rules.tiers.swe.swerun"}
    assert "rules.runs" not in graph["rules.backends"]


def test_no_private_name_is_imported_across_rules_modules():
    crossing = [f"{p.name}: from {m} import {n}" for p in sorted(RULES.glob("*.py")) for m, names in _imports(p)
                for n in names if n.startswith("_") and m != f"rules.{p.stem}"]
    assert crossing == []


# private names still reached through a module (``module._name``), each to be made public by the move named
KNOWN_PRIVATE_USES = {"backends.py: sandbox._alive"}  # the sandbox package split gives it a public name


def test_no_private_name_is_used_across_rules_modules():
    modules = {p.stem for p in RULES.glob("*.py")}
    uses = set()
    for p in sorted(RULES.glob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and isinstance(node.value, ast.Name) and node.value.id in modules - {p.stem}):
                uses.add(f"{p.name}: {node.value.id}.{node.attr}")
    assert uses - KNOWN_PRIVATE_USES == set()


def _unbound(path: Path) -> set[str]:
    """The names ``path`` loads but never binds anywhere in it (assigned, imported, defined, an argument, an
    exception or match name) and that are not builtins: a cheap, scope-blind check that catches a misspelt
    function name, which Python reports only when that line runs."""
    import builtins

    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound = set(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__path__"}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def test_no_module_loads_a_name_it_never_binds():
    """A trial called ``service_reason`` where the function is ``server_reason``: the NameError came only when a
    try's every request failed silently, as an infrastructure error of the trial (model=local, 2026-12-07)."""
    found = {str(p.relative_to(RULES.parent)): sorted(_unbound(p)) for p in sorted(RULES.rglob("*.py"))}
    assert {k: v for k, v in found.items() if v} == {}
