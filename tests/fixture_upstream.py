"""A tiny Exercism-style upstream, written for lab's tests and built into a throwaway git repo.

``make_upstream(path)`` lays the exercises below into ``path`` (``<track>/exercises/practice/<slug>/``) and
commits them on branch ``main``. Each exercise is a few lines, chosen for the behaviour it pins down:

- python-hello, go-hello, javascript-hello, rust-hello: ordinary tasks (reference passes, stub fails);
  the JavaScript and Rust ones skip tests the way their tracks do (``xtest``, ``#[ignore]``).
- python-ledger: a refactoring exercise whose stub already passes → ``free``.
- python-wrong-reference: the reference fails its tests → rejected.
- python-slow: the reference never finishes → rejected for the timeout (tests set a short one).
- go-counter: an empty test file, like upstream's Go counter → rejected, zero tests ran.
- go-table, java-doubler (only on request: tests/test_forgeries.py): a Go table of cases; JUnit 5 and AssertJ.
- python-no-config, python-bad-json, python-missing-file: malformed exercises → rejected with the reason.
"""
from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path


def _config(solution, test, example, **extra):
    files = {"solution": solution, "test": test, "example": example, **extra}
    return json.dumps({"authors": ["lab"], "files": files, "blurb": "A fixture."}, indent=2)


def _docs(title: str) -> dict[str, str]:
    return {
        ".docs/introduction.md": f"# Introduction\n\nINTRO for {title}.\n",
        ".docs/instructions.md": f"# Instructions\n\nINSTRUCTIONS for {title}.\n",
        ".docs/instructions.append.md": f"# Instructions append\n\nAPPEND for {title}.\n",
    }


PY_TEST = textwrap.dedent('''\
    import unittest

    from {mod} import {fn}


    class {cls}Test(unittest.TestCase):
        def test_one(self):
            self.assertEqual({fn}(1), 2)

        def test_two(self):
            self.assertEqual({fn}(20), 40)

        def test_three(self):
            self.assertEqual({fn}(0), 0)
    ''')


def _python(slug: str, stub: str, example: str, **overrides) -> dict[str, str]:
    mod = slug.replace("-", "_")
    files = {
        **_docs(slug),
        ".meta/config.json": _config([f"{mod}.py"], [f"{mod}_test.py"], [".meta/example.py"]),
        f"{mod}.py": stub,
        f"{mod}_test.py": PY_TEST.format(mod=mod, fn="double", cls=mod.title().replace("_", "")),
        ".meta/example.py": example,
    }
    files.update(overrides)
    return {k: v for k, v in files.items() if v is not None}


STUB_PY = "def double(number):\n    pass\n"
GOOD_PY = "def double(number):\n    return number * 2\n"

EXERCISES: dict[str, dict[str, str]] = {
    "python/hello": _python("hello", STUB_PY, GOOD_PY),
    "python/ledger": _python("ledger", GOOD_PY, GOOD_PY),
    "python/wrong-reference": _python("wrong-reference", STUB_PY, "def double(number):\n    return number + 2\n"),
    "python/slow": _python("slow", STUB_PY, "import time\n\ndef double(number):\n    time.sleep(3600)\n"),
    "python/no-config": _python("no-config", STUB_PY, GOOD_PY, **{".meta/config.json": None}),
    "python/bad-json": _python("bad-json", STUB_PY, GOOD_PY, **{".meta/config.json": "{ not json"}),
    "python/missing-file": _python("missing-file", STUB_PY, GOOD_PY, **{"missing_file_test.py": None}),
    "go/hello": {
        **_docs("go hello"),
        ".meta/config.json": _config(["hello.go"], ["hello_test.go"], [".meta/example.go"], invalidator=["go.mod"]),
        "go.mod": "module hello\n\ngo 1.18\n",
        "hello.go": "package hello\n\nfunc Double(n int) int {\n\tpanic(\"Please implement the Double function\")\n}\n",
        ".meta/example.go": "package hello\n\nfunc Double(n int) int {\n\treturn n * 2\n}\n",
        "hello_test.go": textwrap.dedent('''\
            package hello

            import "testing"

            func TestDouble(t *testing.T) {
            \tfor _, c := range []struct{ in, want int }{{1, 2}, {20, 40}} {
            \t\tt.Run("case", func(t *testing.T) {
            \t\t\tif got := Double(c.in); got != c.want {
            \t\t\t\tt.Fatalf("Double(%d) = %d, want %d", c.in, got, c.want)
            \t\t\t}
            \t\t})
            \t}
            }

            func TestZero(t *testing.T) {
            \tif Double(0) != 0 {
            \t\tt.Fatal("Double(0) != 0")
            \t}
            }
            '''),
    },
    "go/table": {  # the tests' cases in a package-level table, as most of the benchmark's Go exercises have them
        **_docs("go table"),
        ".meta/config.json": _config(["table.go"], ["table_test.go"], [".meta/example.go"], invalidator=["go.mod"]),
        "go.mod": "module table\n\ngo 1.18\n",
        "table.go": "package table\n\nfunc Double(n int) int {\n\tpanic(\"Please implement the Double function\")\n}\n",
        ".meta/example.go": "package table\n\nfunc Double(n int) int {\n\treturn n * 2\n}\n",
        "table_test.go": textwrap.dedent('''\
            package table

            import "testing"

            var testCases = []struct{ in, want int }{{1, 2}, {20, 40}, {0, 0}}

            func TestDouble(t *testing.T) {
            \tfor _, c := range testCases {
            \t\tif got := Double(c.in); got != c.want {
            \t\t\tt.Fatalf("Double(%d) = %d, want %d", c.in, got, c.want)
            \t\t}
            \t}
            }
            '''),
    },
    "go/subtests": {  # the tests' cases in a table run as subtests (t.Run), as most of the benchmark's Go exercises
        **_docs("go subtests"),
        ".meta/config.json": _config(["subtests.go"], ["subtests_test.go"], [".meta/example.go"],
                                     invalidator=["go.mod"]),
        "go.mod": "module subtests\n\ngo 1.18\n",
        "subtests.go": ("package subtests\n\nfunc Double(n int) int {\n\tpanic(\"Please implement the Double "
                        "function\")\n}\n"),
        ".meta/example.go": "package subtests\n\nfunc Double(n int) int {\n\treturn n * 2\n}\n",
        "subtests_test.go": textwrap.dedent('''\
            package subtests

            import "testing"

            var testCases = []struct {
            \tdescription string
            \tinput       int
            \texpected    int
            }{
            \t{description: "double one", input: 1, expected: 2},
            \t{description: "double twenty", input: 20, expected: 40},
            \t{description: "double zero", input: 0, expected: 0},
            }

            func TestDouble(t *testing.T) {
            \tfor _, tc := range testCases {
            \t\tt.Run(tc.description, func(t *testing.T) {
            \t\t\tif got := Double(tc.input); got != tc.expected {
            \t\t\t\tt.Fatalf("Double(%d) = %d, want %d", tc.input, got, tc.expected)
            \t\t\t}
            \t\t})
            \t}
            }
            '''),
    },
    "go/counter": {
        **_docs("go counter"),
        ".meta/config.json": _config(["counter.go"], ["counter_test.go"], [".meta/example.go"], invalidator=["go.mod"]),
        "go.mod": "module counter\n\ngo 1.18\n",
        "counter.go": "package counter\n",
        "counter_test.go": "package counter\n",
        ".meta/example.go": "package counter\n\nfunc Count() int { return 1 }\n",
    },
    "java/doubler": {  # JUnit 5 and AssertJ, as the benchmark's Java exercises test (@Disabled: check.sh enables)
        **_docs("java doubler"),
        ".meta/config.json": _config(["src/main/java/Doubler.java"], ["src/test/java/DoublerTest.java"],
                                     [".meta/src/reference/java/Doubler.java"], invalidator=["build.gradle"]),
        "build.gradle": "plugins { id 'java' }\n",
        "src/main/java/Doubler.java": textwrap.dedent('''\
            class Doubler {
                static int twice(int n) {
                    throw new UnsupportedOperationException("Delete this statement and write your own implementation.");
                }
            }
            '''),
        ".meta/src/reference/java/Doubler.java":
            "class Doubler {\n    static int twice(int n) {\n        return n * 2;\n    }\n}\n",
        "src/test/java/DoublerTest.java": textwrap.dedent('''\
            import org.junit.jupiter.api.Disabled;
            import org.junit.jupiter.api.Test;

            import static org.assertj.core.api.Assertions.assertThat;

            public class DoublerTest {

                @Test
                public void twiceOne() {
                    assertThat(Doubler.twice(1)).isEqualTo(2);
                }

                @Disabled("Remove to run test")
                @Test
                public void twiceTwenty() {
                    assertThat(Doubler.twice(20)).isEqualTo(40);
                }

                @Disabled("Remove to run test")
                @Test
                public void twiceZero() {
                    int expected = 0;
                    assertThat(Doubler.twice(0)).isEqualTo(expected);
                }
            }
            '''),
    },
    "javascript/hello": {
        **_docs("javascript hello"),
        ".meta/config.json": _config(["hello.js"], ["hello.spec.js"], [".meta/proof.ci.js"]),
        "package.json": json.dumps({
            "name": "@exercism/javascript-hello", "private": True,
            "scripts": {"test": "jest ./*"},
            "devDependencies": {"@babel/core": "^7.25.2", "@exercism/babel-preset-javascript": "^0.2.1",
                                "jest": "^29.7.0"},
        }, indent=2) + "\n",
        "babel.config.js": "module.exports = {\n  presets: ['@exercism/babel-preset-javascript'],\n  plugins: [],\n};\n",
        "hello.js": "export const double = (n) => {\n  throw new Error('Remove this statement and implement this function');\n};\n",
        ".meta/proof.ci.js": "export const double = (n) => n * 2;\n",
        "hello.spec.js": textwrap.dedent('''\
            import { double } from './hello';

            describe('double', () => {
              test('one', () => {
                expect(double(1)).toEqual(2);
              });

              xtest('twenty', () => {
                expect(double(20)).toEqual(40);
              });

              xit('zero', () => {
                expect(double(0)).toEqual(0);
              });
            });
            '''),
    },
    "rust/hello": {
        **_docs("rust hello"),
        ".meta/config.json": _config(["src/lib.rs", "Cargo.toml"], ["tests/hello.rs"], [".meta/example.rs"]),
        "Cargo.toml": '[package]\nedition = "2021"\nname = "hello"\nversion = "1.0.0"\n',
        "src/lib.rs": "pub fn double(n: i64) -> i64 {\n    todo!(\"double {n}\")\n}\n",
        ".meta/example.rs": "pub fn double(n: i64) -> i64 {\n    n * 2\n}\n",
        "tests/hello.rs": textwrap.dedent('''\
            use hello::*;

            #[test]
            fn one() {
                assert_eq!(double(1), 2);
            }

            #[test]
            #[ignore]
            fn twenty() {
                assert_eq!(double(20), 40);
            }

            #[test]
            #[ignore]
            fn zero() {
                assert_eq!(double(0), 0);
            }
            '''),
    },
}


def write_exercise(root: Path, key: str, files: dict[str, str]) -> None:
    """Write one exercise (``track/slug`` → its files) below ``root``."""
    track, slug = key.split("/")
    base = Path(root) / track / "exercises" / "practice" / slug
    for rel, text in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text, encoding="utf-8")


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` with a fixed identity; returns stdout."""
    env_args = ["-c", "user.name=lab tests", "-c", "user.email=tests@localhost", "-c", "init.defaultBranch=main"]
    return subprocess.run(["git", *env_args, *args], cwd=root, check=True, capture_output=True, text=True).stdout


ON_REQUEST = {"go/table", "go/subtests", "java/doubler"}  # fixtures of one test module (test_forgeries), not of the default upstream


def make_upstream(root: Path, only: list[str] | None = None) -> Path:
    """Build the fixture upstream as a git repo at ``root`` (branch ``main``) and return ``root``.

    ``only`` keeps just the listed exercise keys (``"python/hello"``, ...); the exercises in ``ON_REQUEST``
    are laid only when ``only`` names them, so the default upstream (and every count tests take of it) stays.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    for key, files in EXERCISES.items():
        if (only is None and key not in ON_REQUEST) or (only is not None and key in only):
            write_exercise(root, key, files)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "fixture exercises")
    return root
