"""lab as an installed package (`pip install .`, not editable): every package of rules/ is in pyproject.toml's list."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_under_rules_is_listed_in_pyproject():
    """pyproject.toml lists its packages by hand; rules.adapters and rules.tiers.swe_multi were missing, so a
    `pip install .` left them out and importing lab's agents and the swe-multi tier failed there. A folder of
    rules/ holding Python files is a package of that list, and the list names no folder that is not one."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {p.parent for p in (ROOT / "rules").rglob("*.py") if "__pycache__" not in p.parts}
    found = {".".join(f.relative_to(ROOT).parts) for f in folders}
    assert found - listed == set(), f"packages missing from pyproject.toml: {sorted(found - listed)}"
    assert listed - found == set(), f"pyproject.toml lists what is no package of rules/: {sorted(listed - found)}"
    assert all((f / "__init__.py").is_file() for f in folders), "a folder of rules/ without __init__.py"
