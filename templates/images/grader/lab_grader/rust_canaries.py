"""Rust check.sh, as root before any graded code: the canary tests, written into the task's first test target
(``tests/<target>.rs``), and their names, written to a manifest only root can read (the host decides with it:
rules/grade.py, Canaries).

A solution cannot tell the canaries from the exercise's own tests by their names or their place (issue 19): each
is a ``#[test] fn`` among the exercise's own tests (in the file, or in one of its ``mod`` blocks that holds tests,
right before one of them or at that block's end), under a fresh name made of the words of that scope's own test
names (``encode_with_spaces``). They are:

- a *failing* and a *passing* canary comparing numbers with the same ``assert_eq!`` as the tests;
- up to two *mutants*: copies of the exercise's own tests with one expected value changed (in the copied test's
  own ``mod``), which an honest solution fails wherever it passes the original test. A result whose
  ``PartialEq`` says yes to anything passes both the test and its copy: the host calls that ``tampered``.

A test is copied only when the changed assertion surely runs whenever the original test passes: an
``assert_eq!(..)`` statement of the test function's own body comparing a literal (an integer, a string, a char,
a bool), or a name bound once in that body (``let expected = "...";``) to one, with a computed value (never
another literal). Never a test with other attributes than ``#[test]`` / ``#[ignore]`` (``should_panic``, ``cfg``),
with a return type, or whose body could leave early or make items (``return``, ``?``, ``break``, ``impl``,
macros defined); never in a file that touches shared state a copy running beside its test could disturb
(files, environment, processes, statics).

Anything the light Rust tokenizer here cannot follow (an unclosed comment or string, unbalanced brackets) leaves
the file's tests unplaced: the plain canaries then go at the file's end, still named from its test names' words.

    python3 -I -m lab_grader.rust_canaries TEST_FILE [TEST_FILE ...] CANARY_FAIL CANARY_PASS [MANIFEST]

Only the first TEST_FILE (``tests/<target>.rs``: its test ids are ``<target>::<mod path>::<fn>``, as
rules/reports.py's parse_libtest_json writes them) gets canaries. CANARY_FAIL and CANARY_PASS (fresh random
tokens, rules/grade.py: canary_tokens) seed the draw and appear in no file; MANIFEST (JSON: ``{"fail": [ids],
"pass": [ids], "originals": {mutant id: test id}, "match": "id"}``, rules/grade.py: canaries_of) is written
unless it is ``-``.
"""
from __future__ import annotations

import json
import os
import random
import re
import sys
from dataclasses import dataclass, field

MUTANTS = 2  # copies with a changed expected value, at most, per grading
FALLBACK_WORDS = ("value", "case", "result", "input", "empty", "single", "several")
ALLOWED_ATTRS = frozenset({"test", "ignore"})
# a body holding any of these could leave before its assertion, or define what two copies cannot both define
BODY_STOPS = frozenset({"return", "break", "continue", "impl", "macro_rules", "async", "await", "yield", "?",
                        "static", "unsafe", "extern", "loop"})
# a file holding any of these may share state between a test and its copy run beside it (libtest runs tests in
# threads): no mutants there
SHARED_STATE = frozenset({"fs", "File", "OpenOptions", "env", "set_var", "remove_var", "set_current_dir",
                          "Command", "process", "TcpListener", "TcpStream", "UdpSocket", "static", "thread_local",
                          "lazy_static", "OnceLock", "OnceCell", "LazyLock", "AtomicUsize", "AtomicBool",
                          "AtomicU64", "AtomicI64", "AtomicU32", "AtomicI32", "tempfile", "TempDir", "Files",
                          "remove_file", "create_dir", "write"})
INT_SUFFIX = r"(?:[iu](?:8|16|32|64|128|size))?"
DEC_INT = re.compile(r"[0-9][0-9_]*" + INT_SUFFIX + r"$")
WORD = re.compile(r"[A-Za-z0-9]+$")
IDENT_START = re.compile(r"[A-Za-z_]")
KEYWORDS = frozenset("as break const continue crate else enum extern false fn for if impl in let loop match mod "
                     "move mut pub ref return self Self static struct super trait true type unsafe use where "
                     "while async await dyn abstract become box do final macro override priv typeof unsized "
                     "virtual yield try gen union".split())


class Unreadable(ValueError):
    """Source the tokenizer cannot follow (an unclosed comment, string or bracket)."""


@dataclass
class Tok:
    kind: str  # "ident", "lifetime", "str", "char", "num", "punct"
    text: str
    start: int  # character offsets in the source
    end: int


@dataclass
class Test:
    """A ``#[test] fn`` of the file: its name, the ``mod`` path it is in, its attributes' names, and where its
    item starts (its first attribute), its ``fn`` keyword, its name and its body's braces are (token indexes)."""
    name: str
    path: tuple[str, ...]
    attrs: list[str]
    first: int
    fn: int
    name_at: int
    open: int
    close: int
    plain: bool  # ``fn name()`` right before its body: no parameters, no return type, no generics


@dataclass
class Scope:
    """The file or one ``mod`` block: its path, where it closes (a token index; None for the file) and its tests."""
    path: tuple[str, ...]
    close: int | None
    tests: list[Test] = field(default_factory=list)


def tokenize(src: str) -> list[Tok]:
    """The tokens of Rust source ``src`` (comments and blanks left out); raise Unreadable on what cannot be
    followed: an unclosed block comment, string or char."""
    toks: list[Tok] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c.isspace():
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j + 1
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while depth:
                if j >= n:
                    raise Unreadable("an unclosed block comment")
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            i = j
        elif (m := re.compile(r'(?:b|c)?r(#*)"').match(src, i)) is not None:
            close = '"' + m.group(1)
            j = src.find(close, m.end())
            if j < 0:
                raise Unreadable("an unclosed raw string")
            toks.append(Tok("rawstr", src[i:j + len(close)], i, j + len(close)))
            i = j + len(close)
        elif c == '"' or (c in "bc" and src.startswith('"', i + 1)):
            j = i + (1 if c == '"' else 2)
            while True:
                if j >= n:
                    raise Unreadable("an unclosed string")
                if src[j] == "\\":
                    j += 2
                elif src[j] == '"':
                    break
                else:
                    j += 1
            toks.append(Tok("str", src[i:j + 1], i, j + 1))
            i = j + 1
        elif c == "'" or (c == "b" and src.startswith("'", i + 1)):
            j = i + (1 if c == "'" else 2)
            m = re.compile(r"(?:\\(?:x[0-9A-Fa-f]{2}|u\{[0-9A-Fa-f_]{1,8}\}|.)|[^\\'\n])'", re.S).match(src, j)
            if m is not None:
                toks.append(Tok("char", src[i:m.end()], i, m.end()))
                i = m.end()
            else:  # a lifetime or a label
                m = re.compile(r"[A-Za-z_]\w*").match(src, j)
                if m is None:
                    raise Unreadable("a quote that opens neither a char nor a lifetime")
                toks.append(Tok("lifetime", src[i:m.end()], i, m.end()))
                i = m.end()
        elif c.isdigit():
            m = re.compile(r"0[xob][0-9A-Fa-f_]+\w*|[0-9][0-9_]*(?:\.[0-9][0-9_]*)?(?:[eE][+-]?[0-9_]+)?\w*").match(
                src, i)
            # `1..2` and `x.0.1`: a dot followed by a dot or a name is not the number's
            text = m.group()
            toks.append(Tok("num", text, i, i + len(text)))
            i += len(text)
        elif c == "_" or c.isalpha():
            m = re.compile(r"(?:r#)?\w+").match(src, i)
            toks.append(Tok("ident", m.group(), i, m.end()))
            i = m.end()
        elif src.startswith("::", i) or src.startswith("=>", i) or src.startswith("->", i):
            toks.append(Tok("punct", src[i:i + 2], i, i + 2))
            i += 2
        else:
            toks.append(Tok("punct", c, i, i + 1))
            i += 1
    return toks


def matching(toks: list[Tok]) -> dict[int, int]:
    """Each opening bracket's index → its closing bracket's, and back; raise Unreadable when they do not pair."""
    pairs, stack = {}, []
    for k, t in enumerate(toks):
        if t.kind != "punct":
            continue
        if t.text in "([{":
            stack.append(k)
        elif t.text in ")]}":
            if not stack or "([{"[")]}".index(t.text)] != toks[stack[-1]].text:
                raise Unreadable("unbalanced brackets")
            o = stack.pop()
            pairs[o], pairs[k] = k, o
    if stack:
        raise Unreadable("an unclosed bracket")
    return pairs


def scopes_of(toks: list[Tok], pairs: dict[int, int]) -> list[Scope]:
    """The file and its ``mod`` blocks (nested ones too), each with its ``#[test]`` functions, in file order."""
    found: list[Scope] = []

    def walk(k: int, end: int, scope: Scope) -> None:
        found.append(scope)
        while k < end:
            first, attrs = k, []
            while k < end and toks[k].text == "#" and k + 1 < end and toks[k + 1].text in ("[", "!"):
                o = k + 1 if toks[k + 1].text == "[" else k + 2
                if o >= end or toks[o].text != "[":
                    return
                inner = toks[o + 1:pairs[o]]
                attrs.append(inner[0].text if inner and inner[0].kind == "ident" else "")
                k = pairs[o] + 1
            j = k
            while j < end and toks[j].text in ("pub", "crate", "const", "async", "unsafe", "extern") or (
                    j < end and toks[j].kind == "str"):
                j = pairs[j + 1] + 1 if toks[j].text == "pub" and j + 1 < end and toks[j + 1].text == "(" else j + 1
            if j >= end:
                return
            t = toks[j]
            if t.text == "mod" and j + 2 < end and toks[j + 2].text == "{":
                close = pairs[j + 2]
                walk(j + 3, close, Scope(scope.path + (toks[j + 1].text,), close))
                k = close + 1
                continue
            if t.text == "fn" and j + 1 < end and toks[j + 1].kind == "ident":
                b = j + 2
                while b < end and toks[b].text not in ("{", ";"):
                    b = pairs[b] + 1 if toks[b].text in "([" and toks[b].kind == "punct" else b + 1
                if b >= end:
                    return
                if toks[b].text == ";":
                    k = b + 1
                    continue
                if "test" in attrs and not toks[j + 1].text.startswith("r#"):
                    plain = b == j + 4 and toks[j + 2].text == "(" and toks[j + 3].text == ")"
                    scope.tests.append(Test(toks[j + 1].text, scope.path, attrs, first, j, j + 1, b, pairs[b],
                                            plain))
                k = pairs[b] + 1
                continue
            # any other item: up to its `;` or the end of its first top-level brace block
            while j < end and toks[j].text not in (";", "{"):
                j = pairs[j] + 1 if toks[j].kind == "punct" and toks[j].text in "([" else j + 1
            if j < end and toks[j].text == "{":
                j = pairs[j]
                if j + 1 < end and toks[j + 1].text == ";":
                    j += 1
            k = max(j + 1, first + 1)

    walk(0, len(toks), Scope((), None))
    return found


def words_of(names: list[str]) -> list[str]:
    """The words of test function names (``encode_with_spaces`` → encode, with, spaces), in first-seen order:
    what fresh canary names are made of. Digits-only words and words that are not plain ASCII are left out."""
    seen: dict[str, None] = {}
    for name in names:
        for w in name.split("_"):
            if WORD.match(w) and not w.isdigit():
                seen.setdefault(w, None)
    return list(seen)


def fresh_name(rnd: random.Random, names: list[str], taken: set[str]) -> str:
    """A test function name made as the scope's own test ``names`` are: a walk along the word pairs they hold
    (``encode_with_spaces`` and ``decode_all`` can give ``encode_all``), else 2 to 4 of their words; never one
    of ``taken`` (every identifier of the file: a canary must not shadow a name the tests use) nor a part of
    one (so that no line about a real test is ever taken for a canary's); added to ``taken``."""
    words = words_of(names)
    words = words if len(words) >= 2 else words + [w for w in FALLBACK_WORDS if w not in words]
    follows: dict[str, list[str]] = {}
    for name in names:
        parts = [w for w in name.split("_") if WORD.match(w)]
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
        name = "_".join(parts)
        if attempt > 250:
            name += f"_{rnd.randint(2, 99)}"
        if (len(parts) >= 2 and IDENT_START.match(name) and name not in KEYWORDS and name not in taken
                and not any(name in t for t in taken)):
            taken.add(name)
            return name
    raise ValueError("no fresh test name could be drawn")


def _literal_at(toks: list[Tok], a: int, b: int) -> tuple[int, int] | None:
    """``(first, end)`` token indexes when ``toks[a:b]`` is one literal this knows to change (a decimal integer,
    negative too; a string or byte string; a char; a bool), else None."""
    part = toks[a:b]
    if len(part) == 2 and part[0].text == "-" and part[1].kind == "num" and DEC_INT.match(part[1].text):
        return a, b
    if len(part) == 1 and (part[0].kind in ("str", "char") or part[0].text in ("true", "false")
                           or (part[0].kind == "num" and DEC_INT.match(part[0].text))):
        return a, b
    return None


def candidates(toks: list[Tok], pairs: dict[int, int], test: Test) -> list[tuple[int, int]]:
    """The literals (``(first, end)`` token indexes) of ``test`` whose change makes a copy of it that must fail
    (see the module's docstring): each is the expected value of one ``assert_eq!`` statement of its body."""
    if not test.plain or any(a not in ALLOWED_ATTRS for a in test.attrs):
        return []
    body = range(test.open + 1, test.close)
    if any(toks[k].text in BODY_STOPS and toks[k].kind in ("ident", "punct") for k in body):
        return []
    # the tokens of the body itself (depth 1): statements start after `{`, `;` or a closed block
    top, k = [], test.open + 1
    while k < test.close:
        top.append(k)
        k = pairs[k] + 1 if toks[k].kind == "punct" and toks[k].text in "([{" else k + 1
    uses: dict[str, int] = {}
    for k in body:
        if toks[k].kind == "ident":
            uses[toks[k].text] = uses.get(toks[k].text, 0) + 1
    once: dict[str, tuple[int, int]] = {}  # a name bound once to a literal, by a statement of the body
    for i, k in enumerate(top):
        if toks[k].text != "let" or (i and toks[top[i - 1]].text not in (";", "}")) or i + 1 >= len(top):
            continue
        name = toks[top[i + 1]]
        if name.kind != "ident" or name.text in KEYWORDS or uses.get(name.text) != 2:
            continue
        j = i + 2
        while j < len(top) and toks[top[j]].text not in ("=", ";"):
            j += 1
        semi = j + 1
        while semi < len(top) and toks[top[semi]].text != ";":
            semi += 1
        if j < len(top) and toks[top[j]].text == "=" and semi < len(top) and semi > j + 1:
            lit = _literal_at(toks, top[j + 1], top[semi])
            if lit is not None:
                once[name.text] = lit
    found = []
    for i, k in enumerate(top):
        if not (toks[k].text == "assert_eq" and (i == 0 or toks[top[i - 1]].text in (";", "}"))
                and i + 2 < len(top) and toks[top[i + 1]].text == "!" and toks[top[i + 2]].text == "("):
            continue
        o = top[i + 2]
        after = pairs[o] + 1
        if after < test.close and toks[after].text != ";":
            continue
        inner = range(o + 1, pairs[o])
        if any(toks[j].text == "|" or (toks[j].text == "::" and j + 1 < pairs[o] and toks[j + 1].text == "<")
               for j in inner):
            continue
        args, start, j = [], o + 1, o + 1
        while j < pairs[o]:
            if toks[j].kind == "punct" and toks[j].text in "([{":
                j = pairs[j] + 1
                continue
            if toks[j].text == ",":
                args.append((start, j))
                start = j + 1
            j += 1
        args.append((start, pairs[o]))
        if len(args) < 2 or args[0][0] >= args[0][1] or args[1][0] >= args[1][1]:
            continue

        def expected(arg):
            a, b = arg
            if b - a == 1 and toks[a].text in once:
                return once[toks[a].text]
            return _literal_at(toks, a, b)

        def computed(arg):
            a, b = arg
            if expected(arg) is not None:
                return False
            return any(toks[x].kind == "ident" and toks[x].text not in ("true", "false") for x in range(a, b))

        for e, actual in ((args[1], args[0]), (args[0], args[1])):
            lit = expected(e)
            if lit is not None and computed(actual):
                found.append(lit)
                break
    return found


def changed(rnd: random.Random, toks: list[Tok], lit: tuple[int, int], words: list[str]) -> str:
    """The source of a literal of the same kind as ``toks[lit[0]:lit[1]]`` that is surely not equal to it (nor
    to it with its case or blanks changed); raise ValueError when this knows none."""
    part = toks[lit[0]:lit[1]]
    if part[-1].kind == "num":
        m = re.match(r"([0-9_]+)(\w*)$", part[-1].text)
        value = int(m.group(1).replace("_", "")) * (-1 if len(part) == 2 else 1)
        # toward zero (or up from zero by a little): the changed value fits whatever integer type the original did
        if value == 0:
            new = rnd.choice((1, 2, 3))
        else:
            step = rnd.randint(1, min(abs(value), 3))
            new = value - step if value > 0 else value + step
        return str(new) + m.group(2)
    t = part[0]
    if t.text in ("true", "false"):
        return "false" if t.text == "true" else "true"
    quote = '"' if t.kind == "str" else "'"
    head = t.text.index(quote) + 1
    content = t.text[head:-1]
    # the plain ASCII letters and digits of the literal, never a part of an escape
    spots, j = [], 0
    while j < len(content):
        if content[j] == "\\":
            m = re.compile(r"\\(?:u\{[^}]*\}|x..|\n\s*|.)", re.S).match(content, j)
            j = m.end() if m else j + 2
            continue
        if content[j].isascii() and content[j].isalnum():
            spots.append(j)
        j += 1
    if t.kind == "char":
        if not spots:
            raise ValueError("no change for this char")
        old = content[spots[0]]
        pool = sorted(set("aeiourstnkx0123456789") - {old.lower(), old.upper()})
        return t.text[:head] + rnd.choice(pool) + "'"
    if not spots:
        word = rnd.choice(words or FALLBACK_WORDS)
        return t.text[:head] + content + word + '"'
    at = rnd.choice(spots)
    old = content[at]
    # another letter (in neither case) or digit: unequal even to a comparison that ignores case
    pool = sorted(c for c in set(content) | set("aeiourstn")
                  if c.isascii() and c.isalnum() and c.lower() != old.lower())
    return t.text[:head] + content[:at] + rnd.choice(pool) + content[at + 1:] + '"'


def _line_start(src: str, at: int) -> int:
    return src.rfind("\n", 0, at) + 1


def _indent(src: str, at: int) -> str:
    start = _line_start(src, at)
    return re.match(r"[ \t]*", src[start:]).group()


def with_canaries(source: str, target: str, fail: str, ok: str) -> tuple[str, dict]:
    """``source`` (the test target ``target``'s file) with the canaries added, and the manifest naming them by
    test id (``<target>::<mod path>::<fn>``). The draw is seeded by ``fail`` and ``ok``."""
    rnd = random.Random(f"{fail}:{ok}")
    manifest: dict = {"fail": [], "pass": [], "originals": {}, "match": "id"}
    n, m = rnd.randrange(2, 997), rnd.randrange(2, 997)
    try:
        toks = tokenize(source)
        pairs = matching(toks)
        scopes = scopes_of(toks, pairs)
    except (Unreadable, IndexError, KeyError, AttributeError, RecursionError):
        toks, pairs, scopes = [], {}, []
    every = [t for s in scopes for t in s.tests]
    taken = {t.text for t in toks if t.kind == "ident"} | {t.name for t in every}
    if not toks:  # the names the tests' words give, read by a plain pattern
        taken |= set(re.findall(r"\w+", source))
        every_names = re.findall(r"#\[test\][^{}]*?\bfn\s+(\w+)", source)
    else:
        every_names = [t.name for t in every]

    def ident(path: tuple[str, ...], name: str) -> str:
        return "::".join((target,) + path + (name,))

    holding = [s for s in scopes if s.tests]
    # blocks to insert: (character offset, order, text)
    inserts: list[tuple[int, float, str]] = []

    def place(scope: Scope | None) -> tuple[int, str, bool]:
        """A random place among ``scope``'s tests: a line's start (right before one of them) or its end (before
        its closing brace's line, or the file's end); that place's indent, and whether it is an end."""
        if scope is None:
            return len(source), "", True
        inner = _indent(source, toks[scope.tests[0].first].start)
        spots = []
        for t in scope.tests:
            at = toks[t.first].start
            line = _line_start(source, at)
            if line >= (toks[t.first - 1].end if t.first else 0) and not source[line:at].strip():
                spots.append((line, _indent(source, at), False))
        if scope.close is None:
            spots.append((len(source), inner, True))
        else:
            at = toks[scope.close].start
            line = _line_start(source, at)
            if line > toks[scope.close - 1].end and not source[line:at].strip():
                spots.append((line, inner, True))
        return rnd.choice(spots) if spots else (len(source), "", True)

    home = rnd.choice(holding) if holding else None
    names = [t.name for t in home.tests] if home else every_names
    path = home.path if home else ()
    bad, good = fresh_name(rnd, names, taken), fresh_name(rnd, names, taken)
    manifest["fail"].append(ident(path, bad))
    manifest["pass"].append(ident(path, good))
    for name, a, b in ((bad, n, n + 1), (good, m, m)):
        at, ind, end = place(home)
        text = f"{ind}#[test]\n{ind}fn {name}() {{\n{ind}    assert_eq!({a}, {b});\n{ind}}}\n"
        inserts.append((at, rnd.random(), "\n" + text if end else text + "\n"))
    if toks and not (SHARED_STATE & {t.text for t in toks if t.kind == "ident"}):
        pool = [(s, t, lit) for s in holding for t in s.tests for lit in candidates(toks, pairs, t)]
        rnd.shuffle(pool)
        used: set[str] = set()
        for scope, t, lit in pool:
            if len(used) == MUTANTS:
                break
            key = ident(t.path, t.name)
            if key in used:
                continue
            scope_names = [x.name for x in scope.tests]
            try:
                text = changed(rnd, toks, lit, words_of(scope_names))
            except ValueError:
                continue
            name = fresh_name(rnd, scope_names, taken)
            a, b = toks[t.first].start, toks[t.close].end
            lo, hi = toks[lit[0]].start, toks[lit[1] - 1].end
            nat = toks[t.name_at]
            copy = (source[a:nat.start] + name + source[nat.end:lo] + text + source[hi:b])
            at, _, end = place(scope)
            text = _indent(source, a) + copy + "\n"
            inserts.append((at, rnd.random(), "\n" + text if end else text + "\n"))
            manifest["fail"].append(ident(t.path, name))
            manifest["originals"][ident(t.path, name)] = key
            used.add(key)
    out = source if source.endswith("\n") or not source else source + "\n"
    for at, _, text in sorted(inserts, key=lambda x: (x[0], x[1]), reverse=True):
        at = min(at, len(out))
        out = out[:at] + text + out[at:]
    return out, manifest


def main(argv: list[str]) -> None:
    """``TEST_FILE [TEST_FILE ...] CANARY_FAIL CANARY_PASS MANIFEST``: add the canaries to the first TEST_FILE,
    name them in MANIFEST (``-`` for none)."""
    if len(argv) < 4:
        raise SystemExit("usage: rust_canaries TEST_FILE [TEST_FILE ...] CANARY_FAIL CANARY_PASS MANIFEST")
    files, fail, ok, manifest_path = argv[:-3], argv[-3], argv[-2], argv[-1]
    path = files[0]
    target = os.path.basename(path)[:-3] if path.endswith(".rs") else os.path.basename(path)
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        source, manifest = with_canaries(f.read(), target, fail, ok)
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(source)
    if manifest_path != "-":  # root's alone (mode 600): the tester must not learn the canaries' names from it
        fd = os.open(manifest_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(manifest, f)


if __name__ == "__main__":
    main(sys.argv[1:])
