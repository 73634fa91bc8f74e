"""The aider tier: the Aider polyglot benchmark's Exercism practice exercises.

An exercise is a folder ``<track>/exercises/practice/<slug>/`` of the upstream checkout with
``.meta/config.json`` naming its ``files``: ``solution`` (what the agent edits), ``test``, ``example`` (the
reference solution), and optionally ``editor`` (read-only helpers) and ``invalidator`` (build files). This
layout is Exercism's (https://exercism.org/docs/building/tracks/practice-exercises).

Rendering is pure: ``render(exercise)`` reads the exercise's files and returns the task's files and the
reference solution's files, or raises ``ExerciseError`` with the reason the exercise cannot become a task.
What differs between tracks lives in the ``TRACKS`` table and in ``templates/aider/<track>/``.
"""
from __future__ import annotations

import json
import posixpath
from functools import lru_cache
from dataclasses import dataclass, field
from pathlib import Path

from rules.files import files_below
from rules.records import TaskMeta
from rules.render import template_files

TIER = "aider"
GROUP_KEYS = ("language", "exercise")  # a task's labels: its track and its exercise's slug
DOCS = (".docs/introduction.md", ".docs/instructions.md", ".docs/instructions.append.md")
HIDDEN = (".meta", ".docs", ".approaches", ".articles", ".exercism")  # never laid into a work tree


class ExerciseError(Exception):
    """An exercise cannot become a task; the message is the reason recorded in the manifest."""


@dataclass(frozen=True)
class Track:
    """What one language track needs that others do not.

    ``reference_root`` is where the track keeps reference files that map onto solution paths by relative
    path (Java: ``.meta/src/reference/java/X.java`` → ``src/main/java/X.java``); other tracks map each
    example file onto the solution file with the same extension. ``overrides`` maps extra reference files
    onto workspace files they replace when present (Rust: ``.meta/Cargo-example.toml`` → ``Cargo.toml``).
    ``test_timeout`` is the seconds ``check.sh`` gives the test run itself. ``report`` names the parser of the
    runner's report in ``rules.reports`` (recorded in task.json; the grader reads it on the host).
    ``manifest``: the track's check.sh draws canaries of its own and names them in a manifest only root writes
    (task.json's ``"canaries": "manifest"``; rules/grade.py: canaries_of); else its canaries are the two tokens.
    """

    name: str
    label: str
    reference_root: tuple[str, str] | None = None
    overrides: tuple[tuple[str, str], ...] = ()
    test_timeout: int = 300
    report: str = "junit"
    manifest: bool = False

    def map_reference(self, example: list[str], solution: list[str]) -> dict[str, str]:
        """Map each reference file (relative to the exercise) to the work-tree path it is laid at.

        Raises ExerciseError when an example file has no solution file to go to.
        """
        out: dict[str, str] = {}
        for ex in example:
            if self.reference_root and ex.startswith(self.reference_root[0] + "/"):
                out[ex] = self.reference_root[1] + ex[len(self.reference_root[0]):]
                continue
            ext = posixpath.splitext(ex)[1]
            same = [s for s in solution if posixpath.splitext(s)[1] == ext]
            if len(same) != 1:
                raise ExerciseError(
                    f"malformed exercise: reference file {ex} matches {len(same)} solution files by extension"
                )
            out[ex] = same[0]
        return out


TRACKS: dict[str, Track] = {t.name: t for t in (
    Track("cpp", "C++", report="junit", manifest=True),
    Track("go", "Go", report="go-json", manifest=True),
    Track("java", "Java", reference_root=(".meta/src/reference/java", "src/main/java"), report="junit",
          manifest=True),
    Track("javascript", "JavaScript", report="jest-json", manifest=True),
    Track("python", "Python", report="junit", manifest=True),
    Track("rust", "Rust", overrides=((".meta/Cargo-example.toml", "Cargo.toml"),), report="libtest-json",
          manifest=True),
)}


@dataclass(frozen=True)
class Exercise:
    """One upstream exercise: its track, its slug and its folder in the upstream checkout."""

    track: str
    slug: str
    dir: Path

    @property
    def task(self) -> str:
        """The task's stable name, ``<track>-<slug>`` (e.g. ``python-bowling``)."""
        return f"{self.track}-{self.slug}"

    @property
    def upstream_path(self) -> str:
        return f"{self.track}/exercises/practice/{self.slug}"

    def files(self) -> list[str]:
        """Every file of the exercise (what its task depends on) as sorted path strings."""
        return files_below(self.dir)


@dataclass
class Rendered:
    """A rendered task: ``task_files`` and ``answer_files`` map relative paths to (content, mode)."""

    task_files: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    answer_files: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)


def discover(checkout: Path, languages: tuple[str, ...] | list[str]) -> list[Exercise]:
    """List the exercises of the given tracks in an upstream checkout, sorted by track then slug.

    A folder under ``<track>/exercises/practice/`` is an exercise even when its config is missing or
    broken: ``render`` then rejects it with the reason. Unknown track names raise ExerciseError.
    """
    unknown = [lang for lang in languages if lang not in TRACKS]
    if unknown:
        raise ExerciseError(f"unknown track(s) {unknown}; known: {sorted(TRACKS)}")
    out = []
    for lang in languages:
        base = Path(checkout) / lang / "exercises" / "practice"
        if base.is_dir():
            out += [Exercise(lang, d.name, d) for d in sorted(base.iterdir()) if d.is_dir()]
    return out


def select(exercises: list[Exercise], limit: int | None) -> list[Exercise]:
    """Keep the first ``limit`` exercises (by slug) of each track; all of them when ``limit`` is None."""
    if limit is None:
        return list(exercises)
    seen: dict[str, int] = {}
    out = []
    for ex in exercises:
        if seen.get(ex.track, 0) < limit:
            out.append(ex)
            seen[ex.track] = seen.get(ex.track, 0) + 1
    return out


@lru_cache(maxsize=None)
def templates_for(track: str) -> list[Path]:
    """The template files a task of ``track`` is rendered from (its ``file_dep``)."""
    return template_files("aider", f"aider/{track}")


def _config(ex: Exercise) -> dict:
    path = ex.dir / ".meta" / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExerciseError("malformed exercise: missing .meta/config.json") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ExerciseError(f"malformed exercise: invalid .meta/config.json ({exc})") from None
    files = config.get("files") if isinstance(config, dict) else None
    if not isinstance(files, dict):
        raise ExerciseError("malformed exercise: .meta/config.json has no 'files' object")
    for key in ("solution", "test", "example"):
        value = files.get(key)
        if not value or not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ExerciseError(f"malformed exercise: .meta/config.json files.{key} is missing or not a list of paths")
    return files


def _mode(p: Path) -> int:
    return 0o755 if p.stat().st_mode & 0o111 else 0o644


def reference_diff(r: Rendered) -> str:
    """The change a trial would grade had the agent written the reference solution of the rendered exercise
    ``r``: ``diff -ruN`` (``rules.worktree.work_diff``, up to 16 MiB) of the stub's work tree against the same tree
    with the answer files laid over it. Used to check the suspicion scan against every reference."""
    import tempfile

    from rules.worktree import work_diff

    stub = {k[len("workspace/"):]: v for k, v in r.task_files.items() if k.startswith("workspace/")}
    with tempfile.TemporaryDirectory(prefix="lab-refdiff-") as tmp:
        for root, files in (("stub", stub), ("work", stub), ("work", r.answer_files)):
            for rel, (data, _mode) in files.items():
                (Path(tmp) / root / rel).parent.mkdir(parents=True, exist_ok=True)
                (Path(tmp) / root / rel).write_bytes(data)
        return work_diff(Path(tmp) / "stub", Path(tmp) / "work", cap=1 << 24)


def render(ex: Exercise) -> Rendered:
    """Render ``ex`` into a task (pure: reads the exercise folder and the templates, writes nothing).

    Task files: ``prompt.txt``, ``setup.sh``, ``check.sh``, ``task.json`` and ``workspace/`` (every
    exercise file outside the hidden folders: stub, visible tests, build files). Answer files: the reference
    solution laid at its work-tree paths. Raises ExerciseError (malformed exercise: missing or invalid
    config.json, missing files, no instructions).
    """
    from rules.render import render as render_template

    track = TRACKS[ex.track]
    files = _config(ex)
    solution, tests, example = files["solution"], files["test"], files["example"]
    missing = [f for f in solution + tests + example + files.get("editor", []) + files.get("invalidator", [])
               if not (ex.dir / f).is_file()]
    if missing:
        raise ExerciseError(f"malformed exercise: missing files: {', '.join(missing)}")
    docs = [(ex.dir / d).read_text(encoding="utf-8") for d in DOCS if (ex.dir / d).is_file()]
    if not any((ex.dir / d).is_file() for d in DOCS[:2] + DOCS[2:]) or not (ex.dir / DOCS[1]).is_file():
        raise ExerciseError("malformed exercise: missing .docs/instructions.md")

    files_here = [Path(f) for f in ex.files()]
    workspace = {
        p.relative_to(ex.dir).as_posix(): p for p in files_here
        if p.relative_to(ex.dir).parts[0] not in HIDDEN
    }
    reference = track.map_reference(example, solution)
    reference.update({src: dst for src, dst in track.overrides if (ex.dir / src).is_file()})
    pristine = sorted(f for f in workspace if f not in solution)
    context = dict(
        task=ex.task, language=ex.track, exercise=ex.slug, solution_files=solution, test_files=tests,
        pristine_files=pristine, test_timeout=track.test_timeout, docs=docs,
    )
    out = Rendered()
    out.task_files["prompt.txt"] = (render_template("aider/prompt.txt.j2", **context).encode(), 0o644)
    out.task_files["setup.sh"] = (render_template("aider/setup.sh.j2", **context).encode(), 0o755)
    out.task_files["check.sh"] = (render_template(f"aider/{ex.track}/check.sh.j2", **context).encode(), 0o755)
    for rel, p in workspace.items():
        out.task_files[f"workspace/{rel}"] = (p.read_bytes(), _mode(p))
    for src, dst in reference.items():
        out.answer_files[dst] = ((ex.dir / src).read_bytes(), _mode(ex.dir / src))
    meta = TaskMeta(task=ex.task, tier=TIER, groups=dict(zip(GROUP_KEYS, (ex.track, ex.slug))),
                    solution_files=solution, test_files=tests, report=track.report,
                    extra={"upstream_path": ex.upstream_path, "grader": "grader",
                           **({"canaries": "manifest"} if track.manifest else {})})
    out.task_files["task.json"] = meta.file()
    out.meta = meta.to_json()
    return out
