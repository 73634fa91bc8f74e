"""The swe-multi tier without Docker: the accounting of every instance, where a Go instance's tests are, what a
name with subtests stands for, and the render of the Go fixture (tests/fixture_swe_multi.py)."""
from __future__ import annotations

import json
import re
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
from rules.tiers.swe_multi import RUNNERS, golang, javascript, languages, rust  # noqa: E402
from rules.tiers.swe_multi.render import render  # noqa: E402

DATASET = Path("/work/shared/data/swe-bench-multilingual.jsonl")


def _inst(iid, repo):
    return SimpleNamespace(id=iid, repo=repo)


def test_every_repository_is_a_candidate_or_rejected_naming_what_is_missing():
    rows = [_inst(f"{r.replace('/', '__')}-1", r) for r in languages.LANGUAGES] + [_inst("x__y-1", "x/y")]
    acc = languages.accounting(rows, RUNNERS)
    assert acc["total"] == len(rows) == len(acc["candidates"]) + len(acc["rejected"])
    assert sorted(acc["candidates"]) == sorted(f"{r.replace('/', '__')}-1" for r, lang in languages.LANGUAGES.items()
                                               if lang in ("go", "rust") or r in ("fmtlib/fmt", "axios/axios", "immutable-js/immutable-js",
                                                                                  "google/gson", "apache/druid", "javaparser/javaparser"))
    why = acc["rejected"]
    assert "Packagist" in why["laravel__framework-1"] and "rubygems.org" in why["rubocop__rubocop-1"]
    assert "Gradle distribution" in why["apache__lucene-1"] and "Gradle distribution" in why["reactivex__rxjava-1"]
    assert "Ant and Ivy" in why["projectlombok__lombok-1"]
    assert "names no language for it" in why["x__y-1"]
    assert "karma" in why["preactjs__preact-1"] and "QUnit" in why["mrdoob__three.js-1"]
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
    assert acc["by_language"]["javascript"] == {"total": 43, "candidates": 8}  # axios' 6, immutable-js' 2
    # every Go instance, and every JavaScript candidate, has its toolchain in lab's table
    assert all(golang.env_for(i.repo, i.version) for i in data.values() if languages.language(i.repo) == "go")
    # and every Rust instance its toolchain
    assert acc["by_language"]["rust"] == {"total": 43, "candidates": 43}
    assert all(rust.env_for(i.repo, i.version) for i in data.values() if languages.language(i.repo) == "rust")
    assert all(javascript.env_for(i.repo, i.version) for i in data.values() if i.id in acc["candidates"]
               and languages.language(i.repo) == "javascript")


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
    # graded where the tester cannot read it: the dataset's names would tell the canaries in -test.run apart
    assert meta["private_task"] is True
    check = out.task_files["check.sh"][0].decode()
    assert "\"$manifest\" 'TestAdd|TestSub') || finish 5" in check and " ./calc > \"$out/go-test.json\"" in check
    assert "python3 -I /opt/lab/go_canaries.py calc/add_test.go" in check
    assert subprocess.run(["bash", "-n"], input=check, text=True).returncode == 0
    # -test.run: the dataset's tests and the canaries in one sorted list (a canary is not told apart by its place)
    code = re.search(r"run=\$\(python3 -I -c '(.*?)' \"\$manifest\"", check, re.S).group(1)
    manifest = tmp_path / "canaries.json"
    manifest.write_text(json.dumps({"fail": ["TestAddNegative"], "pass": ["TestSub/zcanary", "TestAaa"]}))
    ran = subprocess.run(["python3", "-I", "-c", code, str(manifest), "TestAdd|TestSub"], capture_output=True,
                         text=True)
    assert ran.stdout.strip() == "TestAaa|TestAdd|TestAddNegative|TestSub", ran.stderr
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


def test_instances_are_chosen_as_the_swe_tier_chooses_them_langs_before_limit(tmp_path):
    """One function chooses both tiers' instances (``swebench.select``): swe-multi's ``langs=`` narrows the
    choice (the whole dataset when no instances= or all=1 names it) before ``limit=`` takes its first N, and a ``limit=`` that is no whole number above 0 is refused."""
    from fixture_swe_multi import GO_TOOLCHAIN
    from rules.config import Limits, Suite
    from rules.tiers.swe_multi import SweMultiTier

    repos, _ = make_calcgo(tmp_path)
    suite = Suite("swe-multi", "", "", (), prove=Limits(), table={
        "dataset": str(tmp_path / "data.jsonl"), "instances": ["lab__calcgo-2", "lab__calcgo-1"], "repos": str(repos),
        "languages": {"lab/calcgo": "go"}, "toolchains": {"lab/calcgo": {"0.1": GO_TOOLCHAIN}}})

    def chosen(**given):
        return [s.name for s in SweMultiTier().tasks(suite, lambda n, d=None: given.get(n, d)).chosen]

    assert chosen() == ["lab__calcgo-2", "lab__calcgo-1"]  # suite.toml's order
    assert chosen(all="1", limit="1") == ["lab__calcgo-1"]  # the dataset's order
    # langs= alone: every instance of those languages in the dataset's order, not suite.toml's few
    assert chosen(langs="go") == ["lab__calcgo-1", "lab__calcgo-2"]
    assert chosen(langs="go", limit="1") == ["lab__calcgo-1"]
    assert chosen(instances="lab__calcgo-2", langs="go") == ["lab__calcgo-2"]
    with pytest.raises(Rejected, match="langs=rust: none of the 2 instances chosen is in Rust; nothing to do"):
        chosen(langs="rust")
    for bad in ("0", "x", "²"):  # "²" is a digit to str.isdigit, and int() refuses it
        with pytest.raises(Rejected, match=f"limit={bad}: give a whole number of instances, 1 or more"):
            chosen(limit=bad)
    with pytest.raises(Rejected, match="instances=: not in the dataset: lab__nope-1"):
        chosen(instances="lab__calcgo-1,lab__nope-1")
    with pytest.raises(Rejected, match=r"not in the dataset: calcgo-1 \(a dataset id names its owner: lab__calcgo-1\)"):
        chosen(instances="calcgo-1")
    with pytest.raises(Rejected, match="langs=: unknown klingon"):
        chosen(langs="klingon")


def test_select_narrows_before_the_limit_and_tells_the_filter_whether_ids_were_named():
    data = {f"x-{n}": None for n in range(1, 5)}
    suite = SimpleNamespace(table={"instances": ["x-3", "x-9", "x-1"]})  # x-9: not in the dataset, left out
    seen = []

    def odd(ids, named):
        seen.append(named)
        return [i for i in ids if int(i[-1]) % 2]

    var = lambda given: (lambda n, d=None: given.get(n, d))  # noqa: E731
    assert swebench.select(data, suite, var({})) == ["x-3", "x-1"]
    assert swebench.select(data, suite, var({"all": "1", "limit": "1"}), odd) == ["x-1"] and seen == [False]
    assert swebench.select(data, suite, var({"instances": "x-2,x-3", "limit": "5"}), odd) == ["x-3"]
    assert seen == [False, True]


def test_a_clone_missing_an_object_is_lab_side_in_both_swe_tiers(tmp_path, monkeypatch):
    """Both tiers read an instance through ``swebench.checkout``: GitPython's ValueError for an object the clone
    lacks is Unavailable (nothing recorded against the instance), where the swe tier's render used to crash."""
    from fixture_swe import calc_env, make_calc
    from rules import upstream
    from rules.tier import Unavailable

    py_repos, _ = make_calc(tmp_path / "py")
    go_repos, _ = make_calcgo(tmp_path / "go")
    py = swebench.load_dataset(tmp_path / "py" / "data.jsonl")["lab__calc-1"]
    go = swebench.load_dataset(tmp_path / "go" / "data.jsonl")["lab__calcgo-1"]
    runner = golang.runner()
    env = runner.env_for(go.repo, go.version, {"lab/calcgo": {"0.1": "1.23.8"}})
    assert swebench.render(py, calc_env(), str(py_repos)).task_files["workspace.tar"]
    assert render(go, env, runner, str(go_repos)).task_files["workspace.tar"]

    def lacking(*args):
        raise ValueError("SHA b'0123' could not be resolved")

    monkeypatch.setattr(upstream, "tree_tar", lacking)
    with pytest.raises(Unavailable, match="lacks a file of lab/calc at .*the clone is not whole"):
        swebench.render(py, calc_env(), str(py_repos))
    with pytest.raises(Unavailable, match="lacks a file of lab/calcgo at .*the clone is not whole"):
        render(go, env, runner, str(go_repos))
