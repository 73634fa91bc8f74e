"""The generic modules name no tier: a tier's knowledge lives in its own module (rules/tiers/), so a new tier is
its own folder and no branch in these. Checked on the code itself: identifiers and string literals, not the
prose of comments and docstrings (which may give a tier as an example)."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parent.parent / "rules"
GENERIC = ("tasks.py", "trial.py", "runs.py", "worktree.py", "report.py", "prove.py", "build.py", "backends.py")
TIER_WORDS = re.compile(r"(?<![a-z])(aider|swe|swebench|swerun)(?![a-z])")
GROUP_KEYS = re.compile(r"^(language|exercise)$")
FSTRING_MIDDLE = getattr(tokenize, "FSTRING_MIDDLE", -1)


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def code_words(path: Path) -> list[tuple[int, str]]:
    """(line, token) of every identifier and string literal of ``path`` outside docstrings and comments that
    names a tier, or is a fixed ``language``/``exercise`` key."""
    text = path.read_text(encoding="utf-8")
    skip = _docstring_lines(ast.parse(text))
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.start[0] in skip or tok.type not in (tokenize.NAME, tokenize.STRING, FSTRING_MIDDLE):
            continue
        value = tok.string
        if tok.type == FSTRING_MIDDLE:  # Python 3.12 and later: an f-string's text is a token of its own
            if TIER_WORDS.search(value.lower()):
                out.append((tok.start[0], value))
        elif tok.type == tokenize.STRING:
            inner = value.strip("rbfuRBFU")[1:-1].strip("'\"")
            if TIER_WORDS.search(inner.lower()) or GROUP_KEYS.match(inner):
                out.append((tok.start[0], value))
        elif TIER_WORDS.search(value.lower()):
            out.append((tok.start[0], value))
    return out


@pytest.mark.parametrize("name", GENERIC)
def test_a_generic_module_names_no_tier_and_no_fixed_group_key(name):
    path = RULES / name
    if not path.exists():
        pytest.skip(f"{name} is not a module of this layout")
    assert code_words(path) == []


def test_the_check_itself_finds_a_tier_name(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""Mentions aider in prose, which is fine."""\nif tier == "swe":\n    x = row["language"]\n'
                   "from rules import swerun  # a comment about aider\n")
    assert [w for _, w in code_words(bad)] == ['"swe"', '"language"', "swerun"]
