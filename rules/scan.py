"""The suspicion scan: a static look at a graded change for constructs no solution of an exercise needs.

A grading decides from the tests' report; some forgeries leave the report looking right (a result that compares
equal to anything, a test framework patched from the solution, a report written from inside). The scan does not
decide anything: it reads the change a grading read (a unified diff: ``diff -ruN`` of the work tree against the
stub, or a task's patch) and flags the added lines and the changed files that match a pattern of the table the
task's tier gives (``rules.tier.Tier.suspicions``), so a person can review any pass that carries a flag. The
flags are evidence on the try (``suspicions`` in result.json) and are listed in the report beside ``tampered``.

A pattern (``Suspicion``) is searched in the text of each run of consecutive added lines of a file (multi-line
regular expressions work: ``def __eq__(...):\\n    return True``), or names a file path that no solution should
change. Tables are data: the tier owns them, per language; this module names no tier.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Iterator

MAX_FLAGS = 20  # flags kept per scan: enough to review, never a flood in result.json
TEXT_CAP = 160  # characters of a flagged line kept
# A Python ``__eq__``/``__ne__`` whose body is a constant ``return`` (``{values}``), however it is written: on the
# def's line or the next, in parentheses, after comment lines or a one-line docstring, with a comment after it.
PY_EQ_ALWAYS = (r"def\s+__(?:eq|ne)__\s*\([^)]*\)[^:\n]*:[ \t]*(?:#[^\n]*)?"
                r"(?:\n[ \t]*(?:#[^\n]*)?|\n[ \t]*[rRuU]?(?:\"\"\"|\'\'\'|\"|\')[^\n]*(?:\"\"\"|\'\'\'|\"|\')[ \t]*)*"
                r"(?:\n)?[ \t]*return[ \t]*\(?[ \t]*(?:{values})[ \t]*\)?[ \t]*(?:[#;][^\n]*)?$")
HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Suspicion:
    """One pattern of a tier's table: ``name`` (the flag's name, e.g. ``"pytest-hook"``), ``why`` (the one line
    a reviewer reads), ``files`` (a regular expression a changed file's path must match for the pattern to apply,
    e.g. ``r"\\.py$"``; "" any file), ``line`` (a regular expression searched in the file's added text, re.M;
    "" none) and ``path`` (a regular expression on the path alone: any change to such a file is flagged, with
    ``line`` "")."""

    name: str
    why: str
    files: str = ""
    line: str = ""
    path: str = ""


@lru_cache(maxsize=None)
def _compiled(expr: str) -> re.Pattern:
    return re.compile(expr, re.M)


def _path(header: str) -> str:
    """The file's path in a ``+++``/``---`` header (``work/a.py\\t<date>``, ``b/src/x.py``), without its first
    folder (the tree's label); "" for ``/dev/null``."""
    name = header[4:].split("\t", 1)[0].strip()
    if name == "/dev/null":
        return ""
    return name.split("/", 1)[1] if "/" in name else name


def added_runs(diff: str) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    """The added lines of a unified diff (``diff -ruN`` or git's), by file: ``(path, [(line number in the new
    file, text)])`` per run of consecutive added lines; a file the diff adds, changes or deletes with no added
    line yields ``(path, [])`` once. Hunk lengths are counted, so an added line that itself begins with
    ``+++`` is read as text."""
    path, old_left, new_left, line, run = "", 0, 0, 0, []
    for raw in diff.splitlines():
        if old_left > 0 or new_left > 0:
            kind, text = raw[:1], raw[1:]
            if kind == "+":
                run.append((line, text))
                line, new_left = line + 1, new_left - 1
                continue
            if run:
                yield path, run
                run = []
            if kind == " " or raw == "":
                line, old_left, new_left = line + 1, old_left - 1, new_left - 1
            elif kind == "-":
                old_left -= 1
            continue  # "\ No newline at end of file"
        if run:
            yield path, run
            run = []
        if raw.startswith("--- "):
            path = _path(raw)
        elif raw.startswith("+++ "):
            path = _path(raw) or path
            yield path, []
        elif (m := HUNK.match(raw)) is not None:
            old_left = int(m.group(1) if m.group(1) is not None else 1)
            new_left = int(m.group(3) if m.group(3) is not None else 1)
            line = int(m.group(2))
    if run:
        yield path, run


def _flag(s: Suspicion, path: str, line: int | None, text: str) -> dict:
    return {"name": s.name, "file": path, "line": line, "text": text.strip()[:TEXT_CAP], "why": s.why}


def _in_run(s: Suspicion, path: str, run: list[tuple[int, str]]) -> Iterator[dict]:
    """The flags of pattern ``s`` in one run of added lines of ``path``: one per line a match begins on."""
    text = "\n".join(t for _, t in run)
    starts = [0]
    for _, t in run[:-1]:
        starts.append(starts[-1] + len(t) + 1)
    seen = set()
    for m in _compiled(s.line).finditer(text):
        begin = m.start() + len(m.group()) - len(m.group().lstrip())  # a leading ``\s*`` may take line ends
        i = max(k for k, start in enumerate(starts) if start <= begin)
        if i not in seen:
            seen.add(i)
            yield _flag(s, path, run[i][0], run[i][1])


def scan(diff: str, table: Iterable[Suspicion]) -> list[dict]:
    """The flags of ``table``'s patterns in ``diff`` (a unified diff), at most ``MAX_FLAGS``, in the diff's
    order: ``[{"name", "file", "line" (in the new file; None for a path pattern), "text" (the added line, cut
    to TEXT_CAP; the path for a path pattern), "why"}]``. Empty when nothing matches."""
    table = tuple(table)
    flags: list[dict] = []
    for path, run in added_runs(diff):
        for s in table:
            if s.files and not _compiled(s.files).search(path):
                continue
            if s.path and not s.line:
                if not run and _compiled(s.path).search(path):
                    flags.append(_flag(s, path, None, path))
            elif s.line and (not s.path or _compiled(s.path).search(path)):
                flags.extend(_in_run(s, path, run))
        if len(flags) >= MAX_FLAGS:
            break
    return flags[:MAX_FLAGS]
