"""C++ check.sh, as root before any code of the work tree runs: the macros a solution may not (re)define.

Catch runs every test case once EXERCISM_RUN_ALL_TESTS is on, and the solution's headers are compiled into the
tests, so no file of the work tree but the pristine ones may define or undefine a macro named like that switch,
like any of Catch's names, or like any name the tests use (which would switch tests off, stand in for Catch, or
make a test's comparison compare something else). The scan reads every file but the pristine ones (whatever a
solution could #include), with line splices joined, the digraph and trigraph of '#' read as '#', and comments
allowed wherever the preprocessor allows them.

    python3 -I -m lab_grader.macro_guard [PRISTINE_FILE ...]

run in the work tree (the pristine files named relative to it), prints one ``<file>: #<define|undef> <name>``
line per such directive; check.sh refuses the tree when it prints any or exits non-zero.
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator

BLANK = r"(?>[ \t\f\v\r]|/\*.*?\*/)"  # a blank or a comment; atomic, so hostile text cannot make it backtrack
DIRECTIVE = re.compile(r"(?:^|\*/)" + BLANK + r"*#" + BLANK + r"*(define|undef)" + BLANK + r"+([A-Za-z_$][\w$]*)",
                       re.S | re.M)
IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
SWITCHES = re.compile(r"EXERCISM_|TWOBLUECUBES_|CATCH_|INTERNAL_CATCH_")
SOURCE = re.compile(r"\.(c|cc|cpp|cxx|c\+\+|h|hh|hpp|hxx|h\+\+|ipp|tpp|inl)$", re.I)
READ_CAP = 50_000_000  # bytes of a file read


def text(path: str) -> str:
    """The text of the file at ``path`` as the preprocessor reads its directives: bytes as latin-1, NULs
    dropped, line splices joined, ``%:`` and ``??=`` as ``#``."""
    with open(path, "rb") as f:
        t = f.read(READ_CAP).decode("latin-1").replace("\0", "")
    t = re.sub(r"\\[ \t\f\v\r]*\n", "", t)
    return t.replace("%:", "#").replace("??=", "#")


def findings(pristine: Iterable[str]) -> Iterator[str]:
    """``<file>: #<kind> <name>`` for each directive of a non-pristine regular file under the current folder
    (in sorted order; symlinks passed over) that names a switch or an identifier of the pristine sources."""
    pristine = set(pristine)
    names = set()
    for p in pristine:
        if SOURCE.search(p) and os.path.isfile(p) and not os.path.islink(p):
            names.update(IDENTIFIER.findall(text(p)))
    for top, dirs, files in os.walk("."):
        dirs.sort()
        for f in sorted(files):
            p = os.path.relpath(os.path.join(top, f))
            if p in pristine or os.path.islink(p) or not os.path.isfile(p):
                continue
            for kind, name in DIRECTIVE.findall(text(p)):
                if name in names or SWITCHES.match(name):
                    yield f"{p}: #{kind} {name}"


def main(argv: list[str]) -> None:
    """``[PRISTINE_FILE ...]``: print every finding in the current folder."""
    for line in findings(argv):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
