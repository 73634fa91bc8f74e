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

The text searched is the text a compiler reads, not only the diff's bytes: the diff is cut into lines at its own
line ends only (``\\n``; ``str.splitlines`` would also cut at ``\\x1c``, ``\\x85``, ... where no compiler ends a
line, and the rest of such a line would be lost to the scan), and each added line is cut again wherever a
language may end a line that a diff shows as one (a lone ``\\r``: Python, C++, Java and JavaScript; JavaScript's
``\\u2028``/``\\u2029``); a Python source that declares another encoding than UTF-8 (PEP 263, ``# coding:
utf-7``) is searched again as Python decodes it (``python_encoding``), since the diff shows its bytes and Python
runs the decoded text; and a Python source is searched again folded by NFKC, as Python folds identifiers
(``from ｕnittest import ＴestCase`` imports ``unittest.TestCase``). A file the diff shows as binary (a NUL byte makes it so, and C++ and JavaScript compile
such a source) cannot be read: where it is a source of the table's languages (a pattern's ``files`` matches its
path), it is a ``binary-source`` flag of its own.
"""
from __future__ import annotations

import bisect
import codecs
import io
import re
import tokenize
import unicodedata
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
# A PEP 263 declaration (Python's own expression: a comment on line 1 or 2 holding ``coding:``/``coding=``) of an
# encoding other than UTF-8 (``utf-8``, ``utf8``, ``utf_8``, ``utf-8-sig``, any case) or ASCII, its subset.
PY_CODING = (r"^[ \t\f]*#[^\n]*?coding[:=][ \t]*"
             r"(?![uU][tT][fF][-_]?8(?![\w.])|[uU][tT][fF][-_]?8-|(?:[uU][sS]-)?[aA][sS][cC][iI][iI](?![-\w.]))[-\w.]+")
PY_SOURCE = re.compile(r"\.pyw?$")  # a path Python imports as source (a declared encoding is read there)
# Where a language may end a line inside what a diff shows as one line (diff and git end lines with \n alone).
BREAKS = re.compile(r"\r\n?|[\u2028\u2029]")
GIT_FILE = re.compile(r"^diff --git (?:\"?a/.*?\"? )\"?b/(.*?)\"?$")
OTHER_FILE = re.compile(r"^(?:rename to|copy to) (.*)$|^Binary files .* and (.*) differ$")
BINARY = "binary-source"  # the flag of a source file the diff shows as binary
TOO_LARGE = "too-large"  # the flag of a change longer than the scan reads (cut_flag)
COPIED = "copied-source"  # the flag of a source whose lines came by a copy or a rename, not as added lines
# git's copy and rename headers (a copy's or a rename's lines are the source file's: no hunk adds them)
LINKED = re.compile(r"^diff --git \"?a/.*?\"? \"?b/(.*?)\"?\n(?:old mode \d+\n)?(?:new file mode|new mode) 120000$", re.M)
MOVED = re.compile(r"^(copy|rename) from (.+)\n(?:copy|rename) to (.+)$", re.M)


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


def added_runs(diff: str, heads: dict | None = None,
               binary: set | None = None) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    """The added lines of a unified diff (``diff -ruN`` or git's), by file: ``(path, [(line number in the new
    file, text)])`` per run of consecutive added lines; every file the diff adds, changes, renames, copies or
    deletes (binary or not) first yields ``(path, [])``. Lines are the diff's own (cut at ``\\n`` alone), and
    hunk lengths are counted, so an added line that itself begins with ``+++`` is read as text. With ``heads``
    (a dict), lines 1 and 2 of each new file the hunks show (added or unchanged) are kept there as
    ``{path: {1: text, 2: text}}``, for the source encoding they may declare; with ``binary`` (a set), the paths
    of the files the diff shows as binary are added to it (before their ``(path, [])``)."""
    path, old_left, new_left, line, run = "", 0, 0, 0, []
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for raw in lines:
        if old_left > 0 or new_left > 0:
            kind, text = raw[:1], raw[1:]
            if heads is not None and line <= 2 and kind in ("+", " ", ""):  # an added or an unchanged line
                heads.setdefault(path, {})[line] = text.rstrip("\r")
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
        elif (m := GIT_FILE.match(raw) or OTHER_FILE.match(raw)) is not None:
            name = next(g for g in m.groups() if g is not None)
            path = name.split("/", 1)[1] if raw.startswith("Binary files ") and "/" in name else name
            if binary is not None and raw.startswith("Binary files "):
                binary.add(path)
            yield path, []  # a file whose section may hold no +++ line (renamed, copied, binary, mode changed)
        elif raw.startswith("GIT binary patch"):
            if binary is not None:
                binary.add(path)
            yield path, []
    if run:
        yield path, run


def python_encoding(head: dict[int, str] | None) -> str | None:
    """The codec Python decodes a source file with, from its lines 1 and 2 (``{1: text, 2: text}``, either may be
    missing: a missing line 1 is taken for a comment), as ``tokenize.detect_encoding`` finds it; None for UTF-8,
    for no declaration and for one Python refuses (such a file does not run)."""
    if not head:
        return None
    first = head.get(1, "#")
    data = (first + "\n" + head.get(2, "") + "\n").encode("utf-8", "surrogateescape")
    try:
        name, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        name = codecs.lookup(name).name
    except (SyntaxError, LookupError):
        return None
    return None if name in ("utf-8", "utf-8-sig", "ascii") else name


def source_lines(run: list[tuple[int, str]], encoding: str | None = None) -> list[tuple[int, str]]:
    """The run's lines as a compiler reads them: each cut at every line end a language may take (``BREAKS``),
    the pieces keeping their line's number; with ``encoding`` (a codec Python decodes the file with), each
    line decoded from its bytes first (a line of a diff is a line of the source's bytes; the codecs Python takes
    for source end no line inside one)."""
    if encoding is None and not any(BREAKS.search(text) for _, text in run):
        return run
    out = []
    for n, text in run:
        if encoding is not None:
            try:
                text = text.encode("utf-8", "surrogateescape").decode(encoding, "replace")
            except (LookupError, UnicodeError, TypeError):
                pass
        out += [(n, piece) for piece in BREAKS.split(text[:-1] if text.endswith("\r") else text)]
    return out


def _flag(s: Suspicion, path: str, line: int | None, text: str) -> dict:
    return {"name": s.name, "file": path, "line": line, "text": text.strip()[:TEXT_CAP], "why": s.why}


def _prepared(run: list[tuple[int, str]]) -> tuple[list[tuple[int, str]], str, list[int]]:
    """A run as ``_in_run`` searches it: the run, its lines joined by ``\\n`` and where each line starts there."""
    starts = [0]
    for _, t in run[:-1]:
        starts.append(starts[-1] + len(t) + 1)
    return run, "\n".join(t for _, t in run), starts


def _in_run(s: Suspicion, path: str, prepared: tuple[list[tuple[int, str]], str, list[int]]) -> Iterator[dict]:
    """The flags of pattern ``s`` in one run of added lines of ``path`` (``_prepared``): one per line a match
    begins on."""
    run, text, starts = prepared
    seen = set()
    for m in _compiled(s.line).finditer(text):
        begin = m.start() + len(m.group()) - len(m.group().lstrip())  # a leading ``\s*`` may take line ends
        i = bisect.bisect_right(starts, begin) - 1
        if run[i][0] not in seen:  # pieces of one line (``source_lines``) flag it once
            seen.add(run[i][0])
            yield _flag(s, path, run[i][0], run[i][1])


def _by_file(diff: str, heads: dict, binary: set) -> list[tuple[str, list[list[tuple[int, str]]]]]:
    """``added_runs`` grouped: ``[(path, [run, ...])]`` per file section in the diff's order (a section's
    headers that name one path, e.g. git's ``diff --git`` then ``+++``, are one entry)."""
    out: list[tuple[str, list]] = []
    for path, run in added_runs(diff, heads, binary):
        if not run:
            if not out or out[-1][0] != path or out[-1][1]:
                out.append((path, []))
        elif out and out[-1][0] == path:
            out[-1][1].append(run)
        else:
            out.append((path, [run]))
    return out


def scan(diff: str, table: Iterable[Suspicion]) -> list[dict]:
    """The flags of ``table``'s patterns in ``diff`` (a unified diff), at most ``MAX_FLAGS``, in the diff's
    order: ``[{"name", "file", "line" (in the new file; None for a path pattern), "text" (the added line, cut
    to TEXT_CAP; the path for a path pattern), "why"}]``. Empty when nothing matches."""
    table = tuple(table)
    flags: list[dict] = []
    seen: set[tuple] = set()
    heads: dict[str, dict[int, str]] = {}
    binary: set[str] = set()

    def add(found: Iterable[dict]) -> None:
        for f in found:
            if (key := (f["name"], f["file"], f["line"])) not in seen:
                seen.add(key)
                flags.append(f)

    for path, runs in _by_file(diff, heads, binary):
        mine = [s for s in table if not s.files or _compiled(s.files).search(path)]
        for s in mine:
            if s.path and not s.line and _compiled(s.path).search(path):
                add([_flag(s, path, None, path)])
            if path in binary and s.files and s.line:  # a source of the table's, unreadable
                add([{"name": BINARY, "file": path, "line": None, "text": path,
                      "why": "a source file the diff shows as binary (a NUL byte): the scan cannot read what the "
                             "compiler reads"}])
        encoding = python_encoding(heads.get(path)) if runs and PY_SOURCE.search(path) else None
        texts = [[_prepared(source_lines(run)) for run in runs]]
        if encoding is not None:  # what Python runs, beside what the diff shows
            texts.append([_prepared(source_lines(run, encoding)) for run in runs])
        if runs and PY_SOURCE.search(path) and not all(p[1].isascii() for p in texts[-1]):
            # Python folds identifiers by NFKC: ``ｕnittest`` is ``unittest`` to it
            folded = [_prepared([(n, unicodedata.normalize("NFKC", t)) for n, t in p[0]]) for p in texts[-1]]
            if any(f[1] != p[1] for f, p in zip(folded, texts[-1])):
                texts.append(folded)
        whole = ["\n".join(p[1] for p in prepared) for prepared in texts]
        # a pattern that matches no run matches nothing in the file's added text either: one search a file
        hits = [s for s in mine if s.line and (not s.path or _compiled(s.path).search(path))
                and any(_compiled(s.line).search(w) for w in whole)]
        for k in range(len(runs) if hits else 0):
            for s in hits:
                add(f for prepared in texts for f in _in_run(s, path, prepared[k]))
        if len(flags) >= MAX_FLAGS:
            break
    add(_moved(diff, table))
    return flags[:MAX_FLAGS]


def _moved(diff: str, table: tuple) -> Iterator[dict]:
    """A flag for each file whose lines ``table`` reads that the diff makes a symbolic link (the compiler reads
    its target: a file no pattern reads, testdata/x.txt), copies from another file, or renames there from one
    whose lines it does not read (``x_test.go`` to ``x.go``): those lines are no added lines, so no line pattern
    read them (red team 5). A rename between two read files moves code that was already there."""
    def read(path: str) -> bool:
        return any(s.line and (not s.files or _compiled(s.files).search(path)) for s in table)

    for m in LINKED.finditer(diff):
        if read(m.group(1)):
            yield {"name": COPIED, "file": m.group(1), "line": None, "text": "a symbolic link",
                   "why": "a source that is a symbolic link: the compiler reads its target, the scan only the link"}
    for m in MOVED.finditer(diff):
        kind, src, dst = m.group(1), m.group(2).strip('"'), m.group(3).strip('"')
        if read(dst) and (kind == "copy" or not read(src)):
            yield {"name": COPIED, "file": dst, "line": None, "text": f"{kind} from {src}",
                   "why": f"a source made by a {kind} of {src}: its lines are not added lines, so the scan did not "
                          "read them"}


def cut_flag(diff: str, cap: int) -> list[dict]:
    """``[flag]`` when ``diff`` (a change, whole or already cut) reaches ``cap`` characters, the most the scan
    reads: what follows was never scanned (git orders a diff's files by path, so a large file first hides every
    later one, red team 5), else ``[]``. The flag's shape is ``scan``'s, with no file and no line."""
    if len(diff) < cap:
        return []
    return [{"name": TOO_LARGE, "file": "", "line": None, "text": f"{len(diff)} characters or more",
             "why": f"the change is longer than the {cap} characters the suspicion scan reads: the rest of it was "
                    "not scanned"}]
