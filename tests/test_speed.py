"""Speed work that must not change what lab decides (no Docker): publishing reads only what changed."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from rules import build, files


def _tree(root: Path, content: dict[str, str]) -> Path:
    for rel, text in content.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_sync_reads_nothing_when_neither_tree_changed_and_still_repairs_an_edited_copy(tmp_path, monkeypatch):
    src = _tree(tmp_path / "src", {"a.txt": "a", "d/b.txt": "b"})
    dst = tmp_path / "dst"
    record = build._sync(src, dst, {"tests.json": b"[1]"})
    assert (dst / "a.txt").read_text() == "a" and (dst / "tests.json").read_bytes() == b"[1]"

    def no_reading(root):
        raise AssertionError(f"read {root}")

    with monkeypatch.context() as m:
        m.setattr(files, "tree_digest", no_reading)
        assert build._sync(src, dst, {"tests.json": b"[1]"}, record) == record  # nothing read
        with pytest.raises(AssertionError):  # new extra content: the trees are compared again
            build._sync(src, dst, {"tests.json": b"[2]"}, record)
    (dst / "d" / "b.txt").write_text("edited by hand")
    os.utime(dst / "d" / "b.txt", ns=(1, 1))
    record2 = build._sync(src, dst, {"tests.json": b"[1]"}, record)
    assert (dst / "d" / "b.txt").read_text() == "b", "an edited published copy is laid back"
    (src / "a.txt").write_text("changed")
    build._sync(src, dst, {"tests.json": b"[1]"}, record2)
    assert (dst / "a.txt").read_text() == "changed"
