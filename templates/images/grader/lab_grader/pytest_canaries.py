"""Python check.sh, as root before any graded code: the canary tests, written into the task's test file, and
their names, written to a manifest only root can read (the host decides with it: rules/grade.py, Canaries).

A solution cannot tell the canaries from the exercise's own tests by their names or their place (issue 19): each
is a method of the exercise's own first test case class, at a random place among its methods, under a fresh
name made of the words of that class's own test names (``test_encode_with_spaces``). They are:

- a *failing* and a *passing* canary comparing numbers with the same ``assertEqual`` as the tests: a solution
  that patches the assertions for the tests' argument types, swaps the test module's unittest or rewrites that
  class fools these too. They take ``*args``, as a class decorator (grep: mock.patch) passes its mocks to every
  test method;
- up to two *mutants*: copies of the exercise's own tests with one expected value changed, which an honest
  solution fails wherever it passes the original test. A result that compares equal to anything, or an
  assertion that swallows failures, passes both the test and its copy: the host calls that ``tampered``.

A test is copied only when the changed assertion surely runs whenever the original test passes: an
``assertEqual``-like call that is a statement of the method's own body (or of a ``with self.subTest(...)`` block
in it) comparing a literal, or a name bound once in that body to a literal and read there by that comparison
alone, with a computed value (a call, an operation; never another literal). Only when the file has no test case class: a class of its own at its end.

    python3 -I -m lab_grader.pytest_canaries TEST_FILE CANARY_FAIL CANARY_PASS [MANIFEST]

CANARY_FAIL and CANARY_PASS (fresh random tokens, rules/grade.py: canary_tokens) seed the draw; TEST_FILE is
rewritten in place; MANIFEST (JSON: ``{"fail": [method names], "pass": [...], "originals": {mutant: test},
"match": "leaf"}``, rules/grade.py: canaries_of) is written when given.
"""
from __future__ import annotations

import ast
import json
import os
import random
import re
import sys

EQUAL_ASSERTS = frozenset({"assertEqual", "assertEquals", "assertListEqual", "assertTupleEqual", "assertDictEqual",
                           "assertSetEqual", "assertSequenceEqual", "assertCountEqual", "assertMultiLineEqual"})
MUTANTS = 2  # copies with a changed expected value, at most, per grading
FALLBACK_WORDS = ("value", "case", "result", "input", "empty", "single", "several")


def _literal(node: ast.AST):
    """``(True, value)`` when ``node`` is a literal Python can evaluate without running code, else (False, None)."""
    if isinstance(node, ast.Name):
        return False, None
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _is_test_case(cls: ast.ClassDef) -> bool:
    def last(base):
        return base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
    return any(last(b).endswith("TestCase") for b in cls.bases)


def words_of(names: list[str]) -> list[str]:
    """The words of test method names (``test_encode_with_spaces`` → encode, with, spaces), in first-seen order:
    what fresh canary names are made of. Digits-only words are left out (names like ``test_1``)."""
    seen: dict[str, None] = {}
    for name in names:
        for w in name.split("_")[1:]:
            if w and not w.isdigit():
                seen.setdefault(w, None)
    return list(seen)


def fresh_name(rnd: random.Random, names: list[str], taken: set[str]) -> str:
    """A test method name made as the class's own test ``names`` are: a walk along the word pairs they hold
    (``test_encode_with_spaces`` and ``test_decode_all`` can give ``test_encode_all``), else 2 to 4 of their
    words; neither one of ``taken`` nor a part of one of them (so that no line about a real test is ever taken
    for a canary's); added to ``taken``."""
    words = words_of(names)
    words = words if len(words) >= 2 else words + [w for w in FALLBACK_WORDS if w not in words]
    follows: dict[str, list[str]] = {}
    for name in names:
        parts = [w for w in name.split("_")[1:] if w]
        for a, b in zip([""] + parts, parts + [""]):
            follows.setdefault(a, []).append(b)
    for attempt in range(300):
        if attempt < 150 and follows.get(""):
            parts, word = [], rnd.choice(follows[""])
            while word and len(parts) < 6 and word not in parts:
                parts.append(word)
                word = rnd.choice(follows.get(word) or [""])
        else:
            parts = rnd.sample(words, min(len(words), rnd.choice((2, 3, 3, 4))))
        name = "test_" + "_".join(parts)
        if attempt > 250:
            name += f"_{rnd.randint(2, 99)}"
        if len(parts) >= 2 and name not in taken and not any(name in t for t in taken):
            taken.add(name)
            return name
    raise ValueError("no fresh test name could be drawn")


def source_of(value, quote: str = '"') -> str:
    """``value`` (a literal's) as Python source, its strings in ``quote`` marks as the test file writes them."""
    if isinstance(value, str):
        escapes = {"\\": "\\\\", quote: "\\" + quote, "\n": "\\n", "\t": "\\t", "\r": "\\r"}
        return quote + "".join(escapes.get(ch) or (ch if ch.isprintable() else repr(ch)[1:-1])
                               for ch in value) + quote
    if isinstance(value, list):
        return "[" + ", ".join(source_of(v, quote) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(source_of(v, quote) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, (set, frozenset)):
        inner = ", ".join(source_of(v, quote) for v in sorted(value, key=repr))
        text = "{" + inner + "}" if value else "set()"
        return text if isinstance(value, set) else f"frozenset({text})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{source_of(k, quote)}: {source_of(v, quote)}" for k, v in value.items()) + "}"
    return repr(value)


def mutate(rnd: random.Random, value, words: list[str]):
    """A value of the same kind as ``value`` that is surely not equal to it, or raise ValueError when there is
    none this knows to make (None, bytes, ...)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rnd.choice((1, 2, 3, 5, 7, -1, -2))
    if isinstance(value, float):
        return value + rnd.choice((1.5, 2.25, -0.75)) if value == value else 0.0
    if isinstance(value, str):
        if not value:
            return rnd.choice(words or FALLBACK_WORDS)
        i = rnd.randrange(len(value))
        pool = sorted(set(value + "aeiourstn") - {value[i]})
        return value[:i] + rnd.choice(pool) + value[i + 1:]
    if isinstance(value, (list, tuple)):
        if value:
            return value[:-1] if rnd.random() < 0.5 or len(value) == 1 else value[1:]
        return type(value)([rnd.choice(words or FALLBACK_WORDS)])
    if isinstance(value, (set, frozenset)):
        if value:
            drop = rnd.choice(sorted(value, key=repr))
            return type(value)(v for v in value if v != drop)
        return type(value)({rnd.choice(words or FALLBACK_WORDS)})
    if isinstance(value, dict):
        if value:
            drop = rnd.choice(sorted(value, key=repr))
            return {k: v for k, v in value.items() if k != drop}
        return {rnd.choice(words or FALLBACK_WORDS): 0}
    raise ValueError(f"no mutation for a {type(value).__name__}")


def _statements(method: ast.FunctionDef):
    """The statements surely run (in order) when the method runs to its end: its body's, and those of a
    ``with self.subTest(...)`` block in it."""
    for stmt in method.body:
        yield stmt
        if isinstance(stmt, ast.With) and all(
                isinstance(it.context_expr, ast.Call) and isinstance(it.context_expr.func, ast.Attribute)
                and it.context_expr.func.attr == "subTest" for it in stmt.items):
            yield from stmt.body


def candidates(method: ast.FunctionDef) -> list[ast.AST]:
    """The literal nodes of ``method`` whose change makes a copy of it that must fail (see the module's
    docstring): each is the expected value of one assertEqual-like statement."""
    bound: dict[str, list[ast.AST]] = {}
    for node in ast.walk(method):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)) else []
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    bound.setdefault(n.id, []).append(node)
    loads: dict[str, int] = {}
    for n in ast.walk(method):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            loads[n.id] = loads.get(n.id, 0) + 1
    once_literal: dict[str, ast.AST] = {}
    for stmt in method.body:
        # read by the equality alone: a name that also feeds the computed side changes both sides with it, and
        # the copy passes wherever the test does (as Java's and Rust's writers already require)
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and len(bound.get(stmt.targets[0].id, ())) == 1 and _literal(stmt.value)[0]
                and loads.get(stmt.targets[0].id) == 1):
            once_literal[stmt.targets[0].id] = stmt.value

    def computed(node):
        if isinstance(node, ast.Name):
            return node.id not in once_literal and node.id in bound
        return not _literal(node)[0] and not isinstance(node, (ast.Starred, ast.Lambda))

    found = []
    for stmt in _statements(method):
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"
                and call.func.attr in EQUAL_ASSERTS and len(call.args) >= 2 and not call.keywords):
            continue
        a, b = call.args[0], call.args[1]
        for expected, actual in ((a, b), (b, a)):
            node = once_literal.get(expected.id) if isinstance(expected, ast.Name) else (
                expected if _literal(expected)[0] else None)
            if node is not None and computed(actual):
                found.append(node)
                break
    return found


def _replace(lines: list[str], first: int, node: ast.AST, text: str) -> list[str]:
    """``lines`` (a method's, the first being line ``first`` of the file) with ``node``'s source replaced by
    ``text`` (ast's offsets count UTF-8 bytes)."""
    raw = [line.encode("utf-8") for line in lines]
    a, b = node.lineno - first, node.end_lineno - first
    head, tail = raw[a][:node.col_offset], raw[b][node.end_col_offset:]
    return [x.decode("utf-8") for x in raw[:a] + [head + text.encode("utf-8") + tail] + raw[b + 1:]]


def _quote_of(lines: list[str], first: int, node: ast.AST) -> str:
    """The quote mark the first string of ``node``'s source (in ``lines``, from file line ``first``) uses."""
    text = "\n".join(lines[node.lineno - first:node.end_lineno - first + 1])
    marks = [i for i in (text.find('"'), text.find("'")) if i >= 0]
    return text[min(marks)] if marks else '"'


def with_canaries(source: str, fail: str, ok: str) -> tuple[str, dict]:
    """``source`` (a test module's) with the canaries added, and the manifest naming them: ``{"fail": [...],
    "pass": [...], "originals": {mutant: original}}`` (method names). The draw is seeded by ``fail`` and ``ok``."""
    rnd = random.Random(f"{fail}:{ok}")
    lines = source.split("\n")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    classes = [c for c in tree.body if isinstance(c, ast.ClassDef) and _is_test_case(c)]
    every = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    taken = set(every) | {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    manifest: dict = {"fail": [], "pass": [], "originals": {}, "match": "leaf"}
    n, m = rnd.randrange(2, 997), rnd.randrange(2, 997)
    if not classes:
        names = [x for x in every if x.startswith("test_")]
        bad, good = fresh_name(rnd, names, taken), fresh_name(rnd, names, taken)
        alias = "unittest_" + fresh_name(rnd, names, taken)[5:]
        cls = "".join(w.title() for w in fresh_name(rnd, names, taken)[5:].split("_")) + "Test"
        manifest.update({"fail": [bad], "pass": [good]})
        lines += ["", f"import unittest as {alias}", "", f"class {cls}({alias}.TestCase):",
                  f"    def {bad}(self):", f"        self.assertEqual({n}, {n + 1})",
                  f"    def {good}(self):", f"        self.assertEqual({m}, {m})", ""]
        return "\n".join(lines), manifest
    cls = classes[0]
    methods = [f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    tests = [f for f in methods if f.name.startswith("test")]
    names = [f.name for f in tests]
    words = words_of(names)
    first = min(methods, key=lambda f: f.lineno) if methods else None
    indent = re.match(r"\s*", lines[first.lineno - 1]).group() if first is not None else "    "
    blocks: list[list[str]] = []
    bad, good = fresh_name(rnd, names, taken), fresh_name(rnd, names, taken)
    manifest["fail"].append(bad)
    manifest["pass"].append(good)
    blocks.append([f"{indent}def {bad}(self, *args):", f"{indent}    self.assertEqual({n}, {n + 1})", ""])
    blocks.append([f"{indent}def {good}(self, *args):", f"{indent}    self.assertEqual({m}, {m})", ""])
    pool = [(f, c) for f in tests if not f.decorator_list for c in candidates(f)]
    rnd.shuffle(pool)
    used: set[str] = set()
    for f, node in pool:
        if len(used) == MUTANTS:
            break
        if f.name in used:
            continue
        try:
            value = mutate(rnd, ast.literal_eval(node), words)
        except ValueError:
            continue
        body = lines[f.lineno - 1:f.end_lineno]
        body = _replace(body, f.lineno, node, source_of(value, _quote_of(body, f.lineno, node)))
        name = fresh_name(rnd, names, taken)
        body[0] = re.sub(rf"\bdef\s+{re.escape(f.name)}\b", f"def {name}", body[0], count=1)
        blocks.append(body + [""])
        manifest["fail"].append(name)
        manifest["originals"][name] = f.name
        used.add(f.name)
    # places: before any method of the class (its decorators first), or after the class's last line
    places = [(f.decorator_list[0].lineno if f.decorator_list else f.lineno) - 1 for f in methods]
    places.append(cls.end_lineno)
    chosen = sorted(((rnd.choice(places), rnd.random(), b) for b in blocks), key=lambda x: (x[0], x[1]),
                    reverse=True)
    for at, _, block in chosen:
        lines[at:at] = [""] + block[:-1] if at == cls.end_lineno else block
    return "\n".join(lines), manifest


def main(argv: list[str]) -> None:
    """``TEST_FILE CANARY_FAIL CANARY_PASS [MANIFEST]``: add the canaries to TEST_FILE, name them in MANIFEST."""
    path, fail, ok = argv[:3]
    with open(path, encoding="utf-8") as f:
        source, manifest = with_canaries(f.read(), fail, ok)
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    if len(argv) > 3:  # root's alone (mode 600): the tester must not learn the canaries' names from it
        fd = os.open(argv[3], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(manifest, f)


if __name__ == "__main__":
    main(sys.argv[1:])
