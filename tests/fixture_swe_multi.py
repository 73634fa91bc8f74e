"""A tiny SWE-bench-Multilingual-style Go fixture, built at test time: a module ``example.com/calc`` whose ``Add``
subtracts, a fix commit that makes it add and whose test patch adds ``TestAdd``; ``TestSub`` runs subtests (a
dataset name standing for its leaves). Instances: ``lab__calcgo-1`` (sound) and ``lab__calcgo-2`` (its only
FAIL_TO_PASS test, ``TestSub``, passes before the fix: to be rejected)."""
from __future__ import annotations

import json
from pathlib import Path

from fixture_swe import _git, _write

GO_TOOLCHAIN = "1.23.8"  # the toolchain of most of SWE-bench Multilingual's Go instances (its layers are shared)
BASE = {
    "go.mod": "module example.com/calc\n\ngo 1.21\n",
    "calc/calc.go": "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a - b }\n\n"
                    "// Sub returns a minus b.\nfunc Sub(a, b int) int { return a - b }\n",
    "calc/sub_test.go": 'package calc\n\nimport "testing"\n\nfunc TestSub(t *testing.T) {\n'
                        '\tcases := []struct {\n\t\tname string\n\t\ta, b, want int\n\t}{\n'
                        '\t\t{"small", 3, 1, 2},\n\t\t{"negative", 1, 3, -2},\n\t}\n'
                        '\tfor _, c := range cases {\n\t\tt.Run(c.name, func(t *testing.T) {\n'
                        '\t\t\tif got := Sub(c.a, c.b); got != c.want {\n'
                        '\t\t\t\tt.Fatalf("Sub(%d, %d) = %d, want %d", c.a, c.b, got, c.want)\n\t\t\t}\n\t\t})\n\t}\n}\n',
}
FIXED = "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a + b }\n\n" \
        "// Sub returns a minus b.\nfunc Sub(a, b int) int { return a - b }\n"
ADD_TEST = 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n' \
           '\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf("Add(2, 3) = %d, want 5", got)\n\t}\n}\n'
ISSUE = "Add(2, 3) returns -1; it should return 5."

SUITE = """dataset = "{dataset}"
instances = ["lab__calcgo-1", "lab__calcgo-2"]
repos = "{repos}"

[languages]
"lab/calcgo" = "go"

[toolchains."lab/calcgo"]
"0.1" = "{go}"

[prove]
cpus = 1.0
memory = "2g"
pids = 512
timeout = 300
"""


def make_calcgo(root: Path) -> tuple[Path, list[dict]]:
    """Make ``root/repos/calcgo`` (base commit, then the fix) and ``root/data.jsonl`` with the two instances.
    Returns the repos folder and the records."""
    repo = root / "repos" / "calcgo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _write(repo, BASE)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "calc")
    base = _git(repo, "rev-parse", "HEAD").strip()
    _write(repo, {"calc/calc.go": FIXED, "calc/add_test.go": ADD_TEST})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fix Add")
    gold = _git(repo, "diff", base, "HEAD", "--", "calc/calc.go")
    test_patch = _git(repo, "diff", base, "HEAD", "--", "calc/add_test.go")
    common = {"repo": "lab/calcgo", "base_commit": base, "patch": gold, "test_patch": test_patch,
              "problem_statement": ISSUE, "hints_text": "", "created_at": "2026-01-01T00:00:00Z", "version": "0.1"}
    records = [
        {**common, "instance_id": "lab__calcgo-1", "FAIL_TO_PASS": ["TestAdd"],
         "PASS_TO_PASS": ["TestSub", "TestSub/small"]},
        {**common, "instance_id": "lab__calcgo-2", "FAIL_TO_PASS": ["TestSub"], "PASS_TO_PASS": []},
    ]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return root / "repos", records


def write_multi_suite(home: Path, root: Path) -> None:
    """A lab home whose swe-multi tier reads the fixture dataset and repository."""
    (home / "evals" / "swe-multi").mkdir(parents=True, exist_ok=True)
    (home / "evals" / "swe-multi" / "suite.toml").write_text(
        SUITE.format(dataset=root / "data.jsonl", repos=root / "repos", go=GO_TOOLCHAIN))


def evaluate(home: Path, predictions: str) -> dict:
    """``doit evaluate suite=swe-multi predictions=...`` in the lab home ``home`` (asserting it exits 0), and the
    evaluation's results.json as a dict (``resolved``, ``unresolved``, ``instances``, ...)."""
    from conftest import run_doit

    res = run_doit(home, "evaluate", "suite=swe-multi", f"predictions={predictions}")
    assert res.code == 0, res.stdout[-2000:] + res.stderr[-2000:]
    name = Path(predictions).stem
    return json.loads((home / "evals" / "swe-multi" / "evaluations" / name / "results.json").read_text())
