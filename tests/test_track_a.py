"""Rendering facts of the C++, Java and Rust tracks (pure: no Docker). Fixtures are tiny exercises written here."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from rules.tiers.aider import exercises as aider


def exercise(tmp_path: Path, track: str, slug: str, files: dict[str, str], config: dict) -> aider.Exercise:
    d = tmp_path / track / "exercises" / "practice" / slug
    for rel, text in {**files, ".docs/instructions.md": "Do it.\n",
                      ".meta/config.json": json.dumps({"files": config})}.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    return aider.Exercise(track, slug, d)


def java_hello(tmp_path: Path) -> aider.Exercise:
    return exercise(tmp_path, "java", "hello", {
        "src/main/java/Hello.java": "class Hello {}\n",
        "src/main/java/Helper.java": "class Helper {}\n",
        "src/test/java/HelloTest.java": "class HelloTest {}\n",
        "src/test/java/OtherTest.java": "class OtherTest {}\n",
        ".meta/src/reference/java/Hello.java": "class Hello { /* ref */ }\n",
        "build.gradle": "plugins { id 'java' }\n",
    }, {"solution": ["src/main/java/Hello.java"], "test": ["src/test/java/HelloTest.java"],
        "example": [".meta/src/reference/java/Hello.java"], "editor": ["src/main/java/Helper.java"]})


def rust_deps(tmp_path: Path) -> aider.Exercise:
    return exercise(tmp_path, "rust", "deps", {
        "Cargo.toml": '[package]\nname = "deps"\nversion = "1.0.0"\nedition = "2021"\n\n[features]\nextra = []\n',
        "src/lib.rs": "pub fn f() {}\n",
        "tests/deps.rs": "#[test]\nfn t() {}\n",
        "tests/more_deps.rs": "#[test]\n#[ignore]\nfn u() {}\n",
        ".meta/example.rs": "pub fn f() { /* ref */ }\n",
        ".meta/Cargo-example.toml": '[package]\nname = "deps"\nversion = "1.0.0"\nedition = "2021"\n\n'
                                    '[dependencies]\nrand = "0.3.12"\n',
    }, {"solution": ["src/lib.rs", "Cargo.toml"], "test": ["tests/deps.rs", "tests/more_deps.rs"],
        "example": [".meta/example.rs"]})


def cpp_two_words(tmp_path: Path) -> aider.Exercise:
    return exercise(tmp_path, "cpp", "two-words", {
        "two_words.cpp": "", "two_words.h": "", "two_words_test.cpp": "", "CMakeLists.txt": "",
        "test/catch.hpp": "", "test/tests-main.cpp": "",
        ".meta/example.cpp": "// ref\n", ".meta/example.h": "// ref h\n",
    }, {"solution": ["two_words.cpp", "two_words.h"], "test": ["two_words_test.cpp"],
        "example": [".meta/example.cpp", ".meta/example.h"]})


def check_sh(rendered: aider.Rendered) -> str:
    return rendered.task_files["check.sh"][0].decode()


def test_java_reference_maps_onto_src_main_java_and_stays_out_of_the_task(tmp_path):
    r = aider.render(java_hello(tmp_path))
    assert r.answer_files["src/main/java/Hello.java"][0] == b"class Hello { /* ref */ }\n"
    assert set(r.answer_files) == {"src/main/java/Hello.java"}
    assert not any(".meta" in name for name in r.task_files)


def test_java_and_cpp_tasks_name_the_junit_report_their_runners_write(tmp_path):
    # what check.sh does with it (the runners' reports, test ids, canaries, the tester) is tested on the real
    # engine in tests/test_honest_java.py and tests/test_honest_cpp.py; the parser in tests/test_reports_jc.py
    assert aider.render(java_hello(tmp_path / "j")).meta["report"] == "junit"
    assert aider.render(cpp_two_words(tmp_path / "c")).meta["report"] == "junit"


def test_rust_cargo_example_replaces_cargo_toml_in_the_answer_only(tmp_path):
    r = aider.render(rust_deps(tmp_path))
    assert b"rand" in r.answer_files["Cargo.toml"][0]
    assert r.answer_files["src/lib.rs"][0] == b"pub fn f() { /* ref */ }\n"
    assert b"rand" not in r.task_files["workspace/Cargo.toml"][0]


def test_rust_check_runs_every_test_file_with_ignored_and_feature_gated_tests(tmp_path):
    text = check_sh(aider.render(rust_deps(tmp_path)))
    assert re.search(r"as_tester timeout --signal=KILL \d+ sh -c 'exec cargo test --offline --all-features \"\$@\" --no-run "
                     r"\\\n  --message-format=json-render-diagnostics > \"\$0\" 2> \"\$0.err\"' \"\$build/cargo.json\" "
                     r"--test deps --test more_deps\n", text)
    assert "rm -rf tests .cargo build.rs Cargo.lock target\n" in text
    # a private target folder per grading; libtest's JSON (RUSTC_BOOTSTRAP only when running) goes to $out
    assert "export CARGO_TARGET_DIR=/tmp/lab-target" in text and "/cache" not in text
    run = text[text.index("as_tester env RUSTC_BOOTSTRAP=1"):]
    assert "--format json --include-ignored > \"$0\" 2> \"$1\"' \"$out/libtest-$name.json\"" in run[:300]
    assert text.count("RUSTC_BOOTSTRAP") == 2  # the run line and the comment above it: never the build


def test_rust_canaries_go_into_the_first_test_target(tmp_path):
    # the writer itself (lab_grader/rust_canaries.py) is tested by import in tests/test_canaries_rust.py
    text = check_sh(aider.render(rust_deps(tmp_path)))
    block = text[text.index("# 3. The canaries"):text.index("\nchown -R")]
    assert ('\npython3 -I -m lab_grader.rust_canaries tests/deps.rs "$canary_fail" "$canary_pass" "$manifest" '
            '</dev/null\n') in block
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/deps.rs").write_text("#[test]\nfn plain_case() {}\n")
    grader = Path(__file__).resolve().parents[1] / "templates" / "images" / "grader"
    block = block.replace("python3 -I -m", f"{sys.executable} -m")
    subprocess.run(["bash", "-c", "canary_fail=k0123456789a canary_pass=kba987654321 manifest=canaries.json\n"
                    + block], cwd=tmp_path, check=True, env={**os.environ, "PYTHONPATH": str(grader)})
    manifest = json.loads((tmp_path / "canaries.json").read_text())
    written = (tmp_path / "tests/deps.rs").read_text()
    assert "#[test]\nfn plain_case() {}\n" in written and "k0123456789a" not in written
    for test_id in manifest["fail"] + manifest["pass"]:
        assert test_id.startswith("deps::") and f"fn {test_id[6:]}() {{\n    assert_eq!(" in written


def test_rust_check_merges_cargo_toml_as_root_and_refuses_an_invalid_one(tmp_path):
    # the merge itself (lab_grader/cargo_manifest.py) is tested by import in tests/test_grader_scripts.py
    check = check_sh(aider.render(rust_deps(tmp_path)))
    enable = check[check.index("# 2. Enable"):check.index("# 3. The canaries")]
    assert ('\npython3 -I -m lab_grader.cargo_manifest "$task/workspace/Cargo.toml" Cargo.toml "$log.deps" </dev/null \\\n'
            '  || { echo "lab-check: Cargo.toml is not valid TOML"; finish 0; }\n') in enable


def test_cpp_reference_maps_onto_the_solution_files_by_extension(tmp_path):
    r = aider.render(cpp_two_words(tmp_path))
    assert r.answer_files["two_words.cpp"][0] == b"// ref\n" and r.answer_files["two_words.h"][0] == b"// ref h\n"
    assert set(r.answer_files) == {"two_words.cpp", "two_words.h"}
