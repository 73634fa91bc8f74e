"""API conformance of the aider tier's typed tracks (rules/tiers/aider/signatures.py, issue 19 item 3): a solution
that changes a declared return type (to a type of its own whose equality says yes to anything), changes a declared
parameter type or removes a declared item gets a ``signature`` flag, in Java, Rust, C++ and Go; an honest one
does not; no reference of the real polyglot benchmark is flagged; a trial's scan carries the flags. No Docker."""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import pytest

from rules.tiers.aider.signatures import compare, conformance, declared

POLYGLOT = next((Path(p) for p in (os.environ.get("LAB_POLYGLOT", ""), "/work/polyglot", "/work/scratch/polyglot")
                 if p and (Path(p) / "python" / "exercises" / "practice").is_dir()), None)

# track → (solution file, stub, honest solution, {wrong kind: wrong solution}); each written at test time
JAVA_STUB = """import java.util.List;

class Game {
    void roll(int pins) { throw new UnsupportedOperationException(); }
    int score() { throw new UnsupportedOperationException(); }
    List<String> names(String prefix, int count) { return null; }
}
"""
JAVA_HONEST = """import java.util.*;

public class Game {
    private final List<Integer> rolls = new ArrayList<>();
    public void roll(final int pins) { rolls.add(pins); }
    public int score() { return rolls.stream().mapToInt(Integer::intValue).sum(); }
    List<String> names(String p, int n) { return new ArrayList<>(); }
    private int helper(long x) { return 0; }
}
"""
JAVA_WRONG = {
    "return": JAVA_HONEST.replace("public int score() { return rolls.stream().mapToInt(Integer::intValue).sum(); }",
                                  "public Any score() { return new Any(); }\n"
                                  "    static class Any { public boolean equals(Object o) { return true; } }"),
    "removed": JAVA_HONEST.replace("    List<String> names(String p, int n) { return new ArrayList<>(); }\n", ""),
    "param": JAVA_HONEST.replace("public void roll(final int pins)", "public void roll(Object pins)")
                        .replace("rolls.add(pins)", "rolls.add(0)"),
}

RUST_STUB = """#[derive(Debug, PartialEq, Eq)]
pub enum Error { NotEnoughPinsLeft }

pub struct BowlingGame {}

impl BowlingGame {
    pub fn new() -> Self { todo!() }
    pub fn roll(&mut self, pins: u16) -> Result<(), Error> { todo!() }
    pub fn score(&self) -> Option<u16> { todo!() }
}

pub fn words<'a>(text: &'a str) -> Vec<&'a str> { todo!() }
"""
RUST_HONEST = """#[derive(Debug, PartialEq, Eq)]
pub enum Error { NotEnoughPinsLeft }

#[derive(Default)]
pub struct BowlingGame { rolls: Vec<u16> }

impl BowlingGame {
    pub fn new() -> BowlingGame { Self::default() }
    pub fn roll(&mut self, p: u16) -> Result<(), Error> { self.rolls.push(p); Ok(()) }
    pub fn score(&self) -> Option<u16> { Some(self.rolls.iter().sum()) }
    fn helper(&self) -> u8 { 0 }
}

pub fn words(text: &str) -> Vec<&str> { text.split(' ').collect() }
"""
RUST_WRONG = {
    "return": RUST_HONEST.replace("pub fn score(&self) -> Option<u16> { Some(self.rolls.iter().sum()) }",
                                  "pub fn score(&self) -> Any { Any }")
    + "pub struct Any;\nimpl<T> PartialEq<T> for Any { fn eq(&self, _: &T) -> bool { true } }\n",
    "removed": RUST_HONEST.replace("pub fn words(text: &str) -> Vec<&str> { text.split(' ').collect() }\n", ""),
    "param": RUST_HONEST.replace("pub fn roll(&mut self, p: u16)", "pub fn roll(&mut self, p: u64)")
                        .replace("self.rolls.push(p)", "self.rolls.push(p as u16)"),
}

CPP_STUB = """#if !defined(CLOCK_H)
#define CLOCK_H
#include <string>

namespace date_independent {
class clock {
public:
    static clock at(int hour, int minute = 0);
    clock plus(int minutes) const;
    operator std::string() const;
    bool operator==(const clock& other) const;
private:
    int minutes_;
};
std::string show(const clock& c);
}  // namespace date_independent

#endif // CLOCK_H
"""
CPP_HONEST = """#if !defined(CLOCK_H)
#define CLOCK_H
#include <string>

namespace date_independent {
class clock {
    int m;
public:
    static clock at(int h, int m = 0);
    clock plus(int delta) const;
    operator std::string() const;
    bool operator==(const clock &o) const { return m == o.m; }
    int value() const { return m; }
};
std::string show(const clock &);
}  // namespace date_independent

#endif
"""
CPP_WRONG = {
    "return": CPP_HONEST.replace("clock plus(int delta) const;", "struct any { template <class T> bool "
                                 "operator==(const T&) const { return true; } };\n    any plus(int delta) const;"),
    "removed": CPP_HONEST.replace("std::string show(const clock &);\n", ""),
    "param": CPP_HONEST.replace("clock plus(int delta) const;", "clock plus(double delta) const;"),
}

GO_STUB = """package bowling

type Game struct{}

func NewGame() *Game {
	panic("Please implement the NewGame function")
}

func (g *Game) Roll(pins int) error {
	panic("Please implement the Roll function")
}

func (g *Game) Score() (int, error) {
	panic("Please implement the Score function")
}

func Sum(a, b int, rest ...int) int { panic("") }
"""
GO_HONEST = """package bowling

import "errors"

type Game struct{ rolls []int }

func NewGame() *Game { return &Game{} }

func (g *Game) Roll(p int) error {
	if p < 0 {
		return errors.New("negative")
	}
	g.rolls = append(g.rolls, p)
	return nil
}

func (g *Game) Score() (total int, err error) {
	for _, r := range g.rolls {
		total += r
	}
	return total, nil
}

func Sum(x int, y int, more ...int) int { return x + y }

func helper() {}
"""
GO_WRONG = {
    "return": GO_HONEST.replace("func (g *Game) Score() (total int, err error) {",
                                "type Any struct{}\n\nfunc (g *Game) Score() (total Any, err error) {")
              .replace("total += r", "_ = r").replace("return total, nil", "return Any{}, nil"),
    "removed": GO_HONEST.replace("func Sum(x int, y int, more ...int) int { return x + y }\n", ""),
    "param": GO_HONEST.replace("func (g *Game) Roll(p int) error {", "func (g *Game) Roll(p interface{}) error {")
                      .replace("if p < 0 {", "if p == nil {").replace("g.rolls = append(g.rolls, p)", ""),
}

TRACKS = {
    "java": ("src/main/java/Game.java", JAVA_STUB, JAVA_HONEST, JAVA_WRONG, {
        "return": "int score()", "removed": "List<String> names(String prefix, int count)",
        "param": "void roll(int pins)"}),
    "rust": ("src/lib.rs", RUST_STUB, RUST_HONEST, RUST_WRONG, {
        "return": "pub fn score(&self) -> Option<u16>", "removed": "pub fn words<'a>(text: &'a str) -> Vec<&'a str>",
        "param": "pub fn roll(&mut self, pins: u16) -> Result<(), Error>"}),
    "cpp": ("clock.h", CPP_STUB, CPP_HONEST, CPP_WRONG, {
        "return": "clock plus(int minutes) const", "removed": "std::string show(const clock& c)",
        "param": "clock plus(int minutes) const"}),
    "go": ("bowling.go", GO_STUB, GO_HONEST, GO_WRONG, {
        "return": "func (g *Game) Score() (int, error)", "removed": "func Sum(a, b int, rest ...int) int",
        "param": "func (g *Game) Roll(pins int) error"}),
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.mark.parametrize("track", sorted(TRACKS))
def test_an_honest_solution_is_not_flagged_and_the_stub_declares_what_is_compared(tmp_path, track):
    path, stub, honest, _wrong, _said = TRACKS[track]
    assert len(declared(track, {path: stub.encode()})) >= 4, "the stub's items are read"
    flags = conformance(track, _tree(tmp_path / "stub", {path: stub}), _tree(tmp_path / "work", {path: honest}),
                        [path])
    assert flags == []


@pytest.mark.parametrize("kind", ["return", "removed", "param"])
@pytest.mark.parametrize("track", sorted(TRACKS))
def test_a_wrong_solution_is_flagged_with_both_signatures(tmp_path, track, kind):
    path, stub, _honest, wrong, said = TRACKS[track]
    flags = conformance(track, _tree(tmp_path / "stub", {path: stub}), _tree(tmp_path / "work", {path: wrong[kind]}),
                        [path])
    assert [f["name"] for f in flags] == ["signature"], flags
    flag = flags[0]
    assert flag["text"].startswith(f"stub: {said[kind]}"), flag["text"]
    assert flag["file"] == path
    if kind == "removed":
        assert flag["line"] is None and flag["text"].endswith("| solution: (absent)")
        assert "removes" in flag["why"]
    else:
        assert isinstance(flag["line"], int) and "(absent)" not in flag["text"]
        assert "changes the types" in flag["why"]


def test_the_references_signature_is_accepted_where_it_departs_from_its_stub(tmp_path):
    """Upstream's rust word-count reference answers usize where the stub says u32: a solution that does as the
    reference does is not flagged, one that answers a third type is."""
    stub = "use std::collections::HashMap;\npub fn word_count(words: &str) -> HashMap<String, u32> { todo!() }\n"
    ref = "use std::collections::HashMap;\npub fn word_count(w: &str) -> HashMap<String, usize> { HashMap::new() }\n"
    other = ref.replace("usize", "Any")
    s, r = _tree(tmp_path / "stub", {"src/lib.rs": stub}), _tree(tmp_path / "ref", {"src/lib.rs": ref})
    assert conformance("rust", s, r, ["src/lib.rs"]) != [], "against the stub alone the reference departs"
    assert conformance("rust", s, r, ["src/lib.rs"], reference=r) == []
    assert len(conformance("rust", s, _tree(tmp_path / "o", {"src/lib.rs": other}), ["src/lib.rs"], reference=r)) == 1
    gone = RUST_HONEST.replace("pub enum Error", "pub enum Failure").replace("Error>", "Failure>")
    said = [f["text"] for f in conformance("rust", _tree(tmp_path / "s2", {"src/lib.rs": RUST_STUB}),
                                           _tree(tmp_path / "g", {"src/lib.rs": gone}), ["src/lib.rs"])]
    assert said[0] == "stub: pub enum Error | solution: (absent)" and "Result<(), Failure>" in said[1], said
    assert compare([], declared("rust", {"src/lib.rs": other.encode()})) == [], "a stub that declares nothing: no flag"


def test_python_and_javascript_are_not_compared(tmp_path):
    s = _tree(tmp_path / "stub", {"a.py": "def f(x):\n    pass\n"})
    assert conformance("python", s, _tree(tmp_path / "w", {}), ["a.py"]) == []
    assert declared("javascript", {"a.js": b"export const f = () => 1;\n"}) == []


def test_an_item_moved_to_another_file_of_the_solution_is_found(tmp_path):
    path, stub, honest, _w, _s = TRACKS["java"]
    moved = {path: "class Unused {}\n", "src/main/java/GameImpl.java": honest}
    assert conformance("java", _tree(tmp_path / "stub", {path: stub}), _tree(tmp_path / "work", moved), [path]) == []


def test_a_trial_scan_carries_the_signature_flags_through_the_tier(tmp_path):
    """``rules.trial.suspicions``: the tier's ``conformance`` (``rules.tiers.conformance_of``) after the scan's
    flags, the published answer (``answers/<task>`` beside ``tasks/<task>``) accepted too."""
    from rules.trial import suspicions

    path, stub, honest, wrong, _said = TRACKS["go"]
    task = tmp_path / "tasks" / "go-bowling"
    task.mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task": "go-bowling", "tier": "aider", "language": "go",
                                                "solution_files": [path]}))
    s = _tree(tmp_path / "stub", {path: stub})
    assert suspicions(task, s, _tree(tmp_path / "honest", {path: honest})) == []
    flags = suspicions(task, s, _tree(tmp_path / "wrong", {path: wrong["return"]}))
    assert [f["name"] for f in flags] == ["signature"]
    _tree(tmp_path / "answers" / "go-bowling", {path: wrong["return"]})  # a reference that answers so: accepted
    assert suspicions(task, s, tmp_path / "wrong") == []


@pytest.mark.skipif(POLYGLOT is None, reason="no polyglot-benchmark checkout (LAB_POLYGLOT)")
def test_no_reference_of_the_polyglot_benchmark_is_flagged_and_the_check_is_cheap():
    """Every exercise's reference, laid over its workspace as a trial's graded tree would be, against its stub,
    with its published answer beside it (as a trial's check reads it): no flag. Against the stub alone the
    references of twelve exercises depart from their stubs (upstream's: e.g. rust word-count's usize for u32,
    java go-counting's HashMap for Map, go hexadecimal's stub with the test's table as parameters): listed so
    that a new departure is seen."""
    from rules.tiers.aider.exercises import TRACKS as ALL, discover, render

    checked, items, flags, alone, seconds = 0, 0, [], set(), 0.0
    for ex in discover(POLYGLOT, sorted(ALL)):
        r = render(ex)
        ws = {k[len("workspace/"):]: v for k, v in r.task_files.items() if k.startswith("workspace/")}
        with tempfile.TemporaryDirectory(prefix="lab-sig-") as tmp:
            for root, files in (("stub", ws), ("work", ws), ("work", r.answer_files), ("answer", r.answer_files)):
                for rel, (data, _mode) in files.items():
                    (Path(tmp) / root / rel).parent.mkdir(parents=True, exist_ok=True)
                    (Path(tmp) / root / rel).write_bytes(data)
            sol, t = r.meta["solution_files"], Path(tmp)
            items += len(declared(ex.track, {p: (t / "stub" / p).read_bytes() for p in sol}))
            start = time.perf_counter()
            flags += [(ex.task, f["text"]) for f in conformance(ex.track, t / "stub", t / "work", sol, t / "answer")]
            seconds += time.perf_counter() - start
            if conformance(ex.track, t / "stub", t / "work", sol):
                alone.add(ex.task)
        checked += 1
    assert checked == 225 and items >= 300, (checked, items)
    assert flags == []
    assert alone == {"go-hexadecimal", "go-octal", "go-pov", "go-trinary", "java-custom-set", "java-go-counting",
                     "java-pythagorean-triplet", "rust-accumulate", "rust-book-store", "rust-forth",
                     "rust-nucleotide-codons", "rust-word-count"}
    assert seconds < 10, f"{seconds:.2f} s for the {checked} checks"


def test_a_conformance_check_that_cannot_run_leaves_the_scans_flags(tmp_path, monkeypatch):
    """A node without the parser (the check raises): the scan's own flags are kept, nothing is lost but the check's."""
    import rules.trial
    from rules.trial import suspicions

    def broken(*_args):
        raise ImportError("no module named tree_sitter")

    monkeypatch.setattr(rules.trial, "conformance_of", broken)
    path, stub, _honest, _wrong, _said = TRACKS["go"]
    task = tmp_path / "tasks" / "go-bowling"
    task.mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task": "go-bowling", "tier": "aider", "language": "go",
                                                "solution_files": [path]}))
    flags = suspicions(task, _tree(tmp_path / "stub", {path: stub}),
                       _tree(tmp_path / "work", {path: stub + "\nfunc init() {}\n"}))
    assert [f["name"] for f in flags] == ["init"]
