"""Turn crates.toml into cargo projects at image build time (python3, standard library only).

``python3 crates.py manifest DIR``: a crate in DIR depending on every version of every crate in crates.toml
(renamed where a crate appears at several versions), for ``cargo vendor``.
``python3 crates.py seeds DIR``: one crate per dependency set in DIR/<set>/, each with one integration test,
so that ``cargo test --no-run`` compiles that set exactly as a grading run of such an exercise does, and
DIR/<set>/deps.json: the set as canonical JSON (``deps_key``), which check.sh matches an exercise's
[dependencies] against to pick the set's compiled dependencies.
"""
import json
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def sets() -> dict[str, dict[str, str]]:
    return tomllib.loads((HERE / "crates.toml").read_text())


def dependency_lines(deps: dict[str, str]) -> list[str]:
    return [f"{json.dumps(name)} = {json.dumps(version)}" for name, version in deps.items()]


def write_crate(folder: Path, name: str, lines: list[str], test: bool) -> None:
    (folder / "src").mkdir(parents=True, exist_ok=True)
    (folder / "Cargo.toml").write_text(
        f'[package]\nname = "{name}"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        "[dependencies]\n" + "".join(line + "\n" for line in lines))
    (folder / "src" / "lib.rs").write_text("")
    if test:
        (folder / "tests").mkdir(exist_ok=True)
        (folder / "tests" / "seed.rs").write_text("#[test]\nfn seed() {}\n")


def manifest(out: Path) -> None:
    pairs = sorted({(n, v) for deps in sets().values() for n, v in deps.items()})
    lines = [f'{json.dumps(f"{n}-{i}")} = {{ package = {json.dumps(n)}, version = {json.dumps(v)} }}'
             for i, (n, v) in enumerate(pairs)]
    write_crate(out, "lab-rust-crates", lines, test=False)
    if (HERE / "Cargo.lock").is_file():
        (out / "Cargo.lock").write_bytes((HERE / "Cargo.lock").read_bytes())


def deps_key(deps: dict) -> str:
    """The canonical JSON of a [dependencies] table (check.sh computes the same for the exercise's)."""
    return json.dumps(deps, sort_keys=True, separators=(",", ":"))


def seeds(out: Path) -> None:
    for name, deps in sets().items():
        write_crate(out / name, name, dependency_lines(deps), test=True)
        (out / name / "deps.json").write_text(deps_key(deps) + "\n")


if __name__ == "__main__":
    {"manifest": manifest, "seeds": seeds}[sys.argv[1]](Path(sys.argv[2]))
