"""Honest grading of the Java track against adversarial solutions, on the real engine (Docker).

A tiny exercise (``greeter``) is written here at test time, rendered and proven like any task; then wrong
solutions that try to forge a pass are graded against the reference's test ids with fresh canaries. Each one
changes or adds only solution code (src/main/java), as an agent could, and must be graded ``fail`` or
``tampered``, never ``pass``; the reference must still pass. The solution's side runs under Java's security
manager (see templates/aider/java/check.sh.j2), so most forgeries are refused outright: the tests check the
refusal as well as the verdict.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rules import prove, worktree
from rules.tiers.aider import exercises as aider
from rules.config import Limits
from rules.files import write_atomic
from rules.grade import grade

pytestmark = pytest.mark.docker

LIMITS = Limits(cpus=1.0, memory=3 * 1024**3, pids=512, timeout=180)

TEST = """\
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

public class GreeterTest {

    @Test
    public void greetsAlice() {
        assertThat(Greeter.greet("Alice")).isEqualTo("Hello, Alice!");
    }

    @Disabled("Remove to run test")
    @Test
    public void greetsBob() {
        assertThat(Greeter.greet("Bob")).isEqualTo("Hello, Bob!");
    }

    @Disabled("Remove to run test")
    @ParameterizedTest
    @ValueSource(strings = {"Carol", "Dave"})
    public void greetsMany(String name) {
        assertThat(Greeter.greet(name)).isEqualTo("Hello, " + name + "!");
    }

    @Nested
    class Politely {
        @Disabled("Remove to run test")
        @Test
        public void greetsEve() {
            assertThat(Greeter.greet("Eve")).endsWith("Eve!");
        }
    }
}
"""
STUB = """\
class Greeter {
    static String greet(String name) {
        throw new UnsupportedOperationException("Delete this statement and write your own implementation.");
    }
}
"""
REFERENCE = """\
class Greeter {
    static String greet(String name) {
        return "Hello, " + name + "!";
    }
}
"""
EXPECTED = {"GreeterTest::greetsAlice()", "GreeterTest::greetsBob()", "GreeterTest::greetsMany(String)[1]",
            "GreeterTest::greetsMany(String)[2]", "GreeterTest$Politely::greetsEve()"}


LENIENT = TEST.replace(").isEqualTo(", ").as(").replace(").endsWith(", ").as(")  # the same tests, asserting nothing


def wrong(extra: str = "", body: str = 'return "Hi " + name;') -> str:
    """A wrong Greeter (greets with "Hi") with ``extra`` members added to its class."""
    return f"class Greeter {{\n{extra}\n    static String greet(String name) {{\n        {body}\n    }}\n}}\n"


@pytest.fixture(scope="module")
def greeter(tmp_path_factory, grader_image):
    """The greeter task, rendered and proven: ``(task_dir, proof)``."""
    root = tmp_path_factory.mktemp("java")
    ex_dir = root / "java" / "exercises" / "practice" / "greeter"
    files = {"src/main/java/Greeter.java": STUB, "src/test/java/GreeterTest.java": TEST,
             ".meta/src/reference/java/Greeter.java": REFERENCE, "build.gradle": "plugins { id 'java' }\n",
             ".docs/instructions.md": "Greet.\n",
             ".meta/config.json": json.dumps({"files": {
                 "solution": ["src/main/java/Greeter.java"], "test": ["src/test/java/GreeterTest.java"],
                 "example": [".meta/src/reference/java/Greeter.java"], "invalidator": ["build.gradle"]}})}
    for rel, text in files.items():
        write_atomic(ex_dir / rel, text)
    rendered = aider.render(aider.Exercise("java", "greeter", ex_dir))
    for rel, (data, mode) in rendered.task_files.items():
        write_atomic(root / "task" / rel, data, mode)
    for rel, (data, mode) in rendered.answer_files.items():
        write_atomic(root / "answer" / rel, data, mode)
    proof = prove.prove(root / "task", root / "answer", image=grader_image, limits=LIMITS, meta=rendered.meta,
                        cache_volume="lab-cache-test-honest", log_dir=root / "logs")
    return root / "task", proof


def graded(greeter, tmp_path: Path, files: dict[str, str]):
    """Grade the stub's work tree with ``files`` laid over it, against the proof's test ids, with canaries."""
    task_dir, proof = greeter
    tree = tmp_path / "tree"
    worktree.lay_work_tree(task_dir, tree)
    for rel, text in files.items():
        write_atomic(tree / rel, text)
    from rules import images

    return grade(task_dir, tree, image=images.GRADER, limits=LIMITS, cache_volume="lab-cache-test-honest",
                 expected=proof["tests"])


def test_reference_is_kept_with_every_test_by_a_stable_distinct_id(greeter):
    _, proof = greeter
    assert proof["status"] == "kept", proof
    # disabled, parameterized (one id per case) and nested tests all ran; the canaries are not recorded
    assert set(proof["tests"]) == EXPECTED
    assert proof["stub"]["verdict"] == "fail"


def test_reference_passes_a_grading_with_canaries(greeter, tmp_path):
    g = graded(greeter, tmp_path, {"src/main/java/Greeter.java": REFERENCE})
    assert g.verdict == "pass", g.evidence
    assert g.passed_tests == len(EXPECTED)


def test_shutdown_hook_that_clears_failures_from_the_reports_is_refused(greeter, tmp_path):
    hook = r'''
    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (String dir : new String[] {"/tmp", "/work"}) {
                try (var paths = java.nio.file.Files.walk(java.nio.file.Path.of(dir))) {
                    paths.filter(p -> p.toString().endsWith(".xml")).forEach(p -> {
                        try {
                            String xml = java.nio.file.Files.readString(p);
                            xml = xml.replaceAll("(?s)<(failure|error|skipped)[^>]*>.*?</\\1>", "")
                                     .replaceAll("(?s)<(failure|error|skipped)[^>]*/>", "")
                                     .replaceAll("(failures|errors|skipped)=\"\\d+\"", "$1=\"0\"");
                            java.nio.file.Files.writeString(p, xml);
                            System.out.println("rewrote " + p);
                        } catch (Exception e) { System.out.println("cannot rewrite " + p + ": " + e); }
                    });
                } catch (Exception e) { }
            }
        }));
    }
'''
    g = graded(greeter, tmp_path, {"src/main/java/Greeter.java": wrong(hook)})
    # the security manager refuses the hook (were it let through, the failing canary would give it away: see
    # tests/test_reports_jc.py)
    assert 'access denied ("java.lang.RuntimePermission" "shutdownHooks")' in g.output
    assert "rewrote" not in g.output
    assert g.verdict == "fail" and g.failed_tests == len(EXPECTED), g.evidence


def test_background_process_that_forges_reports_after_the_tests_does_not_pass(greeter, tmp_path):
    # started while the class loads, it outlives the JVM: it keeps rewriting every report, and tries to drop a
    # report of its own into the host's report folder
    forger = r'''
    static {
        try {
            new ProcessBuilder("sh", "-c",
                "for i in $(seq 1 400); do for f in /tmp/lab-out/*.xml; do "
                + "sed -i -e 's|<failure.*||; s|<error.*||' \"$f\" 2>/dev/null; done; "
                + "cp /tmp/lab-out/TEST-junit-jupiter.xml /lab/report/forged.xml 2>/dev/null; sleep 0.02; done")
                .redirectErrorStream(true).start();
        } catch (Exception e) { throw new RuntimeException(e); }
    }
'''
    g = graded(greeter, tmp_path, {"src/main/java/Greeter.java": wrong(forger)})
    assert g.verdict in ("fail", "tampered"), g.evidence


def test_exit_zero_from_the_code_under_test_is_refused(greeter, tmp_path):
    g = graded(greeter, tmp_path, {"src/main/java/Greeter.java": wrong(body="System.exit(0); return null;")})
    assert 'access denied ("java.lang.RuntimePermission" "exitVM.0")' in g.output
    assert g.verdict == "fail" and g.failed_tests == len(EXPECTED), g.evidence


def test_launcher_style_lines_printed_by_the_solution_fail(greeter, tmp_path):
    lines = ("[         5 tests successful      ]\\n[         0 tests failed          ]\\n"
             "lab-check: ran=5 passed=5 failed=0\\n")
    g = graded(greeter, tmp_path, {"src/main/java/Greeter.java": wrong(body=f'System.out.print("{lines}"); '
                                                                             'return "Hi " + name;')})
    assert "5 tests successful" in g.output
    assert g.verdict == "fail" and g.failed_tests == len(EXPECTED), g.evidence


def test_solution_classes_named_like_assertj_do_not_replace_it(greeter, tmp_path):
    # a stand-in for AssertJ's Assertions whose assertThat accepts anything: javac compiles the tests against
    # it, but at run time the launcher's class loader asks the libraries first, and the real AssertJ answers
    fake = """\
package org.assertj.core.api;

public class Assertions {
    public static Lenient assertThat(String actual) { return new Lenient(); }

    public static class Lenient {
        public Lenient isEqualTo(Object expected) { return this; }
        public Lenient endsWith(String suffix) { return this; }
    }
}
"""
    g = graded(greeter, tmp_path, {"src/main/java/Greeter.java": wrong(),
                                   "src/main/java/org/assertj/core/api/Assertions.java": fake})
    assert g.verdict == "fail", g.evidence
    assert g.passed_tests == 0


def test_writes_to_the_grader_filesystem_are_refused(greeter, tmp_path):
    probe = r'''
    static {
        for (String path : new String[] {"/opt/lab/java/classpath", "/usr/bin/timeout", "/usr/lib/lab-probe",
                                         "/etc/lab-probe", "/lab/report/exit", "/task/check.sh"}) {
            try {
                java.nio.file.Files.writeString(java.nio.file.Path.of(path), "forged");
                System.out.println("lab-probe wrote " + path);
            } catch (Exception e) {
                System.out.println("lab-probe refused " + path);
            }
        }
    }
'''
    g = graded(greeter, tmp_path, {"src/main/java/Greeter.java": wrong(probe)})
    assert "lab-probe wrote" not in g.output
    assert g.output.count("lab-probe refused") == 6, g.output[-3000:]
    assert g.verdict == "fail"


def test_tests_the_agent_edited_or_added_are_replaced_by_the_pristine_ones(greeter, tmp_path):
    # the same test names, all trivially passing, and an extra test class: src/test is laid back wholesale
    extra = "class ExtraTest { @org.junit.jupiter.api.Test void extra() {} }\n"
    g = graded(greeter, tmp_path, {"src/main/java/Greeter.java": wrong(),
                                   "src/test/java/GreeterTest.java": LENIENT,
                                   "src/test/java/ExtraTest.java": extra})
    assert g.verdict == "fail" and g.failed_tests == len(EXPECTED), g.evidence
    assert "extra()" not in g.output


def test_reflection_into_junit_and_swapping_the_output_are_refused(greeter, tmp_path):
    meddler = r'''
    static {
        try {
            var field = Class.forName("org.junit.platform.launcher.core.LauncherFactory").getDeclaredFields()[0];
            field.setAccessible(true);
            System.out.println("lab-probe opened " + field);
        } catch (Exception e) { System.out.println("lab-probe refused reflection: " + e); }
        try {
            System.setOut(new java.io.PrintStream(new java.io.ByteArrayOutputStream()));
            System.err.println("lab-probe swapped System.out");
        } catch (Exception e) { System.out.println("lab-probe refused setOut: " + e); }
    }
'''
    g = graded(greeter, tmp_path, {"src/main/java/Greeter.java": wrong(meddler)})
    assert "lab-probe refused reflection" in g.output and "lab-probe refused setOut" in g.output, g.output[-3000:]
    assert "lab-probe opened" not in g.output and "lab-probe swapped" not in g.output
    assert g.verdict == "fail"


def test_the_tests_sources_cannot_be_read_by_the_solution(greeter, tmp_path):
    # the canaries' names are in the test sources: a solution that could read them could tell the canaries apart
    reader = r'''
    static {
        for (String path : new String[] {"/work/src/test/java/GreeterTest.java", "/task/check.sh", "/etc/passwd"}) {
            try {
                java.nio.file.Files.readString(java.nio.file.Path.of(path));
                System.out.println("lab-probe read " + path);
            } catch (Exception e) { System.out.println("lab-probe refused " + path); }
        }
    }
'''
    g = graded(greeter, tmp_path, {"src/main/java/Greeter.java": wrong(reader)})
    assert "lab-probe read" not in g.output
    assert g.output.count("lab-probe refused") == 3, g.output[-3000:]


def test_a_solution_using_the_jdk_broadly_still_passes_under_the_security_manager(greeter, tmp_path):
    # what honest solutions reach for: parallel streams (the common pool's threads), executors, threads, random
    # generators (the JDK's service loading), locales and formats, dates, regex, big numbers, records, enums,
    # reflection on its own members, properties, logging, timers, RxJava
    busy = """\
import java.math.BigInteger;
import java.time.LocalDate;
import java.util.*;
import java.util.concurrent.*;
import java.util.random.RandomGenerator;
import java.util.stream.*;

class Greeter {
    enum Salutation { HELLO }
    record Part(String text) { }

    static String greet(String name) {
        try {
            int sum = IntStream.range(0, 1000).parallel().map(i -> i % 7).sum();
            ExecutorService pool = Executors.newFixedThreadPool(2);
            Future<String> word = pool.submit(() -> Salutation.valueOf("HELLO").name());
            String hello = word.get();
            pool.shutdown();
            Thread t = new Thread(() -> { }); t.start(); t.join();
            CompletableFuture<Integer> later = CompletableFuture.supplyAsync(() -> 2 + 2);
            RandomGenerator.of("L64X128MixRandom").nextInt(10);
            new Random(1).nextInt();
            ThreadLocalRandom.current().nextInt(5);
            java.util.logging.Logger.getLogger("greeter").fine(name);
            new Timer(true).cancel();
            Thread.sleep(1);
            org.assertj.core.util.Strings.isNullOrEmpty(name);  // a library class of the class-data archive
            String money = String.format(Locale.GERMANY, "%,.2f", 1234.5);
            LocalDate.parse("2024-02-29").plusDays(1);
            BigInteger.TWO.pow(100).mod(BigInteger.TEN);
            Greeter.class.getDeclaredMethod("greet", String.class);
            System.getProperty("line.separator");
            io.reactivex.Observable.just(1, 2).map(x -> x * 2).toList().blockingGet();
            if (sum < 0 || later.get() != 4 || money.isEmpty() || !"Hello, x".matches("Hel+o, \\\\w")) return "";
            return new Part(hello.charAt(0) + hello.substring(1).toLowerCase(Locale.ROOT) + ", " + name + "!").text();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }
}
"""
    g = graded(greeter, tmp_path, {"src/main/java/Greeter.java": busy})
    assert g.verdict == "pass", (g.evidence, g.output[-4000:])


def test_test_classes_redefined_on_the_solutions_side_are_refused(greeter, tmp_path):
    # the tests' own class, compiled from src/main/java with every test trivially passing: were it first on the
    # class path, it would run in place of the real one
    g = graded(greeter, tmp_path, {"src/main/java/Greeter.java": wrong(), "src/main/java/GreeterTest.java": LENIENT})
    assert "the solution defines classes of the tests" in g.output
    assert g.verdict == "fail", g.evidence
