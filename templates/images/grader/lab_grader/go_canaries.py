"""Go check.sh, as root before any graded code: the canary tests, written into the task's test files, and their
ids, written to a manifest only root can read (the host decides with it: rules/grade.py, Canaries).

A solution cannot tell the canaries from the exercise's own tests by their names or their place (issue 19):

- a *failing* and a *passing* canary: test functions of the exercise's own test file (the one whose ``func
  TestXxx(t *testing.T)`` run its cases), at a random place among its functions, named as its tests are
  (``TestEncodeSpaces``: a walk over the word pairs of its test names and case descriptions), comparing two
  numbers with ``got != want`` and ``t.Fatalf`` as the tests do. They are compiled into the same test binary as
  the solution and the tests, so a solution that ends the process early or rewrites the report loses them;
- up to two *mutants*: copies of entries of the exercise's case tables (``var testCases = []struct{...}{...}``)
  under a fresh description and with the expected field changed, at a random place in the same table. An
  honest solution fails such a copy wherever it passes the original (same inputs, another expected value); a
  result that compares equal to anything, or a test run that lets failures through, passes both: the host calls
  that ``tampered``.

An entry is copied only when its copy's changed comparison surely runs whenever the original case passes: the
table is used by exactly one test function, as ``for _, tc := range table { t.Run(tc.description, func(t
*testing.T) { ... }) }`` and nothing else (benchmarks aside, which go test does not run); in that subtest the
first statement that reads ``tc.expected`` is ``if [init;] got != tc.expected {`` (or ``tc.expected != got``, or
``!reflect.DeepEqual(got, tc.expected)``) with no else, whose block starts with ``t.Fatal``/``t.Error``-like call;
no statement before it can end the subtest early (return, skip, defer, goto, ...); the description field is read
nowhere else in it; the entry's description is plain printable ASCII, unique in the table; its expected value is
one literal: an integer, a string, true/false, or (compared with reflect.DeepEqual) a slice literal with elements.
Anything else, or a test file this cannot read, leaves the table alone: the plain canaries are still written.
Go prints a subtest as ``TestX/its_description`` (spaces as ``_``): the ids this writes.

    python3 -I -m lab_grader.go_canaries TEST_FILE... CANARY_FAIL CANARY_PASS [MANIFEST]

CANARY_FAIL and CANARY_PASS (fresh random tokens, rules/grade.py: canary_tokens) seed the draw and appear in no
file; the TEST_FILEs (the task's ``*_test.go``) are rewritten in place, and a file of its own (named from the
tests' words) holds the plain canaries only when no test file imports "testing" as it is. MANIFEST (JSON:
``{"fail": [ids], "pass": [ids], "originals": {mutant id: test id}, "match": "id"}``, rules/grade.py:
canaries_of) is written last.
"""
from __future__ import annotations

import json
import os
import random
import re
import sys

MUTANTS = 2  # copies with a changed expected value, at most, per grading
FALLBACK_WORDS = ("value", "case", "result", "input", "empty", "single", "several")
FAILS = ("Fatal", "Fatalf", "Error", "Errorf", "Fail", "FailNow")
# identifiers that may end a subtest (or a test) before a later statement runs, or run code after it
ENDERS = frozenset({"return", "goto", "break", "continue", "defer", "go", "select", "panic", "recover", "Skip",
                    "Skipf", "SkipNow", "Exit", "Goexit", "Parallel", "Cleanup", "Helper"})
# a newline ends a statement after these (the Go spec's semicolon rule)
_ENDS_LINE = {"ident", "int", "float", "imag", "rune", "string", "raw"}

_TOKEN = re.compile(r"""
    (?P<nl>\n)
  | (?P<space>[ \t\r\f]+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<raw>`[^`]*`)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<rune>'(?:[^'\\\n]|\\.)+')
  | (?P<float>(?:\d[\d_]*\.[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?i?|\d[\d_]*[eE][+-]?\d+i?)
  | (?P<int>0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\d[\d_]*)
  | (?P<ident>[^\W\d]\w*)
  | (?P<op>\.\.\.|<<=|>>=|&\^=|&&|\|\||<-|\+\+|--|==|!=|<=|>=|:=|\+=|-=|\*=|/=|%=|&=|\|=|\^=|<<|>>|&\^
           |[-+*/%&|^<>=!()\[\]{},;.:~])
""", re.X | re.S)


class Odd(ValueError):
    """A test file this writer does not read as it expects (it then leaves the tables alone)."""


class Tok:
    __slots__ = ("kind", "text", "start", "end")

    def __init__(self, kind: str, text: str, start: int, end: int):
        self.kind, self.text, self.start, self.end = kind, text, start, end

    def __repr__(self):
        return f"{self.kind}:{self.text!r}"


def tokens(source: str) -> list[Tok]:
    """The tokens of Go ``source`` (comments and spaces left out; a newline that ends a statement kept as a
    ``;`` token whose text is empty). Raises Odd on a character no Go token starts with."""
    out: list[Tok] = []
    pos = 0
    while pos < len(source):
        m = _TOKEN.match(source, pos)
        if m is None:
            raise Odd(f"no Go token at offset {pos}")
        kind, text = m.lastgroup, m.group()
        if kind == "comment" and "\n" in text:
            kind, text = "nl", "\n"
        if kind == "nl":
            last = out[-1] if out else None
            if last is not None and (last.kind in _ENDS_LINE or last.text in (
                    "break", "continue", "fallthrough", "return", "++", "--", ")", "]", "}")):
                out.append(Tok("op", ";", m.start(), m.start()))
        elif kind not in ("space", "comment"):
            out.append(Tok(kind, text, m.start(), m.end()))
        pos = m.end()
    return out


def closing(toks: list[Tok], i: int) -> int:
    """The index of the bracket closing the one at ``toks[i]``; Odd when there is none."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    for j in range(i, len(toks)):
        t = toks[j].text
        if toks[j].kind != "op":
            continue
        if t in pairs:
            stack.append(pairs[t])
        elif t in (")", "]", "}"):
            if not stack or stack.pop() != t:
                raise Odd("unbalanced brackets")
            if not stack:
                return j
    raise Odd("unclosed bracket")


def split_top(toks: list[Tok], sep: str) -> list[list[Tok]]:
    """``toks`` cut at each ``sep`` outside brackets (empty parts left out)."""
    parts, cur, depth = [], [], 0
    for t in toks:
        if t.kind == "op" and t.text in "([{":
            depth += 1
        elif t.kind == "op" and t.text in ")]}":
            depth -= 1
        if depth == 0 and t.kind == "op" and t.text == sep:
            if cur:
                parts.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        parts.append(cur)
    return parts


def texts(toks: list[Tok]) -> list[str]:
    return [t.text for t in toks]


def functions(toks: list[Tok]) -> list[tuple[str, int, int, int]]:
    """The top-level functions: ``(name, index of "func", index of the body's "{", index of its "}")``
    (methods have a receiver and are left out)."""
    found, i, depth = [], 0, 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "op" and t.text in "([{":
            depth += 1
        elif t.kind == "op" and t.text in ")]}":
            depth -= 1
        elif depth == 0 and t.text == "func" and i + 2 < len(toks) and toks[i + 1].kind == "ident" \
                and toks[i + 2].text in ("(", "["):
            j = closing(toks, i + 2)
            while j + 1 < len(toks) and toks[j + 1].text != "{":  # the results, up to the body
                j = closing(toks, j + 1) if toks[j + 1].text in "([" else j + 1
                if toks[j].text == ";":
                    break
            if j + 1 < len(toks) and toks[j + 1].text == "{":
                end = closing(toks, j + 1)
                found.append((toks[i + 1].text, i, j + 1, end))
                i = end + 1
                continue
        i += 1
    return found


def is_test_name(name: str) -> bool:
    return name.startswith("Test") and name != "TestMain" and (len(name) == 4 or not name[4].islower())


def words_of(name: str) -> list[str]:
    """The words of a test function's name after ``Test`` (``TestEncodeSpaces`` → Encode, Spaces) or of a
    case description (``"only a single book"`` → Only, A, Single, Book): capitalized, letters and digits."""
    if " " in name or not name.startswith("Test"):
        return [w[:1].upper() + w[1:].lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", name)]
    return re.findall(r"[A-Z0-9][a-z0-9]*|[a-z][a-z0-9]*", name[4:].replace("_", ""))


def walk(rnd: random.Random, sequences: list[list[str]], low: int = 2, high: int = 5) -> list[str]:
    """A walk along the word pairs ``sequences`` hold: from one's first word, each next word one that follows
    the current one somewhere; ``low`` to ``high`` words (fewer only when the walk ends)."""
    follows: dict[str, list[str]] = {}
    for seq in sequences:
        for a, b in zip([""] + seq, seq + [""]):
            follows.setdefault(a, []).append(b)
    parts, word = [], rnd.choice(follows.get("") or [""])
    while word and len(parts) < high and word not in parts:
        parts.append(word)
        word = rnd.choice(follows.get(word) or [""])
        if not word and len(parts) < low:
            word = rnd.choice([w for seq in sequences for w in seq if w not in parts] or [""])
    return parts


def fresh_test_name(rnd: random.Random, sequences: list[list[str]], taken: set[str], tests: set[str]) -> str:
    """A test function name made of the tests' words (``Test`` + 2 to 5 capitalized words): none of ``taken``
    (every word of the test files), neither a part of one of ``tests`` (the test functions' names and the
    canaries drawn before) nor one of them a part of it; added to both."""
    seqs = [s for s in sequences if s]
    pool = list(dict.fromkeys(w for s in seqs for w in s))
    if len(pool) < 6:  # (a test name alone, ``TestRoll``, is a part of every name starting with its word)
        pool += [w.title() for w in FALLBACK_WORDS if w.title() not in pool]
    for attempt in range(300):
        parts = walk(rnd, seqs) if attempt < 150 and seqs else rnd.sample(pool, min(len(pool), rnd.choice(
            (2, 3, 3, 4))))
        name = "Test" + "".join(p[:1].upper() + p[1:] for p in parts)
        if attempt > 250:
            name += str(rnd.randint(2, 99))
        if len(parts) >= 2 and name not in taken and not any(name in t or t in name for t in tests):
            taken.add(name)
            tests.add(name)
            return name
    raise ValueError("no fresh test name could be drawn")


def subtest_id(description: str) -> str:
    """The name go test prints for a subtest of this (printable ASCII) description: spaces as ``_``."""
    return description.replace(" ", "_")


def fresh_description(rnd: random.Random, descriptions: list[str], taken: set[str]) -> str:
    """A case description made of the table's own descriptions' words, as they write them (first word
    capitalized when theirs are); its subtest id is none of ``taken`` nor a part of one nor has one as a part;
    that id is added to ``taken``."""
    seqs = [re.findall(r"[A-Za-z][A-Za-z0-9]*", d) for d in descriptions]
    seqs = [s for s in seqs if s]
    capital = sum(d[:1].isupper() for d in descriptions) * 2 > len(descriptions)
    pool = list(dict.fromkeys(w.lower() for s in seqs for w in s)) or list(FALLBACK_WORDS)
    if len(pool) < 2:
        pool += [w for w in FALLBACK_WORDS if w not in pool]
    for attempt in range(300):
        parts = walk(rnd, seqs, 2, 6) if attempt < 150 and seqs else rnd.sample(pool, min(len(pool), rnd.choice(
            (2, 3, 4))))
        parts = [p.lower() if p[1:].islower() or len(p) == 1 else p for p in parts]
        if attempt > 250:
            parts.append(str(rnd.randint(2, 99)))
        text = " ".join(parts)
        text = text[:1].upper() + text[1:] if capital else text
        key = subtest_id(text).lower()  # (a description that differs from one by case only would stand out)
        if len(parts) >= 2 and not any(key in t.lower() or t.lower() in key for t in taken):
            taken.add(key)
            return text
    raise ValueError("no fresh description could be drawn")


def string_value(tok: Tok) -> str | None:
    """The value of a string literal token when it is plain printable ASCII without escapes, else None."""
    if tok.kind != "string" or "\\" in tok.text:
        return None
    value = tok.text[1:-1]
    return value if all(" " <= c <= "~" for c in value) else None


class Table:
    """A case table: ``var NAME = []struct{...}{...}`` (or ``NAME := ...``, or ``[]caseType{...}`` with the
    struct declared by ``type caseType struct``) in one file; ``fields`` its struct's field names in order,
    ``entries`` each entry's ``{field: tokens of its value}`` and token span."""

    def __init__(self, file: int, name: str, fields: list[str], open_: int, close: int, entries: list):
        self.file, self.name, self.fields, self.open, self.close, self.entries = (
            file, name, fields, open_, close, entries)


def struct_fields(toks: list[Tok], i: int) -> list[str]:
    """The field names of the struct body whose ``{`` is ``toks[i]`` (one name list a line); Odd on an
    embedded field."""
    names = []
    for line in split_top(toks[i + 1:closing(toks, i)], ";"):
        idents = []
        for t in line:
            if t.kind == "ident" and (not idents or idents[-1] == ","):
                idents.append(t.text)
            elif t.text == "," and idents:
                idents.append(",")
            else:
                break
        got = [x for x in idents if x != ","]
        if len(line) < 2 or not got:
            raise Odd("an embedded field")
        names += got
    return names


def tables_of(file: int, toks: list[Tok], types: dict[str, list[str]]) -> list[Table]:
    """The case tables of one file (see Table)."""
    found = []
    for i in range(len(toks) - 4):
        if toks[i].kind != "ident" or toks[i + 1].text not in ("=", ":=") or toks[i + 2].text != "[" \
                or toks[i + 3].text != "]":
            continue
        if i > 0 and toks[i - 1].text not in ("var", ";", "{", "("):
            continue
        j = i + 4
        try:
            if toks[j].text == "struct" and toks[j + 1].text == "{":
                fields = struct_fields(toks, j + 1)
                j = closing(toks, j + 1) + 1
            elif toks[j].kind == "ident" and toks[j].text in types:
                fields = types[toks[j].text]
                j += 1
            else:
                continue
            if toks[j].text != "{":
                continue
            end = closing(toks, j)
            entries = []
            for part in split_top(toks[j + 1:end], ","):
                part = [t for t in part if t.text != ";"]
                if not part or part[0].text != "{" or closing(part, 0) != len(part) - 1:
                    raise Odd("an entry that is not a composite literal")
                values: dict[str, list[Tok]] = {}
                items = split_top([t for t in part[1:-1]], ",")
                keyed = all(len(it) > 2 and it[0].kind == "ident" and it[1].text == ":" for it in items)
                if keyed:
                    for it in items:
                        values[it[0].text] = it[2:]
                elif len(items) == len(fields):
                    values = dict(zip(fields, items))
                else:
                    raise Odd("an entry neither keyed nor complete")
                entries.append((values, part[0], part[-1]))
            found.append(Table(file, toks[i].text, fields, j, end, entries))
        except (Odd, IndexError):
            continue
    return found


def named_structs(all_toks: list[list[Tok]]) -> dict[str, list[str]]:
    """``type caseType struct {...}`` declarations of the files: type name → field names."""
    types = {}
    for toks in all_toks:
        for i in range(len(toks) - 3):
            if toks[i].text == "type" and toks[i + 1].kind == "ident" and toks[i + 2].text == "struct" \
                    and toks[i + 3].text == "{":
                try:
                    types[toks[i + 1].text] = struct_fields(toks, i + 3)
                except (Odd, IndexError):
                    pass
    return types


def _statements(toks: list[Tok]) -> list[list[Tok]]:
    """The statements of a block's tokens: cut at ``;`` outside brackets, but an ``if``/``for``/``switch``
    statement (whose header may hold ``;``) runs to the end of its block, and of its else blocks."""
    out, i = [], 0
    while i < len(toks):
        if toks[i].text == ";":
            i += 1
            continue
        if toks[i].text in ("if", "for", "switch", "select"):
            j = i
            while True:
                while toks[j].text != "{":  # the header (a composite literal in it sits in parentheses)
                    j = closing(toks, j) + 1 if toks[j].text in ("(", "[") else j + 1
                j = closing(toks, j)
                if j + 1 < len(toks) and toks[j + 1].text == "else":
                    j += 2
                    continue
                break
            out.append(toks[i:j + 1])
            i = j + 1
            continue
        depth, j = 0, i
        while j < len(toks) and not (depth == 0 and toks[j].text == ";"):
            depth += toks[j].text in ("(", "[", "{")
            depth -= toks[j].text in (")", "]", "}")
            j += 1
        out.append(toks[i:j])
        i = j
    return out


def _reads(stmt: list[Tok], var: str, field: str) -> bool:
    return any(a.text == var and b.text == "." and c.text == field for a, b, c in zip(stmt, stmt[1:], stmt[2:]))


def _is_selector(toks: list[Tok], var: str, field: str) -> bool:
    return texts(toks) == [var, ".", field]


def comparison(stmt: list[Tok], var: str, field: str) -> str | None:
    """``"!="`` or ``"deep"`` when ``stmt`` is ``if [init;] X != var.field {t.Fatal...}`` (either side) or
    ``if [init;] !reflect.DeepEqual(X, var.field) {t.Fatal...}`` with no else and X not reading the field;
    else None."""
    if not stmt or stmt[0].text != "if" or stmt[-1].text != "}" or any(t.text == "else" for t in stmt):
        return None
    k = len(stmt) - 1
    depth = 0
    for j in range(len(stmt) - 1, 0, -1):  # the block's opening brace
        t = stmt[j].text
        if t in (")", "]", "}"):
            depth += 1
        elif t in ("(", "[", "{"):
            depth -= 1
            if depth == 0:
                k = j
                break
    if closing(stmt, k) != len(stmt) - 1:
        return None
    head, block = stmt[1:k], stmt[k + 1:-1]
    parts = split_top(head, ";")
    if len(parts) > 2 or not parts:
        return None
    cond = parts[-1]
    if len(parts) == 2 and _reads(parts[0], var, field):
        return None
    body = _statements(block)
    if not body or len(body[0]) < 4 or body[0][0].text != "t" or body[0][1].text != "." \
            or body[0][2].text not in FAILS or body[0][3].text != "(":
        return None
    kind, sides = None, None
    ops = [t for t in split_top(cond, ",")[0]] if len(split_top(cond, ",")) == 1 else []
    depth, top = 0, []
    for j, t in enumerate(ops):
        if t.text in "([{":
            depth += 1
        elif t.text in ")]}":
            depth -= 1
        elif depth == 0 and t.kind == "op" and t.text in ("!=", "==", "&&", "||", "<", ">", "<=", ">="):
            top.append(j)
    if len(top) == 1 and ops[top[0]].text == "!=":
        kind, sides = "!=", (ops[:top[0]], ops[top[0] + 1:])
    elif not top and texts(cond[:5]) == ["!", "reflect", ".", "DeepEqual", "("] and closing(cond, 4) == len(
            cond) - 1:
        args = split_top(cond[5:-1], ",")
        if len(args) == 2:
            kind, sides = "deep", (args[0], args[1])
    if kind is None:
        return None
    a, b = sides
    if _is_selector(a, var, field) and not _reads(b, var, field) and b:
        return kind
    if _is_selector(b, var, field) and not _reads(a, var, field) and a:
        return kind
    return None


def subtest_loop(toks: list[Tok], body: tuple[int, int], table: str):
    """``(var, description field, expected field, kind)`` for the test function body ``toks[body[0]:body[1]]``
    when it runs ``table`` only as a ``for _, var := range table { t.Run(var.desc, func(t *testing.T) {...}) }``
    whose subtest compares its expected field as ``comparison`` says; else None."""
    inner = toks[body[0] + 1:body[1]]
    loops = [j for j in range(len(inner) - 6) if texts(inner[j:j + 6])[:1] == ["for"]
             and texts(inner[j:j + 7])[1:] == ["_", ",", inner[j + 3].text, ":=", "range", table]]
    uses = [j for j, t in enumerate(inner) if t.text == table  # (a table of the function's own: its declaration)
            and not (j + 2 < len(inner) and inner[j + 1].text in (":=", "=") and inner[j + 2].text == "[")]
    if len(loops) != 1 or len(uses) != 1:
        return None
    j = loops[0]
    var = inner[j + 3].text
    if inner[j + 7].text != "{":
        return None
    end = closing(inner, j + 7)
    stmts = _statements(inner[j + 8:end])
    if stmts and texts(stmts[0]) == [var, ":=", var]:
        stmts = stmts[1:]
    if len(stmts) != 1:
        return None
    run = stmts[0]
    shape = ["t", ".", "Run", "(", var, "."]
    if texts(run[:6]) != shape or len(run) < 16 or run[6].kind != "ident" or run[7].text != "," \
            or texts(run[8:15]) != ["func", "(", "t", "*", "testing", ".", "T"] or run[15].text != ")" \
            or run[16].text != "{" or closing(run, 3) != len(run) - 1:
        return None
    desc = run[6].text
    stop = closing(run, 16)
    if texts(run[stop + 1:]) != [")"]:
        return None
    sub = run[17:stop]
    outside = inner[:j + 8] + inner[end:] + run[:17]  # what runs around the subtest, in the test function
    if any(t.text in ENDERS for t in outside) or _reads(sub, var, desc):
        return None
    seen: set[str] = set()  # fields a statement before has read: only the first statement reading one counts
    for stmt in _statements(sub):
        if any(t.text in ENDERS for t in stmt):
            return None
        fields_read = {c.text for a, b, c in zip(stmt, stmt[1:], stmt[2:]) if a.text == var and b.text == "."}
        for field in sorted(fields_read - seen - {desc}):
            kind = comparison(stmt, var, field)
            if kind is not None:
                return var, desc, field, kind
        seen |= fields_read
    return None


def mutated(rnd: random.Random, value: list[Tok], kind: str, source: str, words: list[str]) -> str | None:
    """Go source for a value surely unequal (under ``kind``: ``!=`` or reflect.DeepEqual) to the literal
    ``value``, or None when it is no literal this knows to change."""
    t = texts(value)
    if len(value) == 1 and value[0].kind == "int" or len(value) == 2 and t[0] == "-" and value[1].kind == "int":
        try:
            n = int(value[-1].text.replace("_", ""), 0) * (-1 if len(value) == 2 else 1)
        except ValueError:
            return None
        if abs(n) > 2 ** 31:
            return None
        return str(n - 1 if n > 0 else n + 1)  # toward zero or up from it: in range for any integer type
    if len(value) == 1 and t[0] in ("true", "false"):
        return "false" if t[0] == "true" else "true"
    if len(value) == 1 and value[0].kind == "string":
        plain = string_value(value[0])
        if plain is None:
            return value[0].text[:-1] + rnd.choice("aeiourstn") + '"'
        if not plain:
            return '"' + rnd.choice(words or list(FALLBACK_WORDS)).lower() + '"'
        i = rnd.randrange(len(plain))
        pool = sorted(set(c for c in plain + "aeiourstn" if c.isalnum()) - {plain[i]})
        return '"' + plain[:i] + rnd.choice(pool) + plain[i + 1:] + '"'
    if len(value) == 1 and value[0].kind == "raw":
        return value[0].text[:-1] + rnd.choice("aeiourstn") + "`"
    if kind == "deep" and t[:2] == ["[", "]"] and t[-1] == "}":
        k = t.index("{") if "{" in t else -1
        if k < 0 or closing(value, k) != len(value) - 1:
            return None
        items = split_top(value[k + 1:-1], ",")
        items = [it for it in items if texts(it) != [";"]]
        if not items:
            return None
        keep = items[:-1] if rnd.random() < 0.5 or len(items) == 1 else items[1:]
        head = source[value[0].start:value[k].end]
        return head + ", ".join(source[it[0].start:it[-1].end] for it in keep) + "}"
    return None


def constrained(source: str) -> bool:
    """Whether a Go file carries a build constraint (``//go:build``, ``// +build``) before its package clause."""
    head = source.split("\npackage ", 1)[0] if not source.startswith("package ") else ""
    return bool(re.search(r"^\s*//\s*(go:build|\+build)\b", head, re.M))


# a file name ending so (before _test.go) is built for one system or architecture only (go help buildconstraint)
_SYSTEM_SUFFIX = re.compile(r"_(aix|android|darwin|dragonfly|freebsd|hurd|illumos|ios|js|linux|nacl|netbsd|openbsd|"
                            r"plan9|solaris|wasip1|windows|zos|386|amd64|arm|arm64|loong64|mips|mipsle|mips64|"
                            r"mips64le|ppc64|ppc64le|riscv64|s390x|wasm)(_test)?\.go$")


def with_canaries(sources: list[str], fail: str, ok: str, usable: list[bool] | None = None,
                  others: tuple[str, ...] = ()) -> tuple[list[str], dict, str | None]:
    """``sources`` (the task's test files') with the canaries added, the manifest naming them (``{"fail":
    [ids], "pass": [ids], "originals": {mutant: original}, "match": "id"}``), and the source of a test file of
    its own holding the plain canaries when no test file could take them (else None). Seeded by ``fail`` and
    ``ok``; never raises on an odd file (its tables are then left alone). ``usable``: per file, False when its
    name says it is built for one system only (``_linux_test.go``): no canary goes there. ``others``: the
    sources of the package's other files (the solution's): no canary takes a name they use."""
    rnd = random.Random(f"{fail}:{ok}")
    all_toks: list[list[Tok] | None] = []
    for s, use in zip(sources, usable or [True] * len(sources)):
        try:  # a file with a build constraint may not be compiled: no canary goes there
            all_toks.append(tokens(s) if use and not constrained(s) else None)
        except Odd:
            all_toks.append(None)
    taken = {m for s in list(sources) + list(others) for m in re.findall(r"[A-Za-z_]\w*", s)}
    funcs = []
    for f, toks in enumerate(all_toks):
        try:
            funcs.append(functions(toks) if toks is not None else [])
        except (Odd, IndexError, RecursionError):
            funcs.append([])
            all_toks[f] = None
    test_names = [name for fs in funcs for name, *_ in fs if is_test_name(name)]
    descriptions: list[str] = []
    sequences = [words_of(n) for n in test_names]
    manifest: dict = {"fail": [], "pass": [], "originals": {}, "match": "id"}
    edits: list[list[tuple[int, str]]] = [[] for _ in sources]  # per file: (offset, text to insert there)
    try:
        mutants = _mutants(rnd, sources, all_toks, funcs, descriptions)
    except (Odd, IndexError, ValueError, RecursionError):
        mutants = []
    sequences += [words_of(d) for d in descriptions]
    for file, at, text, mutant, original in mutants:
        edits[file].append((at, text))
        manifest["fail"].append(mutant)
        manifest["originals"][mutant] = original
    tests = {n for n in test_names if len(n) > 4}  # (a function named Test alone is a part of every name)
    bad, good = fresh_test_name(rnd, sequences, taken, tests), fresh_test_name(rnd, sequences, taken, tests)
    n, m = rnd.randrange(2, 997), rnd.randrange(2, 997)
    style = rnd.choice(("got %d, want %d", "got: %d, want: %d", "= %d, want %d"))
    blocks = [f"func {name}(t *testing.T) {{\n\tif got, want := {x}, {y}; got != want {{\n"
              f"\t\tt.Fatalf(\"{style}\", got, want)\n\t}}\n}}\n" for name, x, y in ((bad, n, n + 1), (good, m, m))]
    manifest["fail"].insert(0, bad)
    manifest["pass"].append(good)
    home = None
    for f, toks in enumerate(all_toks):
        if toks is None or not any(is_test_name(name) for name, *_ in funcs[f]):
            continue
        try:
            if _imports_testing(toks):
                home = f
                break
        except (Odd, IndexError):
            continue
    own = None
    if home is None:
        package = next((mm.group(1) for s in sources for mm in [re.search(r"^package\s+(\w+)", s, re.M)] if mm),
                       "main")
        own = f"package {package}\n\nimport \"testing\"\n\n" + "\n".join(blocks)
    else:
        # before a function (and its doc comment), never inside the token before it
        places = [max(_above_comments(sources[home], all_toks[home][i].start), all_toks[home][i - 1].end if i else 0)
                  for _, i, _, _ in funcs[home]]
        places.append(len(sources[home]))
        for block in blocks:
            at = rnd.choice(places)
            text = block + "\n" if at < len(sources[home]) else "\n" + block
            edits[home].append((at, text))
    out = []
    for s, ed in zip(sources, edits):
        for at, text in sorted(ed, key=lambda e: e[0], reverse=True):
            s = s[:at] + text + s[at:]
        out.append(s)
    return out, manifest, own


def _above_comments(source: str, at: int) -> int:
    """The start of the line ``at`` (a ``func``) is on, or of the comment lines right above it (its doc)."""
    at = source.rfind("\n", 0, at) + 1
    while at > 0:
        before = source.rfind("\n", 0, at - 1) + 1
        if not source[before:at].lstrip().startswith("//"):
            break
        at = before
    return at


def _imports_testing(toks: list[Tok]) -> bool:
    """Whether the file imports "testing" under its own name (``import "testing"`` or in a group)."""
    for i, t in enumerate(toks):
        if t.text != "import":
            continue
        if toks[i + 1].text == "(":
            spec = split_top(toks[i + 2:closing(toks, i + 1)], ";")
        else:
            spec = [toks[i + 1:i + 2]]
        if any(texts(s) == ['"testing"'] for s in spec):
            return True
    return False


def _mutants(rnd, sources, all_toks, funcs, descriptions):
    """The mutant entries to insert: ``(file, offset, text, mutant id, original id)``; the descriptions of
    every table a test runs as subtests are added to ``descriptions``."""
    types = named_structs([t for t in all_toks if t is not None])
    tables = [tb for f, toks in enumerate(all_toks) if toks is not None for tb in tables_of(f, toks, types)]
    pool = []
    for tb in tables:  # the words of every table's descriptions, for the plain canaries' names too
        for values, _, _ in tb.entries:
            d = values.get("description") or values.get("name") or []
            if len(d) == 1 and string_value(d[0]):
                descriptions.append(string_value(d[0]))
    for tb in tables:
        users = [(f, name, open_, close) for f, fs in enumerate(funcs) for name, _, open_, close in fs
                 if any(t.text == tb.name for t in all_toks[f][open_:close + 1])]
        tests = [u for u in users if is_test_name(u[1])]
        others = [u for u in users if not is_test_name(u[1]) and not u[1].startswith("Benchmark")]
        if len(tests) != 1 or others:
            continue
        f, test, open_, close = tests[0]
        found = subtest_loop(all_toks[f], (open_, close), tb.name)
        if found is None:
            continue
        var, desc, field, kind = found
        descs = []
        for values, _, _ in tb.entries:
            d = values.get(desc)
            descs.append(string_value(d[0]) if d and len(d) == 1 else None)
        ids = [subtest_id(d) for d in descs if d is not None]
        for k, (values, first, last) in enumerate(tb.entries):
            d = descs[k]
            if d is None or not d or ids.count(subtest_id(d)) != 1 or any(c in d for c in "#/") \
                    or field not in values or desc not in values:
                continue
            pool.append((tb, test, k, d, field, kind, descs, ids))
    rnd.shuffle(pool)
    chosen, used = [], set()
    taken_ids = {i for p in pool for i in p[7]}
    for tb, test, k, d, field, kind, descs, ids in pool:
        if len(chosen) == MUTANTS:
            break
        if (tb.file, tb.name, k) in used:
            continue
        source = sources[tb.file]
        values, first, last = tb.entries[k]
        words = [w for x in descs if x for w in re.findall(r"[a-z]+", x.lower())]
        new = mutated(rnd, values[field], kind, source, words)
        if new is None:
            continue
        fresh = fresh_description(rnd, [x for x in descs if x], taken_ids)
        dtok = values[desc][0]
        vals = values[field]
        text = source[first.start:last.end]
        base = first.start
        spans = sorted([(dtok.start - base, dtok.end - base, '"' + fresh + '"'),
                        (vals[0].start - base, vals[-1].end - base, new)], reverse=True)
        for a, b, rep in spans:
            text = text[:a] + rep + text[b:]
        # a place among the entries: before one (with its indentation) or after the last
        places = [e[1].start for e in tb.entries]
        at = rnd.choice(places)
        line_start = source.rfind("\n", 0, at) + 1
        indent = source[line_start:at] if not source[line_start:at].strip() else "\t"
        chosen.append((tb.file, at, text + ",\n" + indent, f"{test}/{subtest_id(fresh)}", f"{test}/{subtest_id(d)}"))
        used.add((tb.file, tb.name, k))
    return chosen


def main(argv: list[str]) -> None:
    """``TEST_FILE... CANARY_FAIL CANARY_PASS MANIFEST``: add the canaries to the TEST_FILEs (or a file of
    their own beside the first), name them in MANIFEST."""
    if len(argv) < 3:
        raise SystemExit("usage: go_canaries TEST_FILE... CANARY_FAIL CANARY_PASS MANIFEST")
    paths, fail, ok, manifest_path = argv[:-3], argv[-3], argv[-2], argv[-1]
    sources = []
    for p in paths:
        with open(p, encoding="utf-8", errors="surrogateescape") as f:
            sources.append(f.read())
    usable = [not _SYSTEM_SUFFIX.search(os.path.basename(p)) for p in paths]
    folder = os.path.dirname(paths[0]) if paths else "."
    others = []
    for name in sorted(os.listdir(folder or ".")):  # the solution's files: its names are not the canaries'
        path = os.path.join(folder, name)
        if name.endswith(".go") and path not in paths and os.path.isfile(path) and not os.path.islink(path):
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                others.append(f.read(1_000_000))
    out, manifest, own = with_canaries(sources, fail, ok, usable, tuple(others))
    for p, before, after in zip(paths, sources, out):
        if after != before:
            with open(p, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(after)
    if own is not None:
        rnd = random.Random(f"{ok}:{fail}")
        names = set(os.listdir(folder or "."))
        words = [w.lower() for s in sources for w in re.findall(r"func Test([A-Z]\w*)", s)] or list(FALLBACK_WORDS)
        name = None
        for attempt in range(100):
            stem = "_".join(rnd.sample(words + list(FALLBACK_WORDS), 2))
            if f"{stem}_test.go" not in names:
                name = f"{stem}_test.go"
                break
        fd = os.open(os.path.join(folder, name or "cases_more_test.go"),
                     os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(own)
    # root's alone (mode 600): the tester must not learn the canaries' names from it
    fd = os.open(manifest_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(manifest, f)


if __name__ == "__main__":
    main(sys.argv[1:])
