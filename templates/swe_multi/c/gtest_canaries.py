"""googletest canaries for the swe-multi tier's C/C++ runner: run by check.sh as root before any graded code, it
writes canary ``TEST``s into the test file of an instance's first FAIL_TO_PASS test and names them in a manifest
only root can read (the host decides with it: rules/grade.py, Canaries, ``"match": "id"``).

The aider tier's C++ writer (``lab_grader/cpp_canaries.py``) reads Catch2 files; SWE-bench Multilingual's C++
tests (fmt) are googletest's ``TEST(suite, name)``, so this writes those. Each canary is a ``TEST`` of one of the
file's own suites, under a fresh name made of the words of the file's test names (``format_nan`` and
``group_digits_view`` can give ``format_digits``), put before one of the file's top-level ``TEST``s outside any
``#if`` (where it surely compiles) or at the file's end. They are:

- *failing* canaries, one per kind of assertion googletest's report tells apart by test (``EXPECT_EQ``,
  ``ASSERT_EQ``, ``EXPECT_TRUE``, ``ADD_FAILURE``): a test binary that disarms one kind shows that canary passing;
- a *passing* canary (``EXPECT_EQ`` of two equal strings): a binary that fails or hides every test shows it
  missing or failed.

No mutant copies of the file's own tests (the aider writer's changed expected values) are made: a gtest test body
is rarely one straight assertion on a literal, and a copy that did not compile would fail the whole binary.

    python3 -I gtest_canaries.py TEST_FILE CANARY_FAIL CANARY_PASS MANIFEST

CANARY_FAIL and CANARY_PASS (fresh random tokens, rules/grade.py: canary_tokens) seed the draw; TEST_FILE is
rewritten in place; MANIFEST (JSON ``{"fail": [ids], "pass": [ids], "originals": {}, "match": "id"}``, ids as
googletest names them: ``suite.name``) is written with mode 600, never through a symlink.
"""
from __future__ import annotations

import json
import os
import random
import re
import sys

# a test macro's suite and name: TEST(suite, name), TEST_F, TEST_P's suites are instantiated under a prefix
TEST = re.compile(r"^\s*(?:TEST|TEST_F|TYPED_TEST|TEST_P)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)", re.M)
PLAIN_TEST = re.compile(r"^TEST\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")
FALLBACK_WORDS = ("value", "format", "result", "empty", "single", "several", "args", "width")
FAILING = (
    lambda a, b: f'EXPECT_EQ(std::string("{a}"), std::string("{b}"));',
    lambda a, b: f'ASSERT_EQ(std::string("{a}"), std::string("{b}"));',
    lambda a, b: f'EXPECT_TRUE(std::string("{a}") == std::string("{b}"));',
    lambda a, b: f'ADD_FAILURE() << "{a}";',
)


def places(source: str) -> list[int]:
    """Offsets of the lines starting a plain top-level ``TEST(`` outside every ``#if`` (brace depth 0, the
    preprocessor's depth 0): where a ``TEST`` surely compiles."""
    out, depth, pp, offset = [], 0, 0, 0
    in_comment = False
    for line in source.splitlines(keepends=True):
        stripped = line.strip()
        if not in_comment and stripped.startswith("#"):
            word = re.match(r"#\s*(\w*)", stripped).group(1)
            pp += 1 if word in ("if", "ifdef", "ifndef") else -1 if word == "endif" else 0
        elif not in_comment and depth == 0 and pp == 0 and PLAIN_TEST.match(line):
            out.append(offset)
        code = re.sub(r'"(?:\\.|[^"\\])*"' + r"|'(?:\\.|[^'\\])*'", "", line)
        if in_comment:
            code = code.split("*/", 1)[1] if "*/" in code else ""
            in_comment = "*/" not in line
        code = re.sub(r"/\*.*?\*/", "", code.split("//", 1)[0])
        if "/*" in code:
            code, in_comment = code.split("/*", 1)[0], True
        depth += code.count("{") - code.count("}")
        offset += len(line)
    return out


def fresh_name(rnd: random.Random, words: list[str], taken: set[str]) -> str:
    """A test name of 2 or 3 of ``words`` joined by ``_``, neither one of ``taken`` nor a part of one (so no
    line about a real test is taken for a canary's); added to ``taken``."""
    for attempt in range(400):
        parts = rnd.sample(words, min(len(words), rnd.choice((2, 2, 3))))
        name = "_".join(parts) + (f"_{rnd.randint(2, 99)}" if attempt > 300 else "")
        low = name.lower()
        if len(parts) >= 2 and not any(low in t.lower() for t in taken):
            taken.add(name)
            return name
    raise ValueError("no fresh test name")


def with_canaries(source: str, fail: str, ok: str) -> tuple[str, dict]:
    """``source`` with the canaries added, and the manifest naming them (see the module's docstring). The draw
    is seeded by ``fail`` and ``ok``."""
    rnd = random.Random(f"{fail}:{ok}")
    tests = TEST.findall(source)
    # suites of plain TESTs only: a TEST in a TEST_F's suite is an error googletest reports at run time
    plain = re.findall(r"^\s*TEST\s*\(\s*(\w+)\s*,", source, re.M)
    suites = sorted({s for s in plain if not s.startswith("DISABLED_")}) or ["lab_test"]
    taken = {n for _, n in tests} | {s for s, _ in tests}
    words = sorted({w for _, n in tests for w in n.split("_") if w and not w.startswith("DISABLED")})
    words = words if len(words) >= 3 else words + [w for w in FALLBACK_WORDS if w not in words]
    blocks, manifest = [], {"fail": [], "pass": [], "originals": {}, "match": "id"}
    for make in FAILING:
        suite, name = rnd.choice(suites), fresh_name(rnd, words, taken)
        a = " ".join(rnd.sample(words, 2))
        blocks.append(f"TEST({suite}, {name}) {{\n  {make(a, a + ' ' + rnd.choice(words))}\n}}\n")
        manifest["fail"].append(f"{suite}.{name}")
    suite, name = rnd.choice(suites), fresh_name(rnd, words, taken)
    same = " ".join(rnd.sample(words, 2))
    blocks.append(f'TEST({suite}, {name}) {{\n  EXPECT_EQ(std::string("{same}"), std::string("{same}"));\n}}\n')
    manifest["pass"].append(f"{suite}.{name}")
    text = source if source.endswith("\n") else source + "\n"
    spots = places(text) + [len(text)]
    chosen = sorted(((rnd.choice(spots), rnd.random(), b) for b in blocks), reverse=True)
    for at, _, block in chosen:
        text = text[:at] + ("\n" + block if at == len(text) else block + "\n") + text[at:]
    return text, manifest


def main(argv: list[str]) -> None:
    """``TEST_FILE CANARY_FAIL CANARY_PASS MANIFEST``: add the canaries to TEST_FILE, name them in MANIFEST."""
    path, fail, ok, manifest_path = argv
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        source, manifest = with_canaries(f.read(), fail, ok)
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(source)
    fd = os.open(manifest_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(manifest, f)


if __name__ == "__main__":
    main(sys.argv[1:])
