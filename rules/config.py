"""Where things live and how a tier is configured.

Paths are relative to the project root (the folder holding ``dodo.py``); ``LAB_HOME`` overrides the root for
tests and for users who keep several labs. A tier's settings come from ``evals/<tier>/suite.toml``.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(os.environ.get("LAB_HOME") or Path(__file__).resolve().parent.parent).resolve()
# LAB_TEMPLATES points at another templates folder (tests use a copy to change templates safely)
TEMPLATES = Path(os.environ.get("LAB_TEMPLATES") or Path(__file__).resolve().parent.parent / "templates").resolve()
EVALS = ROOT / "evals"
STATE = ROOT / ".lab"  # doit's database, upstream checkouts, staged renders, image stamps


class ConfigError(Exception):
    """A setting is missing or malformed; the message names the file, the setting and the fix."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one container: CPUs (fractional), memory (bytes), process count, wall clock (s),
    and ``disk``: the bytes the container may write to its host folders (an agent's work tree and ``/lab/out``
    live on a filesystem of this size, see ``rules.disk``)."""

    cpus: float = 1.0
    memory: int = 4 * 1024**3
    pids: int = 1024
    timeout: float = 600.0
    # repr=False: proofs and gradings do not use it yet, so doit's config_changed(repr(limits)) must not
    # re-prove every task when it is added or changed
    disk: int = field(default=2 * 1024**3, repr=False)

    @classmethod
    def parse(cls, raw: dict, where: str) -> "Limits":
        """Build limits from a TOML table with keys ``cpus``, ``memory`` ("4g", "512m" or bytes), ``pids``,
        ``timeout`` (seconds), ``disk`` (like memory). Raises ConfigError naming ``where`` and every bad or unknown
        limit by name."""
        known = ("cpus", "memory", "pids", "timeout", "disk")
        unknown = sorted(set(raw) - set(known))
        problems = [f"unknown limit(s) {_with_guesses(unknown, known)}; known: {', '.join(known)}"] if unknown else []
        base = cls()
        kinds = {"cpus": (float, "a number of CPUs, e.g. 2 or 0.5"), "memory": (parse_bytes, 'bytes, e.g. "4g" or "512m"'),
                 "pids": (int, "a whole number of processes"), "timeout": (float, "seconds, e.g. 600"),
                 "disk": (parse_bytes, 'bytes, e.g. "2g"')}
        values = {}
        for key, (kind, what) in kinds.items():
            value = raw.get(key, getattr(base, key))
            try:
                if isinstance(value, bool):  # TOML's true would pass as 1
                    raise TypeError("a yes/no value")
                values[key] = kind(value)
            except (TypeError, ValueError) as exc:
                problems.append(f"{key} = {value!r} is not {what} ({exc})")
        if problems:  # every one at once, each naming its limit
            raise ConfigError(f"{where}: " + "; ".join(problems))
        return cls(**values)


def _with_guesses(unknown: list[str], known) -> str:
    """``unknown`` names, each with the known name it is likely a typo of: ``timout (timeout?)``."""
    import difflib

    def one(name: str) -> str:
        close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.7)
        return f"{name} ({close[0]}?)" if close else name
    return ", ".join(one(n) for n in unknown)


def field_problems(raw: dict, known: tuple[str, ...], required: tuple[str, ...], where: str) -> list[str]:
    """What is wrong with the fields of a TOML table ``raw``: one line for fields outside ``known`` and one for
    fields of ``required`` it lacks, each naming ``where``, the offending fields and the allowed ones."""
    out = []
    unknown = sorted(set(raw) - set(known))
    if unknown:
        out.append(f"{where}: unknown field(s) {_with_guesses(unknown, known)}; known: {', '.join(known)}")
    missing = [f for f in required if f not in raw]
    if missing:
        out.append(f"{where}: missing field(s) {', '.join(missing)}; required: {', '.join(required)}")
    return out


def check_fields(raw: dict, known: tuple[str, ...], required: tuple[str, ...], where: str,
                 error: type[Exception] = ConfigError) -> None:
    """Refuse a TOML table ``raw`` with fields outside ``known`` or without every field of ``required``:
    raises ``error`` with the first line of ``field_problems``."""
    problems = field_problems(raw, known, required, where)
    if problems:
        raise error(problems[0])


def parse_bytes(value: int | str) -> int:
    """``"4g"`` → 4 GiB in bytes; ``"512m"``, ``"100k"``, or a plain integer of bytes."""
    if isinstance(value, int):
        return value
    text = str(value).strip().lower().removesuffix("b")
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    try:
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(text)
    except ValueError:
        raise ValueError(f"{value!r} is not a size like \"512m\", \"4g\" or a number of bytes") from None


@dataclass(frozen=True)
class Suite:
    """A tier's settings (``evals/<tier>/suite.toml``).

    ``upstream`` is a git URL or a local path, ``ref`` the commit (or branch/tag) to check out,
    ``languages`` the tracks in play, ``sample`` how many exercises per track ``doit gen:<tier>`` proves
    when neither ``limit=`` nor ``all=1`` is given, ``prove`` the limits of one proving container. A tier with no single upstream (the swe tier)
    leaves ``upstream``/``ref``/``languages`` out and reads its own settings from ``table`` (the whole file).
    """

    name: str
    upstream: str
    ref: str
    languages: tuple[str, ...]
    sample: int = 3
    prove: Limits = field(default_factory=Limits)
    table: dict = field(default_factory=dict, compare=False, repr=False)  # the whole file, for tier-owned settings

    @property
    def dir(self) -> Path:
        return EVALS / self.name

    @property
    def tasks_dir(self) -> Path:
        return self.dir / "tasks"

    @property
    def answers_dir(self) -> Path:
        return self.dir / "answers"

    @property
    def runs_dir(self) -> Path:
        return self.dir / "runs"

    @property
    def manifest_path(self) -> Path:
        return self.dir / "manifest.json"

    @property
    def checkout_dir(self) -> Path:
        return STATE / "upstream" / self.name

    @property
    def build_dir(self) -> Path:
        """Staged renders and proof stamps, one folder per task: ``.lab/build/<tier>/<task>/``."""
        return STATE / "build" / self.name


def no_tier(name: str) -> str:
    """The one line for a tier ``name`` this lab home lacks: the missing suite.toml, the tiers it has, and (in a
    home with none) what a lab home is and which variable chose it."""
    here = sorted(p.parent.name for p in EVALS.glob("*/suite.toml"))
    line = f"no such tier in this lab home ({EVALS / name / 'suite.toml'} is missing; the tiers here: "
    if here:
        return line + f"{', '.join(here)})"
    chosen = (f"LAB_HOME={os.environ['LAB_HOME']} chose this folder; leave LAB_HOME unset for the project's own "
              "home, or copy the project's evals/ there" if os.environ.get("LAB_HOME") else
              "the project's evals/ folder is missing: restore it from git (`git checkout -- evals`)")
    return line + f"none: a lab home is a folder holding evals/<tier>/suite.toml and evals/agents.toml; {chosen})"


def load_suite(name: str) -> Suite:
    """Read ``evals/<name>/suite.toml``. Raises ConfigError naming the file when it is missing or bad."""
    path = EVALS / name / "suite.toml"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(no_tier(name)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        return Suite(
            name=name,
            upstream=str(raw.get("upstream", "")),
            ref=str(raw["ref"]) if raw.get("upstream") else str(raw.get("ref", "")),
            languages=tuple(raw.get("languages", ())),
            sample=int(raw.get("sample", 3)),
            prove=Limits.parse(raw.get("prove", {}), f"{path} [prove]"),
            table=raw,
        )
    except KeyError as exc:
        raise ConfigError(f"{path}: missing setting {exc.args[0]!r}") from None


@dataclass(frozen=True)
class LabSettings:
    """Settings of the whole lab home (``evals/lab.toml``, optional): ``base_image``, the Debian image lab's own
    images (the grader, model servers) are built FROM, pulled or bootstrapped locally."""

    base_image: str = "debian:bookworm"


def lab_settings() -> LabSettings:
    """Read ``evals/lab.toml`` (the defaults of ``LabSettings`` when there is none). Raises ConfigError naming
    the file when it is not valid TOML or names a setting lab does not know."""
    path = EVALS / "lab.toml"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return LabSettings()
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    unknown = sorted(set(raw) - {"base_image"})
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s) {', '.join(unknown)}; it knows base_image")
    return LabSettings(base_image=str(raw.get("base_image", LabSettings.base_image)))
