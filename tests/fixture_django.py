"""A tiny django-like repository built at test time (no upstream code): a package ``shop`` whose ``total`` drops
the first price, a ``tests/runtests.py`` that takes django's runner's command line (``--verbosity``,
``--settings``, ``--parallel``, labels relative to ``tests/``) and runs them with unittest's verbose runner, and
a fix commit adding tests, one of them with a docstring (SWE-bench names such a test by its docstring's first
line). Plus dataset records in SWE-bench's layout and the environment that runs it."""
from __future__ import annotations

import json
from pathlib import Path

from fixture_swe import _git, _write

RUNTESTS = '''#!/usr/bin/env python
import argparse
import sys
import unittest

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("labels", nargs="*")
    parser.add_argument("--verbosity", type=int, default=1)
    parser.add_argument("--settings")
    parser.add_argument("--parallel")
    options = parser.parse_args()
    suite = unittest.defaultTestLoader.loadTestsFromNames(options.labels)
    result = unittest.TextTestRunner(verbosity=options.verbosity).run(suite)
    sys.exit(bool(result.failures or result.errors))
'''
BASE = {
    "shop/__init__.py": "def total(prices):\n    return sum(prices[1:])\n",
    "tests/runtests.py": RUNTESTS,
    "tests/shop_tests/__init__.py": "",
    "tests/shop_tests/test_total.py": (
        "import unittest\n\nfrom shop import total\n\n\nclass TotalTests(unittest.TestCase):\n"
        "    def test_empty(self):\n        self.assertEqual(total([]), 0)\n\n"
        "    def test_whole(self):\n        \"\"\"Totals are whole cents.\"\"\"\n"
        "        self.assertIsInstance(total([]), int)\n"),
    "README.md": "shop: sums prices\n",
}
FIXED_SOURCE = "def total(prices):\n    return sum(prices)\n"
FIXED_TESTS = BASE["tests/shop_tests/test_total.py"] + (
    "\n    def test_two_prices(self):\n        self.assertEqual(total([3, 4]), 7)\n\n"
    "    def test_first(self):\n        \"\"\"The first price counts.\n\n        Regression test.\n        \"\"\"\n"
    "        self.assertEqual(total([5]), 5)\n")
F2P = ["test_two_prices (shop_tests.test_total.TotalTests)", "The first price counts."]
P2P = ["test_empty (shop_tests.test_total.TotalTests)", "Totals are whole cents."]

def make_shop(root: Path) -> tuple[Path, dict]:
    """Make ``root/repos/shop`` (base commit, then the fix with its tests and a data file) and ``root/data.jsonl``
    with the instance ``lab__shop-1``. Returns the repos folder and the record."""
    repo = root / "repos" / "shop"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, BASE)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "shop")
    base = _git(repo, "rev-parse", "HEAD").strip()
    _write(repo, {"shop/__init__.py": FIXED_SOURCE, "tests/shop_tests/test_total.py": FIXED_TESTS,
                  "tests/shop_tests/prices.json": "[3, 4]\n"})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fix total")
    record = {"repo": "lab/shop", "instance_id": "lab__shop-1", "base_commit": base,
              "patch": _git(repo, "diff", base, "HEAD", "--", "shop"),
              "test_patch": _git(repo, "diff", base, "HEAD", "--", "tests"),
              "problem_statement": "total([5]) is 0: the first price is dropped.", "hints_text": "",
              "created_at": "2026-01-01T00:00:00Z", "version": "1.0", "environment_setup_commit": base,
              "FAIL_TO_PASS": json.dumps(F2P), "PASS_TO_PASS": json.dumps(P2P)}
    (root / "data.jsonl").write_text(json.dumps(record) + "\n")
    return root / "repos", record


def shop_env(**more):
    """The swe tier's environment for the shop fixture: Python 3.11 on bookworm, nothing installed, django's
    runner."""
    from rules.tiers.swe import swebench

    return swebench.Env("djangolike", "lab/shop", ("1.0",), "3.11", "bookworm", install=("true",),
                        setup_source=False, pythonpath=".", runner="django", **more)
