"""``doit prune:<tier>`` of a tier with one environment image per task group (``swe``, ``swe-multi``): remove the
environment images no published task of the tier needs, with the agent images built FROM them, and say what went
and the bytes freed (``dry=1``: say what would go, remove nothing).

Only images this lab home built for the tier are candidates: those its stamps record (the tier's environment
stamps, ``.lab/images/<prefix><env>.json`` with the tier's ``env_stamp_prefix``: ``swe-env-``,
``swe-multi-env-``; and ``agent-<name>-on-<env image>.json``), and only while the engine's image under that tag
is still the one the stamp names (another home on the same engine may have built the tag again since: left
alone). A published task (``evals/<tier>/tasks/<id>/task.json``'s ``image``) keeps its environment image and the
agent images on it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rules.config import Suite
from rules.files import read_json


@dataclass(frozen=True)
class Candidate:
    """An image this home built that no published task needs: its ``tag``, the ``stamp`` file recording it, the
    image ``id`` the stamp names, and ``kind`` ("environment" or "agent")."""

    tag: str
    stamp: Path
    id: str
    kind: str


def needed(suite: Suite) -> set[str]:
    """The environment image tags the published tasks of ``suite`` run in (their task.json ``image``)."""
    if not suite.tasks_dir.is_dir():
        return set()
    out = set()
    for task in suite.tasks_dir.iterdir():
        meta = read_json(task / "task.json") if (task / "tests.json").is_file() else None
        if isinstance(meta, dict) and meta.get("image"):
            out.add(meta["image"])
    return out


def candidates(suite: Suite, stamps: Path, prefix: str) -> list[Candidate]:
    """The images recorded by the stamps in the folder ``stamps`` that no published task of ``suite`` needs:
    environment images (stamps ``<prefix>*.json``) whose tag no task.json names, then the agent images built FROM
    them (an agent stamp whose ``base`` is such a tag), agents first (an image's children go before it). Raises
    ValueError for an empty ``prefix`` (it would take every stamp)."""
    if not prefix:
        raise ValueError("give the stamp name prefix of the tier's environment images")
    keep = needed(suite)
    envs, agents = [], []
    for path in sorted(stamps.glob(f"{prefix}*.json")):
        stamp = read_json(path) or {}
        if stamp.get("image") and stamp["image"] not in keep:
            envs.append(Candidate(stamp["image"], path, str(stamp.get("id", "")), "environment"))
    gone = {c.tag for c in envs}
    for path in sorted(stamps.glob("agent-*-on-*.json")):
        stamp = read_json(path) or {}
        if stamp.get("base") in gone and stamp.get("image"):
            agents.append(Candidate(stamp["image"], path, str(stamp.get("id", "")), "agent"))
    return agents + envs


def _gb(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


def prune(suite: Suite, stamps: Path, prefix: str, dry: bool = False) -> str:
    """Remove (``dry``: list) the ``candidates`` (environment stamps named ``prefix``...) whose image the engine
    still holds under their stamp's id, and their stamps (a stamp whose image is gone is removed too; one whose
    tag now names another image is left alone, said). Returns the lines to print: one per image, then the total (``dry``: the images' sizes added,
    an upper bound, as layers shared with kept images stay; else the engine's layer bytes before minus after).
    Raises SandboxError when the engine refuses a removal (what was removed before it stays removed)."""
    from rules import sandbox

    lines, sizes, mine = [], 0, []
    name = f"prune:{suite.name}"
    for c in candidates(suite, stamps, prefix):
        current = sandbox.image_id(c.tag)
        if current is None:
            lines.append(f"  {c.tag}: already gone; its stamp {c.stamp.name} {'would be' if dry else 'is'} removed")
            if not dry:
                c.stamp.unlink(missing_ok=True)
        elif current != c.id:
            lines.append(f"  {c.tag}: left alone (the engine's image {current[:19]} is not the one this home built, "
                         f"{c.id[:19]}: another lab home built the tag since)")
        else:
            size = sandbox.image_size(c.tag) or 0
            sizes += size
            mine.append(c)
            lines.append(f"  {c.tag}: {'would be removed' if dry else 'removed'} ({c.kind} image {c.id[:19]}, "
                         f"{_gb(size)})")
    if dry:
        head = (f"{name} (dry run): {len(mine)} image(s) no published task needs would be removed; their sizes "
                f"add to {_gb(sizes)} (layers they share with kept images would stay); run without dry=1 to remove them"
                if mine else f"{name} (dry run): every image this home built is needed by a published task; "
                             "nothing to remove")
        return "\n".join([head] + lines)
    before = sandbox.layers_size() if mine else 0
    for c in mine:
        sandbox.remove_image(c.tag)
        c.stamp.unlink(missing_ok=True)
    freed = before - sandbox.layers_size() if mine else 0
    head = (f"{name}: removed {len(mine)} image(s) no published task needs; {_gb(max(freed, 0))} freed (the "
            f"engine's image layers before and after)" if mine else
            f"{name}: every image this home built is needed by a published task; nothing removed")
    return "\n".join([head] + lines)
