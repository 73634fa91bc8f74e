"""``doit prune:<tier>`` of a tier with one environment image per task group (``swe``, ``swe-multi``): remove the
environment images no published task of the tier needs, with the agent images built FROM them, and say what went
and the bytes that frees, as bounds (``dry=1``: say what would go, remove nothing).

Only images this lab home built for the tier are candidates: those its stamps record (the tier's environment
stamps, ``.lab/images/<prefix><env>.json`` with the tier's ``env_stamp_prefix``: ``swe-env-``,
``swe-multi-env-``; and ``agent-<name>-on-<env image>.json``), only while the engine's image under that tag is
still the one the stamp names (another home on the same engine may have built the tag again since: left alone),
and only those this home made: a build that found the image whole in Docker's cache (another home on the same
engine made it) stamps ``built_here`` false, and such an image is left alone. A published task
(``evals/<tier>/tasks/<id>/task.json``'s ``image``) keeps its environment image and the agent images on it.
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


def made_elsewhere(c: Candidate, created: float | None) -> bool:
    """True when this home's build of ``c`` did not make its image (``created``: the image's Unix time): its
    stamp says ``built_here`` false (the build found it whole in Docker's cache: another home made it), or a
    stamp from before lab recorded that shows an image older than the build that wrote it (the stamp's mtime less
    its ``seconds``, with a minute's slack)."""
    stamp = read_json(c.stamp) or {}
    if "built_here" in stamp:
        return stamp["built_here"] is False
    if created is None or not isinstance(stamp.get("seconds"), (int, float)):
        return False  # nothing says otherwise: as before, the stamp's image is this home's
    return created < c.stamp.stat().st_mtime - stamp["seconds"] - 60


def bounds(mine: set[str], images: dict[str, tuple[tuple[str, ...], int, bool]]) -> tuple[int, int]:
    """What removing the images ``mine`` (ids) frees, in bytes, as ``(at least, at most)``, given every local
    image's ``(layers, size, listed)`` (``sandbox.image_layers``). A layer goes when no listed image outside
    ``mine`` holds it (build intermediates go with the images built on them): along each chain of ``mine``, the
    layers above the longest part a kept image shares. Sizes are known per image, not per layer: a stretch
    between two chains of known size counts toward at most; toward at least only when it is surely freed
    (from a freed or the last kept layer up) and no other freed chain branches inside it (counted once)."""
    sizes = {layers: size for layers, size, _ in images.values()}
    kept = [layers for i, (layers, _, listed) in images.items() if listed and i not in mine]
    freed: set[tuple[str, ...]] = set()
    held: dict[tuple[str, ...], int] = {}  # a freed node → how many of its bottom layers kept images hold
    for i in mine:
        if i not in images:
            continue
        chain = images[i][0]
        shared = max((next((n for n in range(min(len(k), len(chain))) if k[n] != chain[n]),
                           min(len(k), len(chain))) for k in kept), default=0)
        for n in range(shared + 1, len(chain) + 1):
            freed.add(chain[:n])
            held[chain[:n]] = shared
    known = [p for p in freed if p in sizes]

    def below(p):  # the longest strict prefix of p whose size is known (the empty chain: 0 bytes)
        return max((p[:n] for n in range(len(p) - 1, 0, -1) if p[:n] in sizes), key=len, default=())

    segments = {p: below(p) for p in known}
    low = high = 0
    for p, a in segments.items():
        seg = sizes[p] - (sizes[a] if a else 0)
        high += seg
        sure = a in freed or len(a) == held[p]
        alone = all(q == p or segments[q] != a or next((n for n in range(min(len(p), len(q))) if p[n] != q[n]),
                                                         0) <= len(a) for q in known)
        low += seg if sure and alone else 0
    return low, max(high, low)


def prune(suite: Suite, stamps: Path, prefix: str, dry: bool = False) -> str:
    """Remove (``dry``: list) the ``candidates`` (environment stamps named ``prefix``...) whose image the engine
    still holds under their stamp's id and this home made (``made_elsewhere``), and their stamps (a stamp whose
    image is gone is removed too; one whose tag now names another image, or whose image another home made, is
    left alone, said). Returns the lines to print: one per image with its layers' size, then the bytes that frees
    as ``bounds`` (one number when they meet). Raises SandboxError when the engine refuses a removal (what was
    removed before it stays removed)."""
    from rules import sandbox

    lines, mine = [], []
    name = f"prune:{suite.name}"
    found = candidates(suite, stamps, prefix)
    disk = sandbox.image_layers() if found else {}
    for c in found:
        current = sandbox.image_id(c.tag)
        if current is None:
            lines.append(f"  {c.tag}: already gone; its stamp {c.stamp.name} {'would be' if dry else 'is'} removed")
            if not dry:
                c.stamp.unlink(missing_ok=True)
        elif current != c.id:
            lines.append(f"  {c.tag}: left alone (the engine's image {current[:19]} is not the one this home built, "
                         f"{c.id[:19]}: another lab home built the tag since)")
        elif made_elsewhere(c, sandbox.image_created(c.tag)):
            lines.append(f"  {c.tag}: left alone (this home's build found {c.id[:19]} already made, whole in "
                         "Docker's cache: another lab home made it); its stamp stays")
        else:
            mine.append(c)
            lines.append(f"  {c.tag}: {'would be removed' if dry else 'removed'} ({c.kind} image {c.id[:19]}, "
                         f"{_gb(disk.get(c.id, ((), 0))[1])} of layers, its base's included)")
    low, high = bounds({c.id for c in mine}, disk)
    freed = (f"{_gb(low)}" if low == high else f"between {_gb(low)} and {_gb(high)}") + \
        " (their layers no kept image holds)"
    if not mine:
        none = (f"this home built no {suite.name} image (no stamp {prefix}*.json under {stamps})"
                if not any(stamps.glob(f"{prefix}*.json")) else
                "every image this home built is needed by a published task" + (" or left alone" if lines else ""))
        return "\n".join([f"{name}{' (dry run)' if dry else ''}: {none}; nothing "
                          f"{'to remove' if dry else 'removed'}"] + lines)
    if dry:
        head = (f"{name} (dry run): {len(mine)} image(s) no published task needs would be removed, freeing "
                f"{freed}; run without dry=1 to remove them")
        return "\n".join([head] + lines)
    for c in mine:
        sandbox.remove_image(c.tag)
        c.stamp.unlink(missing_ok=True)
    return "\n".join([f"{name}: removed {len(mine)} image(s) no published task needs, freeing {freed}"] + lines)
