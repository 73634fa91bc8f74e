"""The swe-multi tier without Docker: the accounting of every instance, where a Go instance's tests are, what a
name with subtests stands for, and the render of the Go fixture (tests/fixture_swe_multi.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixture_swe import lay_rendered  # noqa: E402
from fixture_swe_multi import make_calcgo  # noqa: E402

from rules.tier import Rejected  # noqa: E402
from rules.tiers.swe import swebench  # noqa: E402
from rules.tiers.swe_multi import RUNNERS, golang, languages  # noqa: E402
from rules.tiers.swe_multi.render import render  # noqa: E402

DATASET = Path("/work/shared/data/swe-bench-multilingual.jsonl")


def _inst(iid, repo):
    return SimpleNamespace(id=iid, repo=repo)


def test_every_repository_is_a_candidate_or_rejected_naming_what_is_missing():
    rows = [_inst(f"{r.replace('/', '__')}-1", r) for r in languages.LANGUAGES] + [_inst("x__y-1", "x/y")]
    acc = languages.accounting(rows, RUNNERS)
    assert acc["total"] == len(rows) == len(acc["candidates"]) + len(acc["rejected"])
    assert sorted(acc["candidates"]) == sorted(f"{r.replace('/', '__')}-1" for r, lang in languages.LANGUAGES.items()
                                               if lang == "go")
    why = acc["rejected"]
    assert "Packagist" in why["laravel__framework-1"] and "rubygems.org" in why["rubocop__rubocop-1"]
    assert "Gradle distribution" in why["apache__lucene-1"] and "Gradle distribution" in why["reactivex__rxjava-1"]
    assert why["google__gson-1"].startswith("Java is not supported by lab's swe-multi tier yet")
    assert why["tokio-rs__tokio-1"].startswith("Rust is not supported")
    assert "names no language for it" in why["x__y-1"]
    # a repository a suite adds is a candidate in its language
    assert languages.blocked("x/y", RUNNERS, {"x/y": "go"}) is None
    assert "is none of" in languages.blocked("x/y", RUNNERS, {"x/y": "cobol"})


@pytest.mark.skipif(not DATASET.is_file(), reason="SWE-bench Multilingual is not on this machine")
def test_the_real_dataset_is_accounted_for_all_300():
    data = swebench.load_dataset(DATASET)
    acc = languages.accounting(data.values(), RUNNERS)
    assert acc["total"] == 300 and len(acc["candidates"]) + len(acc["rejected"]) == 300
    assert acc["by_language"]["go"] == {"total": 42, "candidates": 42}
    assert acc["by_language"]["php"]["candidates"] == 0 and acc["by_language"]["ruby"]["candidates"] == 0
    # every Go instance has its toolchain in lab's table
    assert all(golang.env_for(i.repo, i.version) for i in data.values() if languages.language(i.repo) == "go")


FILES = {
    "a_test.go": 'package x\n\nfunc TestPlain(t *testing.T) {\n\tif 1 != 1 {\n\t\tt.Fatal("no")\n\t}\n}\n\n'
                 'func TestTable(t *testing.T) {\n\tfor _, c := range cases {\n\t\tt.Run(c.name, func(t *testing.T) {})\n\t}\n}\n',
    "sub/b_test.go": 'package sub\n\nfunc TestOther(t *testing.T) {}\n\nfunc helper() {\n\tt.Run("x", nil)\n}\n',
    "sub/c_test.go": "package sub\n",
    "sub/testdata/d_test.go": "package d\n\nfunc TestOther(t *testing.T) {}\n",
}


def test_go_tests_are_found_by_their_functions_with_their_packages_and_subtests():
    found = golang.locate(["TestTable", "TestTable/one", "TestOther", "TestPlain"], ["TestOther"], FILES)
    assert found.packages == (".", "./sub")  # testdata is no package of the run
    assert found.top == ("TestOther", "TestPlain", "TestTable")
    assert found.parents == ("TestTable",)  # TestOther's next function runs a subtest: none of its own
    assert found.canary_file == "sub/b_test.go"
    assert found.test_files == ("a_test.go", "sub/b_test.go", "sub/c_test.go")


def test_go_tests_no_file_defines_or_two_packages_define_are_rejected_by_name():
    with pytest.raises(Rejected, match="defined in no _test.go file.*TestGone"):
        golang.locate(["TestGone/x", "TestPlain"], ["TestPlain"], FILES)
    twice = {**FILES, "other/e_test.go": "package other\n\nfunc TestPlain(t *testing.T) {}\n"}
    with pytest.raises(Rejected, match="more than one package.*TestPlain"):
        golang.locate(["TestPlain"], ["TestPlain"], twice)
    # unless the test patch touches exactly one of those packages (hugo-12579, terraform-34814)
    assert golang.locate(["TestPlain"], ["TestPlain"], twice, ["other/e_test.go"]).packages == ("./other",)


def test_a_go_name_with_subtests_stands_for_its_leaves_and_a_leaf_for_itself():
    runs = [["TestTable/one", "TestTable/two", "TestTable/two/deep", "TestTableau", "TestPlain"]] * 3
    steady, flaky, lost = swebench.gold_outcomes(["TestPlain"], {"TestTable"}, runs, "/")
    assert steady["TestTable"] == ["TestTable/one", "TestTable/two", "TestTable/two/deep"]  # never TestTableau
    assert not flaky and not lost
    # the swe tier's own separator is unchanged: a space
    assert swebench.members("t[a", ["t[a b]", "t[a/b]"], {"t[a"}) == ["t[a b]"]
    # a parent none of whose leaves passed is lost: the instance is rejected, never weakened
    assert swebench.gold_outcomes([], {"TestGone"}, runs, "/")[2] == ["TestGone"]


def test_the_go_fixture_renders_a_task_whose_check_runs_only_its_packages(tmp_path):
    repos, records = make_calcgo(tmp_path / "src")
    inst = swebench._instance(records[0])
    env = golang.env_for("lab/calcgo", "0.1", {"lab/calcgo": {"0.1": "1.23.8"}})
    assert env.tag == "lab/swe-multi-env:calcgo-0.1" and env.toolchain == "1.23.8"
    out = render(inst, env, golang.runner(), str(repos))
    meta = json.loads(out.task_files["task.json"][0])
    assert meta["tier"] == "swe-multi" and meta["report"] == "go-json" and meta["language"] == "go"
    assert meta["fail_to_pass"] == ["TestAdd"] and meta["pass_to_pass"] == ["TestSub", "TestSub/small"]
    assert meta["truncated"] == ["TestSub"] and meta["subtest_sep"] == "/" and meta["canaries"] == "manifest"
    check = out.task_files["check.sh"][0].decode()
    assert "run='TestAdd|TestSub'" in check and " ./calc > \"$out/go-test.json\"" in check
    assert "python3 -I /opt/lab/go_canaries.py calc/add_test.go" in check
    assert subprocess.run(["bash", "-n"], input=check, text=True).returncode == 0
    assert set(out.answer_files) == {"calc/calc.go"}
    # the held-out test file is in no work tree
    tree = lay_rendered(out, tmp_path / "laid")
    assert not (tree / "calc" / "add_test.go").exists() and (tree / "calc" / "sub_test.go").is_file()
    assert "TestAdd" not in out.task_files["prompt.txt"][0].decode()


def test_the_go_fixture_renders_pretest_with_its_packages_tests_at_base_and_no_held_out_one(tmp_path):
    repos, records = make_calcgo(tmp_path / "src")
    env = golang.env_for("lab/calcgo", "0.1", {"lab/calcgo": {"0.1": "1.23.8"}})
    out = render(swebench._instance(records[0]), env, golang.runner(), str(repos))
    pre = out.task_files[swebench.PRETEST][0].decode()
    assert subprocess.run(["bash", "-n"], input=pre, text=True).returncode == 0
    assert "holdout/test.patch" not in pre and "run='" not in pre and " -run " not in pre  # every test of ./calc
    assert " ./calc > \"$out/go-test.json\"" in pre
    # the canaries go into a test file the base has (the first FAIL_TO_PASS test's file is the held-out one)
    assert "python3 -I /opt/lab/go_canaries.py calc/sub_test.go" in pre
    assert "tar -xf \"$task/workspace.tar\" calc/sub_test.go" in pre  # its test files laid back as at base
    # a base without test files in the instance's packages has no pre-existing tests to keep
    assert golang.pretest({"package_base_test_files": [], "canary_file": "calc/add_test.go"}, set()) is None


def test_an_instance_whose_test_is_nowhere_is_rejected_naming_it(tmp_path):
    repos, records = make_calcgo(tmp_path / "src")
    inst = swebench._instance({**records[0], "FAIL_TO_PASS": ["TestMissing"]})
    env = golang.env_for("lab/calcgo", "0.1", {"lab/calcgo": {"0.1": "1.23.8"}})
    with pytest.raises(Rejected, match="TestMissing"):
        render(inst, env, golang.runner(), str(repos))
