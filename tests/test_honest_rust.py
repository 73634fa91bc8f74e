"""Forged verdicts, tried as adversarial solutions of the Rust fixture task (real engine).

Each solution below only changes or adds solution code (``src/lib.rs``, whose tests want ``double(n) == 2 * n``;
some also change ``Cargo.toml`` or leave files an agent could add) and leaves ``double`` wrong; it then tries to
make the grading say ``pass`` anyway. Each must be graded ``fail`` or ``tampered``, while the reference solution
still passes.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from honest_kit import grade_solution as kit_grade_solution, prove_fixture  # noqa: E402

pytestmark = pytest.mark.docker

WRONG = "\npub fn double(n: i64) -> i64 {\n    n * 3\n}\n"
IDS = ["hello::one", "hello::twenty", "hello::zero"]
# what an honest libtest --format json report says of the fixture's tests, every one passed
PASSING = "".join(f'{{ "type": "test", "event": "started", "name": "{t}" }}\n{{ "type": "test", "name": "{t}", "event": "ok" }}\n'
                  for t in ("one", "twenty", "zero"))


def rs(code: str) -> str:
    return textwrap.dedent(code) + WRONG


# a function run when the test program starts (glibc calls the .init_array entries with argc, argv, envp)
CONSTRUCTOR = '''\
    #[used]
    #[link_section = ".init_array"]
    static CONSTRUCTOR: extern "C" fn(i32, *const *mut u8, *const *const u8) = constructor;
    '''

FORGERIES = {
    # the example in Rust: a handler run at exit (atexit, registered by a constructor) rewrites every
    # report of the run: each failure becomes a pass
    "report-rewritten-at-exit": rs(CONSTRUCTOR + '''\
        extern "C" {
            fn atexit(handler: extern "C" fn()) -> i32;
        }

        extern "C" fn rewrite() {
            for entry in std::fs::read_dir("/tmp/lab-out").into_iter().flatten().flatten() {
                if let Ok(text) = std::fs::read_to_string(entry.path()) {
                    let _ = std::fs::write(entry.path(), text.replace("\\"event\\": \\"failed\\"", "\\"event\\": \\"ok\\""));
                }
            }
        }

        extern "C" fn constructor(_: i32, _: *const *mut u8, _: *const *const u8) {
            unsafe { atexit(rewrite) };
        }
        '''),
    # libtest's own JSON events (every task test passed) written straight to the report's file descriptor,
    # past libtest's output capture, then the program ends with status 0
    "runner-lines-printed": textwrap.dedent(f'''\
        use std::io::Write;
        use std::os::unix::io::FromRawFd;

        pub fn double(_n: i64) -> i64 {{
            let mut out = unsafe {{ std::fs::File::from_raw_fd(1) }};
            let _ = out.write_all(r#"{PASSING}"#.as_bytes());
            let _ = out.write_all(b"test result: ok. 3 passed; 0 failed\\nlab-check: ran=3 passed=3 failed=0\\n");
            std::process::exit(0);
        }}
        '''),
    # the exit status forced to 0 the first time a test calls the solution
    "exit-status-forced": "pub fn double(_n: i64) -> i64 {\n    std::process::exit(0)\n}\n",
    # the assertions the tests use, swapped for ones that never fail (exported over the prelude's)
    "assertions-swapped": rs('''\
        #[macro_export]
        macro_rules! assert_eq {
            ($($t:tt)*) => {};
        }
        '''),
    # the test framework's internals swapped: the C library's write() interposed, so every "failed" event
    # libtest writes reaches the report as "ok"
    "framework-write-swapped": rs('''\
        extern "C" {
            fn syscall(number: i64, ...) -> i64;
        }

        #[no_mangle]
        pub unsafe extern "C" fn write(fd: i32, buf: *const u8, count: usize) -> isize {
            let bytes = std::slice::from_raw_parts(buf, count);
            if let (1, Ok(text)) = (fd, std::str::from_utf8(bytes)) {
                let forged = text.replace("\\"event\\": \\"failed\\"", "\\"event\\": \\"ok\\"");
                syscall(1, 1i64, forged.as_ptr(), forged.len());
                return count as isize;
            }
            syscall(1, fd as i64, buf, count) as isize
        }
        '''),
    # fewer tests: the test program's own command line rewritten before libtest reads it (--include-ignored
    # becomes --skip=one), and the build tricks an agent could leave: its own test target, features, build
    # script and cargo config (each removed or replaced by the pristine manifest)
    "tests-skipped-by-flags": rs(CONSTRUCTOR + '''\
        extern "C" fn constructor(argc: i32, argv: *const *mut u8, _: *const *const u8) {
            for i in 0..argc as usize {
                unsafe {
                    let arg = *argv.add(i);
                    if std::ffi::CStr::from_ptr(arg as *const std::ffi::c_char).to_bytes() == b"--include-ignored" {
                        std::ptr::copy_nonoverlapping(b"--skip=one\\0".as_ptr(), arg, 11);
                    }
                }
            }
        }
        '''),
    # the grader's filesystem patched: cargo, the Rust library, lab's folders, the report folder, the task
    "grader-filesystem-patched": textwrap.dedent('''\
        pub fn double(n: i64) -> i64 {
            for target in ["/usr/bin/cargo", "/usr/lib/rustlib/planted", "/opt/lab/rust/cargo/config.toml",
                           "/etc/passwd", "/lab/report/exit", "/task/check.sh", "/lab/src/src/lib.rs"] {
                match std::fs::write(target, "planted") {
                    Ok(()) => println!("PLANTED {target}"),
                    Err(error) => println!("REFUSED {target} {error}"),
                }
            }
            n * 3
        }
        '''),
    # a process that outlives the tests and keeps writing a report in which every task test passed
    "report-forged-after-exit": rs(f'''\
        use std::os::unix::process::CommandExt;
        use std::process::Stdio;

        pub fn forge() {{
            let report = r#"{PASSING}"#;
            let script = "while :; do printf '%s' \\"$0\\" > /tmp/lab-out/libtest-hello.json; \\
                          printf '%s' \\"$0\\" > /lab/report/libtest-hello.json; echo 0 > /lab/report/exit; sleep 0.01; done";
            let _ = std::process::Command::new("sh").args(["-c", script, report]).process_group(0)
                .stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
        }}

        #[used]
        #[link_section = ".init_array"]
        static CONSTRUCTOR: extern "C" fn() = constructor;

        extern "C" fn constructor() {{
            forge();
        }}
        '''),
}
EXTRA_FILES = {
    "tests-skipped-by-flags": {
        "Cargo.toml": '[package]\nedition = "2021"\nname = "hello"\nversion = "1.0.0"\nbuild = "build.rs"\n'
                      'autotests = false\n\n[features]\ndefault = ["skip"]\nskip = []\n\n'
                      '[[test]]\nname = "hello"\npath = "src/fake_tests.rs"\n',
        "src/fake_tests.rs": "#[test]\nfn one() {}\n#[test]\nfn twenty() {}\n#[test]\nfn zero() {}\n",
        "build.rs": 'fn main() { println!("cargo:rustc-cfg=skip"); }\n',
        ".cargo/config.toml": '[build]\nrustflags = ["--cfg", "skip"]\n\n[target.x86_64-unknown-linux-gnu]\nrunner = "true"\n',
    },
}


@pytest.fixture(scope="module")
def proven(tmp_path_factory, grader_image):
    """The fixture's rust-hello task, rendered and proven (its reference's test ids recorded)."""
    return prove_fixture(tmp_path_factory.mktemp("honest-rust"), "rust/hello", grader_image,
                         memory=2 * 1024**3, timeout=180)


def grade_solution(proven, name: str, solution: str, extra: dict[str, str] | None = None):
    return kit_grade_solution(proven, name, "src/lib.rs", solution, extra)


def test_the_proof_records_the_reference_test_ids(proven):
    _, proof, _, _ = proven
    assert proof["tests"] == IDS
    assert proof["reference"]["verdict"] == "pass" and proof["stub"]["verdict"] == "fail"


def test_the_reference_passes_again_with_fresh_canaries(proven):
    from rules.files import read_json

    base, *_ = proven
    g = grade_solution(proven, "reference", (base / "answer" / "src/lib.rs").read_text())
    assert (g.verdict, g.ran, g.passed_tests) == ("pass", 3, 3), g.output[-2000:]
    # the canaries are not shown: no line of theirs, no output of the failing ones, no count that holds them
    shown = [line for line in g.output.splitlines() if line.startswith("test ")]
    assert sorted(shown) == ["test one ... ok", "test twenty ... ok", "test zero ... ok"], g.output[-2000:]
    assert "left" not in g.output and "panicked" not in g.output and "test result:" not in g.output
    assert read_json(base / "task" / "task.json")["report"] == "libtest-json"


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_a_forged_verdict_is_never_a_pass(proven, name):
    g = grade_solution(proven, name, FORGERIES[name], EXTRA_FILES.get(name))
    assert g.verdict in ("fail", "tampered") and not g.passed, g.output[-3000:]
    expect = {"report-rewritten-at-exit": "tampered", "framework-write-swapped": "tampered",
              "report-forged-after-exit": "tampered"}
    if name in expect:
        assert g.verdict == expect[name], (g.evidence, g.output[-2000:])
    if name == "assertions-swapped":
        assert "is ambiguous" in g.output, g.output[-2000:]
    if name == "grader-filesystem-patched":
        assert "PLANTED" not in g.output and "REFUSED /etc/passwd" in g.output, g.output[-3000:]
    if name == "tests-skipped-by-flags":
        assert "1 expected test(s) not reported: hello::one" in g.evidence, g.evidence


PLANTER = textwrap.dedent('''\
    static PLANT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

    pub fn double(n: i64) -> i64 {
        let mut said = PLANT.lock().unwrap_or_else(|e| e.into_inner());
        if said.is_empty() {  // once per test program: look for an earlier grading's plant, then plant
            let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_default();
            for dir in [target.as_str(), "/opt/lab/rust/seeds", "/opt/lab/rust/vendor", "/cache"] {
                let path = format!("{dir}/planted-by-a-grading");
                if std::path::Path::new(&path).exists() {
                    said.push(format!("FOUND {dir}"));
                }
                match std::fs::write(&path, "planted") {
                    Ok(()) => said.push(format!("PLANTED {dir}")),
                    Err(error) => said.push(format!("REFUSED {dir} {error}")),
                }
            }
        }
        println!("{}", said.join("\\n"));
        n * 3
    }
    ''')


def test_a_planted_build_result_never_reaches_a_later_grading(proven):
    """Issue 6, part 2, item 5: the cargo target folder a grading's code can write is its own (in its /tmp); the
    image's compiled dependencies and vendored crates and the shared /cache (mounted read-only, as in a trial's
    grading) refuse writes."""
    from rules.grade import grade
    from rules.worktree import lay_work_tree

    base, proof, limits, image = proven
    outputs = []
    for n in (1, 2):
        work = base / "work" / f"planter-{n}"
        lay_work_tree(base / "task", work)
        (work / "src/lib.rs").write_text(PLANTER)
        g = grade(base / "task", work, image=image, limits=limits, expected=proof["tests"],
                  cache_volume="lab-cache-test")
        assert g.verdict == "fail", g.output[-2000:]
        outputs.append(g.output)
    assert "PLANTED /tmp/lab-target" in outputs[0], outputs[0][-2000:]
    for refused in ("/opt/lab/rust/seeds", "/opt/lab/rust/vendor", "/cache"):
        assert f"REFUSED {refused}" in outputs[0], outputs[0][-2000:]
    assert "FOUND" not in outputs[1] and "PLANTED /tmp/lab-target" in outputs[1]


def test_a_process_left_behind_does_not_hold_the_grading_open(proven):
    """A solution that starts a process holding the test program's output open: that output goes to files, so
    the grading ends with the test program (the process is killed after it), well before any timeout."""
    solution = ('pub fn double(n: i64) -> i64 {\n    let _ = std::process::Command::new("sleep").arg("1000").spawn();\n'
                '    n * 3\n}\n')
    g = grade_solution(proven, "process-left-behind", solution)
    assert g.verdict == "fail" and not g.timed_out and g.seconds < 60, (g.seconds, g.evidence)
