"""Batch proofs: several tasks of one track proven in one container with one runner start (rules.prove.prove_batch)
must say exactly what each task's own proof says, leave anything unusual to that own proof, and keep doit's one
prove task per exercise (only a changed exercise is proven again). Fixture exercises are written at test time."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conftest import run_doit, write_suite
from fixture_upstream import EXERCISES, STUB_PY, GOOD_PY, _python, git, make_upstream, write_exercise

PY_KEYS = ["python/hello", "python/twice", "python/colorsys", "python/wrong-reference", "python/ledger"]
JS_KEYS = ["javascript/hello", "javascript/twice", "javascript/broken"]
GO_KEYS = ["go/hello", "go/twice", "go/broken", "go/test-names"]
JAVA_KEYS = ["java/hello", "java/welcome", "java/no-stub"]


def _javascript(slug: str, **overrides) -> dict[str, str]:
    """The fixture's javascript/hello under another slug (its files named after it)."""
    base = EXERCISES["javascript/hello"]
    files = {k.replace("hello", slug): v.replace("./hello", f"./{slug}") for k, v in base.items()}
    files[".meta/config.json"] = base[".meta/config.json"].replace("hello", slug)
    files.update(overrides)
    return files


def _go(slug: str, **overrides) -> dict[str, str]:
    """The fixture's go/hello as module and package ``slug`` (its stub panics, as upstream's Go stubs do)."""
    base = EXERCISES["go/hello"]
    files = {k.replace("hello", slug): v.replace("hello", slug) for k, v in base.items() if not k.startswith(".docs")}
    files.update({k: v for k, v in base.items() if k.startswith(".docs")})
    files.update(overrides)
    return files


JAVA_TEST = """\
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

public class GreeterTest {
    @Test
    public void greetsAlice() {
        assertThat(Greeter.greet("Alice")).isEqualTo("WORD, Alice!");
    }

    @Disabled("Remove to run test")
    @ParameterizedTest
    @ValueSource(strings = {NAMES})
    public void greetsMany(String name) {
        assertThat(Greeter.greet(name)).isEqualTo("WORD, " + name + "!");
    }
}
"""
JAVA_STUB = """\
class Greeter {
    static String greet(String name) {
        throw new UnsupportedOperationException("Delete this statement and write your own implementation.");
    }
}
"""


def _java(word: str, names: str, stub: str = JAVA_STUB) -> dict[str, str]:
    """A Java exercise whose classes are Greeter and GreeterTest, whatever its slug: two of them in one batch
    JVM must not see each other's classes."""
    return {
        "src/main/java/Greeter.java": stub,
        "src/test/java/GreeterTest.java": JAVA_TEST.replace("WORD", word).replace("NAMES", names),
        ".meta/src/reference/java/Greeter.java":
            f'class Greeter {{\n    static String greet(String name) {{\n        return "{word}, " + name + "!";\n'
            f'    }}\n}}\n',
        "build.gradle": "plugins { id 'java' }\n", ".docs/instructions.md": "# Instructions\n\nGreet.\n",
        ".meta/config.json": json.dumps({"files": {
            "solution": ["src/main/java/Greeter.java"], "test": ["src/test/java/GreeterTest.java"],
            "example": [".meta/src/reference/java/Greeter.java"], "invalidator": ["build.gradle"]}}),
    }


EXTRA = {
    "python/twice": _python("twice", STUB_PY, GOOD_PY),
    # a module named like the standard library's: never batched (it would shadow `colorsys` for the other tasks)
    "python/colorsys": _python("colorsys", STUB_PY, GOOD_PY),
    "javascript/twice": _javascript("twice"),
    # the reference does not even load: its test file fails to run
    "javascript/broken": _javascript("broken", **{".meta/proof.ci.js": "export const double = (n) => n * ;\n"}),
    "java/hello": _java("Hello", '"Bob", "Carol"'),
    "java/welcome": _java("Welcome", '"Dave", "Eve", "Frank"'),
    # a stub without the class the tests use: its tests do not compile (its own proof: kept, the stub fails)
    "java/no-stub": _java("Hi", '"Gus"', stub="class Other {}\n"),
    "go/twice": _go("twice"),
    # the reference does not compile: its package fails to build, the other packages of the batch still run
    "go/broken": _go("broken", **{".meta/example.go": "package broken\n\nfunc Double(n int) int {\n\treturn n *\n}\n"}),
    # the reference calls a function only the tests declare (as upstream's go-bottle-song uses its tests' Title):
    # it builds with the tests, not as a package of its own, so check.sh refuses it, in a batch too
    "go/test-names": _go("testnames", **{
        ".meta/example.go": "package testnames\n\nfunc Double(n int) int {\n\treturn twiceOf(n)\n}\n",
        "testnames_test.go": EXERCISES["go/hello"]["hello_test.go"].replace("package hello", "package testnames")
        + "\nfunc twiceOf(n int) int { return 2 * n }\n"}),
}


def _upstream(root: Path, keys: list[str]) -> Path:
    up = make_upstream(root, only=[k for k in keys if k in EXERCISES])
    for key in keys:
        if key in EXTRA:
            write_exercise(up, key, EXTRA[key])
    git(up, "add", "-A")
    git(up, "commit", "-qm", "more fixture exercises")
    return up


def _rendered(up: Path, keys: list[str], out: Path):
    from rules.tiers.aider import exercises as aider
    from rules.files import write_atomic
    from rules.prove import BatchItem

    items = []
    tracks = sorted({k.split("/")[0] for k in keys})
    for ex in aider.discover(up, tracks):
        if f"{ex.track}/{ex.slug}" not in keys:
            continue
        r = aider.render(ex)
        for rel, (data, mode) in r.task_files.items():
            write_atomic(out / ex.task / "task" / rel, data, mode)
        for rel, (data, mode) in r.answer_files.items():
            write_atomic(out / ex.task / "answer" / rel, data, mode)
        items.append(BatchItem(out / ex.task / "task", out / ex.task / "answer", r.meta, None))
    return items


def _said(record: dict) -> tuple:
    """What a proof says, without its timings: status, reason, the ids, and both grades' verdicts and counts
    (whether a stub's early end left some of a run's canaries out, and how many, depends on where each grading's
    draw put them, so that line is left out of the comparison)."""
    def grade(g):
        evidence = [e for e in g["evidence"] if "canary tests missing from the report" not in e] if g else None
        return g and (g["verdict"], g["ran"], g["passed_tests"], g["failed_tests"], evidence, g["runner_exit"])
    return record["status"], record["reason"], record["tests"], grade(record["reference"]), grade(record["stub"])


@pytest.fixture(scope="module")
def proofs(tmp_path_factory, grader_image):
    """Every fixture task proven alone (rules.prove.prove) and in batches of its track (prove_batch)."""
    from rules.config import Limits
    from rules.prove import prove, prove_batch
    from rules.tiers.aider import BATCH_RUNNERS

    root = tmp_path_factory.mktemp("batch")
    keys = PY_KEYS + JS_KEYS + GO_KEYS + JAVA_KEYS
    up = _upstream(root / "upstream", keys)
    limits = Limits(cpus=1.0, memory=3 * 1024**3, pids=512, timeout=180)
    items = _rendered(up, keys, root / "tasks")
    single = {i.meta["task"]: prove(i.task_dir, i.answer_dir, image=grader_image, limits=limits, meta=i.meta)
              for i in items}
    batched = {}
    for track in ("python", "javascript", "go", "java"):
        batched.update(prove_batch([i for i in items if i.meta["language"] == track], BATCH_RUNNERS[track],
                                   image=grader_image, limits=limits))
    return single, batched


@pytest.mark.docker
def test_a_batch_gives_the_same_ids_and_verdicts_as_single_proofs(proofs):
    single, batched = proofs
    assert set(batched) == {"python-hello", "python-twice", "javascript-hello", "javascript-twice", "go-hello",
                            "go-twice", "java-hello", "java-welcome"}
    for task, record in batched.items():
        assert _said(record) == _said(single[task]), task
        assert record["status"] == "kept" and record["tests"], task
        # python-colorsys was not batched: not even laid into the batch container
        assert record["batch"]["size"] == (4 if task.startswith(("python", "go")) else 3), task
    # the JavaScript ids name the test file as the task does, the xtest'd tests enabled and counted
    assert batched["javascript-twice"]["tests"] == [
        "twice.spec.js › double one", "twice.spec.js › double twenty", "twice.spec.js › double zero"]
    assert [i.split("::")[0] for i in batched["python-twice"]["tests"]] == ["twice_test.TwiceTest"] * 3
    assert batched["go-twice"]["tests"] == ["TestDouble/case", "TestDouble/case#01", "TestZero"]
    # two Java tasks with the same class names in one JVM: each ran its own classes (a class loader per run)
    assert batched["java-hello"]["tests"] == ["GreeterTest::greetsAlice()", "GreeterTest::greetsMany(String)[1]",
                                              "GreeterTest::greetsMany(String)[2]"]
    assert len(batched["java-welcome"]["tests"]) == 4
    # Go's stubs panic: the run stops early, canaries unreported, and the batch's verdict stands (a test binary
    # of its own), the same as the stub's own proof
    assert batched["go-twice"]["stub"]["verdict"] == "fail" and batched["go-twice"]["stub"]["passed_tests"] == 0


@pytest.mark.docker
def test_a_broken_exercise_in_a_batch_is_left_to_its_own_proof_and_the_others_are_kept(proofs):
    single, batched = proofs
    # the failing reference, the free stub and the module named like the standard library's: each proven alone
    for task in ("python-wrong-reference", "python-ledger", "python-colorsys", "javascript-broken", "go-broken",
                 "go-test-names", "java-no-stub"):
        assert task not in batched
    assert single["java-no-stub"]["status"] == "kept"
    assert single["go-broken"]["status"] == "rejected"
    # a reference that builds only with the tests' names: refused alone, and never kept by a batch
    assert single["go-test-names"]["status"] == "rejected" and "without the tests" in single["go-test-names"]["reason"] \
        + json.dumps(single["go-test-names"]["reference"]), single["go-test-names"]
    assert batched.get("go-test-names", {}).get("status") != "kept", batched.get("go-test-names")
    assert single["python-wrong-reference"]["status"] == "rejected"
    assert single["javascript-broken"]["status"] == "rejected"
    assert single["python-ledger"]["status"] == "free"
    assert single["python-colorsys"]["status"] == "kept"
    assert batched["javascript-hello"]["status"] == batched["javascript-twice"]["status"] == "kept"


def _rendered_task(tmp_path: Path):
    """A rendered task folder ``python-x`` (render.json only), a grader stamp and limits: (folder, stamp, limits)."""
    from rules.config import Limits
    from rules.files import write_json

    b = tmp_path / "python-x"
    write_json(b / "render.json", {"meta": {"task": "python-x", "language": "python", "exercise": "x"},
                                   "error": None, "digests": {"task": {"a": "1"}}})
    stamp = tmp_path / "grader.json"
    stamp.write_text('{"id": "sha256:1"}')
    return b, stamp, Limits(cpus=1.0, memory=1024**3, pids=64, timeout=60)


def test_a_batch_proof_is_taken_only_for_exactly_its_inputs(tmp_path, monkeypatch):
    """prove_staged takes batch-proof.json only when its inputs digest is the task's current one (no Docker: the
    single proof is replaced by a marker)."""
    from rules import build, prove
    from rules.files import write_json

    b, stamp, limits = _rendered_task(tmp_path)
    monkeypatch.setattr(prove, "prove", lambda *a, **k: {"status": "alone"})
    inputs = build.proof_inputs(b, image="img", limits=limits, stamp=stamp)
    write_json(b / build.BATCH_PROOF, {"inputs": inputs, "proof": {"status": "batched"}})
    got = build.prove_staged(b, image="img", limits=limits, stamp=stamp)
    assert got == {"status": "batched", "inputs": inputs} and not (b / build.BATCH_PROOF).exists()
    assert json.loads((b / "proof.json").read_text())["inputs"] == inputs
    # the same batch proof after the image was rebuilt (or the render changed): ignored, proven alone
    for change in (lambda: stamp.write_text('{"id": "sha256:2"}'),
                   lambda: (b / "render.json").write_text((b / "render.json").read_text().replace('"1"', '"2"'))):
        write_json(b / build.BATCH_PROOF, {"inputs": build.proof_inputs(b, image="img", limits=limits, stamp=stamp),
                                           "proof": {"status": "batched"}})
        change()
        assert build.prove_staged(b, image="img", limits=limits, stamp=stamp)["status"] == "alone"


def test_a_proof_made_for_exactly_the_current_inputs_stands_after_a_killed_gen(tmp_path, monkeypatch):
    """doit writes its database when a command ends: a gen killed after a proof finished left proof.json without
    doit's record, and the next gen proved it again. prove_staged keeps a proof of exactly its inputs (no
    Docker: the proof itself is a counting marker); an environmental rejection or other inputs prove again."""
    from rules import build, prove
    from rules.files import write_json

    b, stamp, limits = _rendered_task(tmp_path)
    calls = []
    monkeypatch.setattr(prove, "prove", lambda *a, **k: calls.append(1) or {"task": "python-x", "status": "kept"})
    first = build.prove_staged(b, image="img", limits=limits, stamp=stamp)
    assert build.prove_staged(b, image="img", limits=limits, stamp=stamp) == first and len(calls) == 1
    write_json(b / "proof.json", {**first, "status": "rejected", "environmental": "timeout"})
    build.prove_staged(b, image="img", limits=limits, stamp=stamp)
    assert len(calls) == 2  # the machine's rejection is proved again when doit asks (reprove=1)
    stamp.write_text('{"id": "sha256:2"}')  # the image was built again
    build.prove_staged(b, image="img", limits=limits, stamp=stamp)
    assert len(calls) == 3
    (b / "proof.json").write_text("{damaged")
    build.prove_staged(b, image="img", limits=limits, stamp=stamp)
    assert len(calls) == 4


def test_batches_split_a_track_round_robin_and_only_batchable_tracks(tmp_path):
    from rules.tier import TaskSpec
    from rules.tiers.aider import AiderTier

    def spec(lang, n):
        return TaskSpec(f"{lang}-{n}", {"language": lang, "exercise": str(n)}, (), {}, "img", tmp_path / "s")

    specs = [spec("python", n) for n in range(5)] + [spec("rust", n) for n in range(4)] + [spec("javascript", 0)]
    got = AiderTier().batches(None, specs, jobs=2)
    assert got == {"python-1": ["python-0", "python-2", "python-4"], "python-2": ["python-1", "python-3"]}
    assert AiderTier().batches(None, specs, jobs=1)["python-1"] == [f"python-{n}" for n in range(5)]


@pytest.mark.docker
def test_gen_proves_a_track_in_batches_and_a_change_reproves_only_itself(tmp_path, grader_image):
    keys = ["python/hello", "python/twice", "python/wrong-reference", "javascript/hello", "javascript/twice"]
    up = _upstream(tmp_path / "upstream", keys)
    home = tmp_path / "home"
    write_suite(home, up, languages=("javascript", "python"))
    first = run_doit(home, "gen:aider", "all=1", "jobs=1")
    assert first.code == 0, first.stderr[-3000:] + first.stdout[-3000:]
    assert first.executed("batch:") == {"batch:aider/python-1", "batch:aider/javascript-1"}
    assert first.executed("prove:") == {f"prove:aider/{k.replace('/', '-')}" for k in keys}
    order = [line[3:].strip() for line in first.stdout.splitlines() if line.startswith(".  ")]
    assert order.index("image:grader") < min(order.index(b) for b in first.executed("batch:")), \
        "a batch waits for its image (it ran first, and its tasks were proven alone)"
    assert not [line for line in (first.stdout + first.stderr).splitlines() if "missing" in line and "alone" in line]
    build = home / ".lab/build/aider"
    proof = {k: json.loads((build / k.replace("/", "-") / "proof.json").read_text()) for k in keys}
    assert {k for k, p in proof.items() if "batch" in p} == {"python/hello", "python/twice", "javascript/hello",
                                                             "javascript/twice"}
    assert proof["python/wrong-reference"]["status"] == "rejected"
    manifest = json.loads((home / "evals/aider/manifest.json").read_text())
    assert {e["task"]: e["tests"] for e in manifest["tasks"]} == {
        "python-hello": 3, "python-twice": 3, "python-wrong-reference": 3, "javascript-hello": 3,
        "javascript-twice": 3}

    again = run_doit(home, "gen:aider", "all=1", "jobs=1")
    assert again.code == 0 and again.executed("prove:") == set() and again.executed("batch:") == set()
    said = again.stdout.splitlines()
    assert [s for s in said if s.startswith("tier aider: ")] and not [s for s in said if s.startswith("-- ")], said
    assert not [s for s in said if s.startswith(".  ") and s != ".  pull:aider"], "a no-op gen: its summary alone"

    test = up / "python/exercises/practice/twice/twice_test.py"
    test.write_text(test.read_text() + "\n    def test_four(self):\n        self.assertEqual(double(2), 4)\n")
    git(up, "commit", "-qam", "one more test")
    third = run_doit(home, "gen:aider", "all=1", "jobs=1")
    assert third.code == 0, third.stderr[-2000:]
    assert third.executed("prove:") == {"prove:aider/python-twice"}
    assert third.executed("batch:") == set()
    changed = json.loads((build / "python-twice" / "proof.json").read_text())
    assert changed["status"] == "kept" and len(changed["tests"]) == 4 and "batch" not in changed
    assert json.loads((build / "python-hello" / "proof.json").read_text()) == proof["python/hello"]
