"""A tiny SWE-bench-Multilingual-style JavaScript fixture, built at test time: a package ``calcjs`` tested with
mocha (its only dependency, fetched by the environment image's build) whose ``add`` subtracts, a fix commit that
makes it add and whose test patch adds an ``adds`` test beside the ``sub`` ones. Instances: ``lab__calcjs-1``
(sound; the dataset names tests as SWE-bench's TAP parser does: the titles joined by spaces) and ``lab__calcjs-2``
(a FAIL_TO_PASS name no test of the file gives: rejected by the proof, never reported)."""
from __future__ import annotations

import json
from pathlib import Path

from fixture_swe import _git, _write

NODE = "20"  # SWE-bench's Node line for most of its JavaScript instances (its layer is shared with theirs)
PACKAGE = '{\n  "name": "calcjs",\n  "version": "1.0.0",\n  "private": true,\n  "devDependencies": {"mocha": "10.2.0"}\n}\n'
CALC = "'use strict';\n\nexports.add = (a, b) => a - b;\n\nexports.sub = (a, b) => a - b;\n"
FIXED = "'use strict';\n\nexports.add = (a, b) => a + b;\n\nexports.sub = (a, b) => a - b;\n"
TESTS = """'use strict';
const assert = require('assert');
const { add, sub } = require('../lib/calc');

describe('calc', () => {
  describe('sub', () => {
    it('subtracts small numbers', () => {
      assert.strictEqual(sub(3, 1), 2);
    });

    it('subtracts into negatives', () => {
      assert.strictEqual(sub(1, 3), -2);
    });
  });
%s});
"""
ADD_TEST = """
  describe('add', () => {
    it('adds two numbers', () => {
      assert.strictEqual(add(2, 3), 5);
    });
  });
"""
ISSUE = "add(2, 3) returns -1; it should return 5."
F2P = "calc add adds two numbers"
P2P = ["calc sub subtracts small numbers", "calc sub subtracts into negatives"]

SUITE = """dataset = "{dataset}"
instances = ["lab__calcjs-1", "lab__calcjs-2"]
repos = "{repos}"

[languages]
"lab/calcjs" = "javascript"

[toolchains."lab/calcjs"]
"0.1" = "{node}"

[prove]
cpus = 1.0
memory = "2g"
pids = 512
timeout = 300
"""


def make_calcjs(root: Path) -> tuple[Path, list[dict]]:
    """Make ``root/repos/calcjs`` (base commit, then the fix) and ``root/data.jsonl`` with the two instances.
    Returns the repos folder and the records."""
    repo = root / "repos" / "calcjs"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, {"package.json": PACKAGE, "lib/calc.js": CALC, "test/calc.test.js": TESTS % ""})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "calc")
    base = _git(repo, "rev-parse", "HEAD").strip()
    _write(repo, {"lib/calc.js": FIXED, "test/calc.test.js": TESTS % ADD_TEST})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fix add")
    gold = _git(repo, "diff", base, "HEAD", "--", "lib/calc.js")
    test_patch = _git(repo, "diff", base, "HEAD", "--", "test/calc.test.js")
    common = {"repo": "lab/calcjs", "base_commit": base, "patch": gold, "test_patch": test_patch,
              "problem_statement": ISSUE, "hints_text": "", "created_at": "2026-01-01T00:00:00Z", "version": "0.1"}
    records = [
        {**common, "instance_id": "lab__calcjs-1", "FAIL_TO_PASS": [F2P], "PASS_TO_PASS": P2P},
        {**common, "instance_id": "lab__calcjs-2", "FAIL_TO_PASS": ["calc add adds three numbers"],
         "PASS_TO_PASS": []},
    ]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return root / "repos", records


def write_js_suite(home: Path, root: Path) -> None:
    """A lab home whose swe-multi tier reads the fixture dataset and repository."""
    (home / "evals" / "swe-multi").mkdir(parents=True, exist_ok=True)
    (home / "evals" / "swe-multi" / "suite.toml").write_text(
        SUITE.format(dataset=root / "data.jsonl", repos=root / "repos", node=NODE))
