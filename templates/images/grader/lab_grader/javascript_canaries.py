"""JavaScript check.sh, as root before any graded code: the canary tests, written into the task's first jest
test file, and their ids, written to a manifest only root can read (the host decides with it: rules/grade.py,
Canaries).

A solution cannot tell the canaries from the exercise's own tests by their names or their place (issue 19): each
is a ``test(...)`` (or ``it(...)``, as its neighbours are) of one of the file's own ``describe`` blocks (or of its
top level, where its tests are), at a random place among that block's tests, under a fresh title made of the
words of the file's own test titles (``cleans numbers with spaces``). They are:

- a *failing* and a *passing* canary comparing numbers with ``expect(...)`` and the matcher the tests use most: a
  solution that swaps ``test``, ``expect`` or the matchers fools these too;
- up to two *mutants*: copies of the exercise's own tests with one expected value changed, which an honest
  solution fails wherever it passes the original test. A result that compares equal to anything (a custom
  ``equals``, a patched matcher) passes both the test and its copy: the host calls that ``tampered``.

A test is copied only when the changed assertion surely runs whenever the original test passes: an
``expect(ACTUAL).toEqual(EXPECTED);`` (``toBe``, ``toStrictEqual``) that is a statement of the test's own block
body, with no ``return`` before it and ``ACTUAL`` computed (a name or a call; never a literal), and
``EXPECTED`` a literal (a number, a string, a boolean or an array of them) or a ``const`` bound to one in that
body and used nowhere else. The passing canary never goes into a block a hook (``beforeEach``, ...) runs for, its
own or an outer one's: a stub's failing hook would fail it (it then goes at the file's end, top level). The file
is read with a small tokenizer, not a JavaScript parser; a block whose titles are not all plain strings takes no
canary; a file it cannot read, or with no block that takes one, gets its plain canaries at its end, top level,
still named from the words of what look like its test titles, and no mutants.

    python3 -I -m lab_grader.javascript_canaries TEST_FILE CANARY_FAIL CANARY_PASS [MANIFEST]

CANARY_FAIL and CANARY_PASS (fresh random tokens, rules/grade.py: canary_tokens) seed the draw; TEST_FILE (as
the task's test_files name it: the ids start with it) is rewritten in place; MANIFEST (JSON: ``{"fail": [ids],
"pass": [ids], "originals": {mutant id: test id}, "match": "id", "shown": [titles]}``, rules/grade.py:
canaries_of) is written when given. Ids are jest's as rules/reports.py writes them: ``<TEST_FILE> › <fullName>``
(fullName: the describe titles and the test title joined by spaces); ``shown`` holds the canaries' titles, which
is what jest prints of them (``✕ <title>``, ``● <describe> › <title>``), for the host to scrub.
"""
from __future__ import annotations

import json
import os
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass, field

MUTANTS = 2  # copies with a changed expected value, at most, per grading
MATCHERS = ("toEqual", "toStrictEqual", "toBe")
FALLBACK_WORDS = ("value", "case", "result", "input", "empty", "single", "several")
KEYWORDS_BEFORE_REGEX = frozenset({"return", "typeof", "case", "do", "else", "in", "instanceof", "new", "delete",
                                   "void", "throw", "yield", "await", "of"})
HOOKS = frozenset({"beforeEach", "afterEach", "beforeAll", "afterAll"})
LITERAL_NAMES = frozenset({"true", "false", "null", "undefined", "NaN", "Infinity"})
NUMBER = re.compile(r"(?:0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)n?")
DECIMAL = re.compile(r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
NAME = re.compile(r"[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*")
PUNCT = ("...", "===", "!==", "**=", "<<=", ">>=", ">>>", "=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.",
         "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<", ">>")
SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "\\": "\\", "'": "'",
                  '"': '"', "`": "`"}


class Unreadable(ValueError):
    """The test file holds something the tokenizer does not read (the writer then falls back)."""


@dataclass
class Token:
    kind: str  # "name", "num", "str", "tpl", "regex", "punct"
    text: str
    start: int
    end: int
    line: int  # 0-based line of its start


def tokens_of(source: str) -> list[Token]:
    """The tokens of ``source`` (comments dropped), or raise Unreadable: an unterminated string, template,
    comment or regex, or a character no JavaScript token starts with."""
    out: list[Token] = []
    i, n, line, counted = 0, len(source), 0, 0
    braces: list[str] = []  # "{" of a block or object, "${" of a template's substitution

    def template_from(j: int) -> int:  # j just after "`" or the "}" ending a substitution: to past the piece
        while j < n:
            ch = source[j]
            if ch == "\\":
                j += 2
            elif ch == "`":
                return j + 1
            elif source.startswith("${", j):
                braces.append("${")
                return j + 2
            else:
                j += 1
        raise Unreadable("unterminated template")

    def regex_allowed() -> bool:
        if not out:
            return True
        last = out[-1]
        if last.kind == "name":
            return last.text in KEYWORDS_BEFORE_REGEX
        return last.kind == "punct" and last.text not in (")", "]", "}")

    while i < n:
        ch = source[i]
        if ch in " \t\r\n\ufeff\u00a0\u2028\u2029":
            i += 1
            continue
        if source.startswith("//", i):
            j = source.find("\n", i)
            i = n if j < 0 else j
            continue
        if source.startswith("/*", i):
            j = source.find("*/", i + 2)
            if j < 0:
                raise Unreadable("unterminated comment")
            i = j + 2
            continue
        start = i
        if ch in "'\"":
            j = i + 1
            while j < n and source[j] != ch:
                if source[j] == "\n":
                    raise Unreadable("newline in a string")
                j += 2 if source[j] == "\\" else 1
            if j >= n:
                raise Unreadable("unterminated string")
            kind, i = "str", j + 1
        elif ch == "`":
            kind, i = "tpl", template_from(i + 1)
        elif ch == "}" and braces and braces[-1] == "${":
            braces.pop()
            kind, i = "tpl", template_from(i + 1)
        elif ch.isdigit() or (ch == "." and i + 1 < n and source[i + 1].isdigit()):
            m = NUMBER.match(source, i)
            kind, i = "num", m.end()
        elif NAME.match(source, i):
            kind, i = "name", NAME.match(source, i).end()
        elif ch == "/" and regex_allowed():
            j, in_class = i + 1, False
            while j < n and (source[j] != "/" or in_class):
                if source[j] == "\n":
                    raise Unreadable("newline in a regex")
                if source[j] == "\\":
                    j += 1
                elif source[j] == "[":
                    in_class = True
                elif source[j] == "]":
                    in_class = False
                j += 1
            if j >= n:
                raise Unreadable("unterminated regex")
            m = NAME.match(source, j + 1)
            kind, i = "regex", m.end() if m else j + 1
        elif ch in "{}()[];,.<>+-*/%&|^!~?:=@#":
            op = next((p for p in PUNCT if source.startswith(p, i)), ch)
            if op == "{":
                braces.append("{")
            elif op == "}":
                if not braces:
                    raise Unreadable("unbalanced braces")
                braces.pop()
            kind, i = "punct", i + len(op)
        else:
            raise Unreadable(f"unexpected character {ch!r}")
        line += source.count("\n", counted, start)  # the newlines since the last token's start
        counted = start
        out.append(Token(kind, source[start:i], start, i, line))
    if braces:
        raise Unreadable("unbalanced braces")
    return out


def string_value(text: str) -> str:
    """The value of a plain string token (quotes included), or raise Unreadable for escapes this does not read."""
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1:i + 2]
        if nxt in SIMPLE_ESCAPES:
            out.append(SIMPLE_ESCAPES[nxt])
            i += 2
        elif nxt == "0" and not body[i + 2:i + 3].isdigit():
            out.append("\0")
            i += 2
        elif nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i + 2:i + 6]):
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif nxt == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i + 2:i + 4]):
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        else:
            raise Unreadable(f"escape \\{nxt}")
    value = "".join(out)
    if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise Unreadable("a lone surrogate")
    return value


def source_of(value, quote: str = "'") -> str:
    """``value`` (a literal's: number, string, boolean or list of them) as JavaScript source."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        escapes = {"\\": "\\\\", quote: "\\" + quote, "\n": "\\n", "\t": "\\t", "\r": "\\r"}
        return quote + "".join(escapes.get(ch) or (ch if ch.isprintable() else f"\\u{{{ord(ch):x}}}")
                               for ch in value) + quote
    if isinstance(value, list):
        return "[" + ", ".join(source_of(v, quote) for v in value) + "]"
    raise ValueError(f"no source for a {type(value).__name__}")


def literal_at(toks: list[Token], i: int) -> tuple[object, int, str]:
    """The literal starting at ``toks[i]``: ``(value, index past it, its first string's quote)``, or raise
    Unreadable when it is none this reads (a number in decimals, a plain string, true/false, an array of them)."""
    t = toks[i] if i < len(toks) else None
    if t is None:
        raise Unreadable("end of file")
    if t.kind == "num" or (t.text == "-" and i + 1 < len(toks) and toks[i + 1].kind == "num"):
        sign, num = (-1, toks[i + 1]) if t.text == "-" else (1, t)
        if not DECIMAL.fullmatch(num.text):
            raise Unreadable("a number this does not read")
        value: object = int(num.text) if num.text.isdigit() else float(num.text)
        if isinstance(value, int) and value > 2 ** 52 or value != value or value in (float("inf"),):
            raise Unreadable("a number past exact doubles")
        return sign * value, i + (2 if t.text == "-" else 1), "'"
    if t.kind == "str":
        return string_value(t.text), i + 1, t.text[0]
    if t.kind == "name" and t.text in ("true", "false"):
        return t.text == "true", i + 1, "'"
    if t.text == "[":
        items, j, quote = [], i + 1, ""
        while toks[j].text != "]":
            value, j, q = literal_at(toks, j)
            items.append(value)
            quote = quote or (q if isinstance(value, (str, list)) else "")
            if toks[j].text == ",":
                j += 1
            elif toks[j].text != "]":
                raise Unreadable("not an array literal")
        return items, j + 1, quote or "'"
    raise Unreadable("not a literal")


def mutate(rnd: random.Random, value, words: list[str]):
    """A value of the same kind as ``value`` that ``toEqual`` surely finds unequal to it."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rnd.choice((1, 2, 3, 5, 7, -1, -2))
    if isinstance(value, float):
        return value + rnd.choice((1.5, 2.25, -0.75))
    if isinstance(value, str):
        if not value:
            return rnd.choice(words or FALLBACK_WORDS)
        i = rnd.randrange(len(value))
        pool = sorted(set(value + "aeiourstn") - {value[i]})
        return value[:i] + rnd.choice(pool) + value[i + 1:]
    if isinstance(value, list):
        if value:
            return value[:-1] if rnd.random() < 0.5 or len(value) == 1 else value[1:]
        return [rnd.choice(words or FALLBACK_WORDS)]
    raise ValueError(f"no mutation for a {type(value).__name__}")


@dataclass
class Test:
    """One ``test(...)``/``it(...)`` statement of a block: its title (None unless a plain string), the keyword,
    its first and last line, its title token, its body's token range (None unless a block body without
    parameters) and the quote its title uses."""
    keyword: str
    title: str | None
    first: int
    last: int
    title_tok: Token | None
    body: tuple[int, int] | None  # toks[body[0]] is the "{", toks[body[1]] the "}"


@dataclass
class Block:
    """The file's top level or one ``describe`` block: the titles leading to it (None when one is not a plain
    string), its tests, the lines before which a test may go, its inner blocks."""
    path: list[str] | None
    tests: list[Test] = field(default_factory=list)
    places: list[int] = field(default_factory=list)  # line indexes: insert before that line
    indent: str = ""
    end_place: int | None = None  # the line after its last test (a canary there follows a blank line)
    blocks: list["Block"] = field(default_factory=list)
    hooked: bool = False  # a beforeEach/afterEach/beforeAll/afterAll of its own: stub code may fail every test


def _matching(toks: list[Token], i: int) -> int:
    """The index of the bracket closing ``toks[i]`` (an opening one)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    depth, close, j = 0, pairs[toks[i].text], i
    while j < len(toks):
        t = toks[j].text if toks[j].kind == "punct" else None
        if t in pairs:
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                if t != close:
                    raise Unreadable("mismatched brackets")
                return j
        j += 1
    raise Unreadable("unclosed bracket")


def _function_body(toks: list[Token], i: int) -> tuple[tuple[int, int] | None, int, bool]:
    """The function argument starting at ``toks[i]``: ``(body range or None, index past it, has parameters)``.
    Only ``() => {...}``, ``async () => {...}`` and ``function () {...}`` give a body range."""
    j = i + 1 if toks[i].text == "async" else i
    if toks[j].text == "function":
        j += 1
        if toks[j].kind == "name":
            j += 1
    if toks[j].text != "(":
        return None, j, True
    close = _matching(toks, j)
    params = close > j + 1
    k = close + 1
    if toks[k].text == "=>":
        k += 1
    if toks[k].text != "{":
        return None, k, params
    end = _matching(toks, k)
    return (k, end), end + 1, params


def _line_start(source: str, pos: int) -> int:
    return source.rfind("\n", 0, pos) + 1


def read_block(source: str, toks: list[Token], lines: list[str], lo: int, hi: int, block: Block) -> None:
    """Fill ``block`` from its statements: the tokens ``toks[lo:hi]`` (a describe's body, or the whole file)."""
    i, depth = lo, 0
    while i < hi:
        t = toks[i]
        prev = toks[i - 1] if i > lo else None
        at_statement = depth == 0 and (prev is None or prev.text in (";", "{", "}", ")"))
        if (at_statement and t.kind == "name" and t.text in ("test", "it", "describe") and i + 1 < hi
                and toks[i + 1].text == "("):
            close = _matching(toks, i + 1)
            j = i + 2
            title_tok = toks[j] if toks[j].kind == "str" else None
            try:
                title = string_value(title_tok.text) if title_tok else None
            except Unreadable:
                title = None
            body, params = None, True
            if toks[j + 1].text == ",":
                body, _, params = _function_body(toks, j + 2)
            end = close + 1 if close + 1 < hi and toks[close + 1].text == ";" else close
            first, last = t.line, toks[end].line
            own_lines = (not lines[first][:toks[i].start - _line_start(source, toks[i].start)].strip()
                         and not lines[last][toks[end].end - _line_start(source, toks[end].end):].strip())
            if t.text == "describe":
                path = block.path + [title] if block.path is not None and title is not None else None
                inner = Block(path)
                if body is not None and not params:
                    read_block(source, toks, lines, body[0] + 1, body[1], inner)
                block.blocks.append(inner)
            else:
                block.tests.append(Test(t.text, title, first, last, title_tok, None if params else body))
                if own_lines:
                    block.places.append(first)
                    block.indent = re.match(r"[ \t]*", lines[first]).group()
                    block.end_place = last + 1
                else:
                    block.end_place = None
            i = end + 1
            continue
        if at_statement and t.kind == "name" and t.text in HOOKS:
            block.hooked = True
        if t.kind == "punct" and t.text in ("(", "[", "{"):
            depth += 1
        elif t.kind == "punct" and t.text in (")", "]", "}"):
            depth -= 1
        i += 1


def _statement_starts(toks: list[Token], lo: int, hi: int):
    """Indexes of the tokens that start a statement at depth 0 of ``toks[lo:hi]`` (a block body's inside)."""
    depth = 0
    for i in range(lo, hi):
        t = toks[i]
        if depth == 0 and (i == lo or toks[i - 1].text in (";", "}") and toks[i - 1].kind == "punct"):
            yield i
        if t.kind == "punct" and t.text in ("(", "[", "{"):
            depth += 1
        elif t.kind == "punct" and t.text in (")", "]", "}"):
            depth -= 1


def candidates(toks: list[Token], body: tuple[int, int]) -> list[tuple[int, int]]:
    """The token ranges ``(first, past)`` of the literals of a test body whose change makes a copy of the test
    that must fail (see the module's docstring): each is the expected value of one ``expect`` statement."""
    lo, hi = body[0] + 1, body[1]
    inside = toks[lo:hi]
    counts = Counter(t.text for t in inside if t.kind == "name")
    bound: dict[str, tuple[int, int]] = {}  # const NAME = LITERAL; at depth 0, NAME used once more
    found = []
    for s in _statement_starts(toks, lo, hi):
        if any(t.text == "return" and t.kind == "name" for t in toks[lo:s]):
            break
        t = toks[s]
        if (t.text in ("const", "let") and toks[s + 1].kind == "name" and toks[s + 2].text == "="
                and counts[toks[s + 1].text] == 2):
            try:
                _, past, _ = literal_at(toks, s + 3)
            except (Unreadable, IndexError):
                continue
            if toks[past].text == ";":
                bound[toks[s + 1].text] = (s + 3, past)
            continue
        if not (t.text == "expect" and toks[s + 1].text == "("):
            continue
        close = _matching(toks, s + 1)
        if not (toks[close + 1].text == "." and toks[close + 2].text in MATCHERS and toks[close + 3].text == "("):
            continue
        mclose = _matching(toks, close + 3)
        if toks[mclose + 1].text != ";" and mclose + 1 != hi:
            continue
        actual = toks[s + 2:close]
        if not actual or not any(a.kind == "name" and a.text not in LITERAL_NAMES for a in actual):
            continue
        if len(actual) == 1 and actual[0].text in bound:
            continue
        args = toks[close + 4:mclose]
        if len(args) == 1 and args[0].kind == "name" and args[0].text in bound:
            found.append(bound[args[0].text])
            continue
        try:
            _, past, _ = literal_at(toks, close + 4)
        except (Unreadable, IndexError):
            continue
        if past == mclose:
            found.append((close + 4, mclose))
    return found


def words_of(titles: list[str]) -> list[str]:
    """The words of test titles, in first-seen order: what fresh canary titles are made of."""
    seen: dict[str, None] = {}
    for title in titles:
        for w in title.split():
            seen.setdefault(w, None)
    return list(seen)


def fresh_title(rnd: random.Random, titles: list[str], text: str, taken: set[str]) -> str:
    """A test title made as the file's own ``titles`` are: a walk along the word pairs they hold (``cleans
    numbers with dots`` and ``invalid with letters`` can give ``cleans numbers with letters``), else 2 to 4 of
    their words; found nowhere in the file's ``text`` nor in another of ``taken``, either way round
    (case-insensitively: the host drops every output line holding a canary's title, and must never drop one
    about a real test); added to ``taken``."""
    words = words_of(titles)
    words = words if len(words) >= 2 else words + [w for w in FALLBACK_WORDS if w not in words]
    follows: dict[str, list[str]] = {}
    for title in titles:
        parts = title.split()
        for a, b in zip([""] + parts, parts + [""]):
            follows.setdefault(a, []).append(b)
    low = text.lower()
    for attempt in range(400):
        if attempt < 200 and follows.get(""):
            parts, word = [], rnd.choice(follows[""])
            while word and len(parts) < 8 and word not in parts:
                parts.append(word)
                word = rnd.choice(follows.get(word) or [""])
        else:
            parts = rnd.sample(words, min(len(words), rnd.choice((2, 3, 3, 4))))
        title = " ".join(parts)
        if attempt > 350:
            title += f" {rnd.randint(2, 99)}"
        key = title.lower()
        if (len(parts) >= 2 and key not in low and "\n" not in title
                and not any(key in t or t in key for t in taken)):
            taken.add(key)
            return title
    raise ValueError("no fresh test title could be drawn")


def _all_blocks(block: Block):
    yield block
    for inner in block.blocks:
        yield from _all_blocks(inner)


def _unhooked(block: Block):
    """The blocks no hook runs for (its own or an outer block's): a test there runs no code but its own."""
    if not block.hooked:
        yield block
        for inner in block.blocks:
            yield from _unhooked(inner)


def _full_name(path: list[str], title: str) -> str:
    return " ".join(path + [title])


def _style(source: str, tests: list[Test]) -> tuple[str, str, str]:
    """The keyword (test or it), the quote of titles and the matcher the file's tests use most."""
    keyword = Counter(t.keyword for t in tests).most_common(1)
    quote = Counter(t.title_tok.text[0] for t in tests if t.title_tok).most_common(1)
    matcher = Counter(re.findall(r"\)\.(toEqual|toStrictEqual|toBe)\(", source)).most_common(1)
    return (keyword[0][0] if keyword else "test", quote[0][0] if quote else "'",
            matcher[0][0] if matcher else "toEqual")


def _plain(style: tuple[str, str, str], title: str, indent: str, a: int, b: int) -> list[str]:
    keyword, quote, matcher = style
    return [f"{indent}{keyword}({source_of(title, quote)}, () => {{", f"{indent}  expect({a}).{matcher}({b});",
            f"{indent}}});"]


def appended(source: str, fail: str, ok: str, test_file: str) -> tuple[str, dict]:
    """``source`` with the plain canaries at its end, top level (a file the tokenizer does not read, or with no
    block of tests it does), titled from the words of what looks like the file's test titles; and the manifest."""
    rnd = random.Random(f"{fail}:{ok}:appended")
    titles = [m.group(2)[1:-1] for m in re.finditer(r"\b(test|it)\(\s*('[^'\\\n]*'|\"[^\"\\\n]*\")", source)]
    quote = Counter(m.group(1)[0] for m in re.finditer(r"\b(?:test|it)\(\s*(['\"])", source)).most_common(1)
    style = ("test", quote[0][0] if quote else "'", "toEqual")
    taken: set[str] = set()
    bad, good = fresh_title(rnd, titles, source, taken), fresh_title(rnd, titles, source, taken)
    n, m = rnd.randrange(2, 997), rnd.randrange(2, 997)
    manifest = {"fail": [f"{test_file} › {bad}"], "pass": [f"{test_file} › {good}"], "originals": {},
                "match": "id", "shown": [bad, good]}
    # a line comment left open at the end must not swallow the first canary
    tail = "\n".join([""] + _plain(style, bad, "", n, n + 1) + [""] + _plain(style, good, "", m, m) + [""])
    return source + ("" if source.endswith("\n") else "\n") + tail, manifest


def with_canaries(source: str, fail: str, ok: str, test_file: str) -> tuple[str, dict]:
    """``source`` (a jest test file's, named ``test_file`` in the ids) with the canaries added, and the manifest
    naming them (see the module's docstring). The draw is seeded by ``fail`` and ``ok``. Never raises for an
    odd file: the canaries are then ``appended``."""
    try:
        return placed(source, fail, ok, test_file)
    except (Unreadable, ValueError, IndexError, KeyError, RecursionError):
        return appended(source, fail, ok, test_file)


def placed(source: str, fail: str, ok: str, test_file: str) -> tuple[str, dict]:
    """``with_canaries`` for a file the tokenizer reads, with a block of tests it can place canaries in; else
    raise Unreadable."""
    rnd = random.Random(f"{fail}:{ok}")
    lines = source.split("\n")
    toks = tokens_of(source)
    top = Block([])
    read_block(source, toks, lines, 0, len(toks), top)
    blocks = [b for b in _all_blocks(top) if b.path is not None and b.places]
    if not blocks:
        raise Unreadable("no block of tests with plain titles")
    tests = [t for b in _all_blocks(top) for t in b.tests]
    titles = [t.title for t in tests if t.title]
    words = words_of(titles)
    style = _style(source, tests)
    taken: set[str] = set()
    manifest: dict = {"fail": [], "pass": [], "originals": {}, "match": "id", "shown": []}
    n, m = rnd.randrange(2, 997), rnd.randrange(2, 997)
    inserts: list[tuple[int, float, list[str]]] = []  # (line index, order, lines)

    def place(block: Block, body: list[str]) -> None:
        spots = [(p, False) for p in block.places] + ([(block.end_place, True)] if block.end_place else [])
        at, after = rnd.choice(spots)
        inserts.append((at, rnd.random(), [""] + body if after else body + [""]))

    # the passing canary never where a hook runs: a stub's failing beforeEach would fail it (an honest run then
    # looks forged); where every block of tests has one, it goes at the file's end, top level
    unhooked = [b for b in _unhooked(top) if b.path is not None and b.places]
    for kind, a, b in (("fail", n, n + 1), ("pass", m, m)):
        block = rnd.choice(blocks if kind == "fail" else unhooked or [Block([], places=[len(lines)])])
        title = fresh_title(rnd, titles, source, taken)
        manifest[kind].append(f"{test_file} › {_full_name(block.path, title)}")
        manifest["shown"].append(title)
        place(block, _plain(style, title, block.indent, a, b))
    pool = [(b, t, c) for b in blocks for t in b.tests
            if t.title is not None and t.body is not None and t.first in b.places
            for c in candidates(toks, t.body)]
    rnd.shuffle(pool)
    used: set[int] = set()
    for block, test, (lo, hi) in pool:
        if len(used) == MUTANTS:
            break
        if test.first in used:
            continue
        try:
            value, _, q = literal_at(toks, lo)
            changed = source_of(mutate(rnd, value, words), q)
        except (Unreadable, ValueError):
            continue
        title = fresh_title(rnd, titles, source, taken)
        start = sum(len(x) + 1 for x in lines[:test.first])  # the test's own lines, as offsets in the file
        end = sum(len(x) + 1 for x in lines[:test.last + 1]) - 1
        text = source[start:end]
        edits = [(test.title_tok.start, test.title_tok.end, source_of(title, test.title_tok.text[0])),
                 (toks[lo].start, toks[hi - 1].end, changed)]
        for a, b, new in sorted(edits, reverse=True):
            text = text[:a - start] + new + text[b - start:]
        mutant = f"{test_file} › {_full_name(block.path, title)}"
        manifest["fail"].append(mutant)
        manifest["originals"][mutant] = f"{test_file} › {_full_name(block.path, test.title)}"
        manifest["shown"].append(title)
        place(block, text.split("\n"))
        used.add(test.first)
    for at, _, body in sorted(inserts, key=lambda x: (x[0], x[1]), reverse=True):
        lines[at:at] = body
    return "\n".join(lines), manifest


def main(argv: list[str]) -> None:
    """``TEST_FILE CANARY_FAIL CANARY_PASS [MANIFEST]``: add the canaries to TEST_FILE, name them in MANIFEST."""
    path, fail, ok = argv[:3]
    with open(path, encoding="utf-8") as f:
        source = f.read()
    text, manifest = with_canaries(source, fail, ok, path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    if len(argv) > 3:  # root's alone (mode 600): the tester must not learn the canaries' names from it
        fd = os.open(argv[3], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(manifest, f)


if __name__ == "__main__":
    main(sys.argv[1:])
