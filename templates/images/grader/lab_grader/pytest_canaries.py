"""Python check.sh, as root before any graded code: the two canary tests, written into the task's test file.

They go inside the exercise's own first test case class, comparing numbers with the same assertEqual as its
tests: a solution that patches the assertions for the tests' argument types, swaps the test module's unittest,
or rewrites that class fools these too. They take ``*args``, as a class decorator (grep: mock.patch) passes its
mocks to every test method. Only when the file has no such class: a class of their own at its end.

    python3 -I -m lab_grader.pytest_canaries TEST_FILE CANARY_FAIL CANARY_PASS

(the canaries: ``k`` and 11 hex digits, rules/grade.py: canary_tokens) rewrites TEST_FILE in place.
"""
from __future__ import annotations

import re
import sys

TEST_CASE_CLASS = re.compile(r"class \w+\((.*\.)?TestCase\)\s*:\s*$")


def with_canaries(lines: list[str], fail: str, ok: str) -> list[str]:
    """``lines`` (a test module's, without their newlines) with a test ``test_<fail>`` that fails and a test
    ``test_<ok>`` that passes, each asserting on a number drawn from its canary's hex digits."""
    lines = list(lines)
    n, m = int(fail[1:7], 16) % 997, int(ok[1:7], 16) % 997
    for i, line in enumerate(lines):
        if TEST_CASE_CLASS.match(line):
            body = next((x for x in lines[i + 1:] if x.strip()), "    pass")
            ind = body[:len(body) - len(body.lstrip())] or "    "
            lines[i + 1:i + 1] = [f"{ind}def test_{fail}(self, *args):",
                                  f"{ind}    self.assertEqual({n}, {n + 1}, '{fail}')",
                                  f"{ind}def test_{ok}(self, *args):", f"{ind}    self.assertEqual({m}, {m}, '{ok}')", ""]
            return lines
    return lines + ["", "import unittest as unittest_" + fail, "",
                    f"class Case{ok[1:7]}(unittest_{fail}.TestCase):  # no canary name in the class: each id holds one",
                    f"    def test_{fail}(self):", f"        self.assertEqual({n}, {n + 1}, '{fail}')",
                    f"    def test_{ok}(self):", f"        self.assertEqual({m}, {m}, '{ok}')", ""]


def main(argv: list[str]) -> None:
    """``TEST_FILE CANARY_FAIL CANARY_PASS``: add the canaries to TEST_FILE."""
    path, fail, ok = argv[:3]
    lines = open(path, encoding="utf-8").read().split("\n")
    open(path, "w", encoding="utf-8").write("\n".join(with_canaries(lines, fail, ok)))


if __name__ == "__main__":
    main(sys.argv[1:])
