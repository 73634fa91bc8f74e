"""The tiers lab knows: built in (``BUILT_IN``) and declared by a lab home (``evals/<name>/suite.toml``).

A tier is a class with the interface of ``rules.tier.Tier``. Built-in tiers are named here by import path and
imported on first use (a command about one tier never imports another's modules). Any other tier is declared
by its own folder: ``evals/<name>/suite.toml`` with ``plugin = "module:Class"``; a module of that folder is
imported under a name of the folder's own (``_module``), so a tier can live entirely in its folder and two tiers
may each have a ``tier.py`` (README.md, Adding a tier). The
generic modules reach tiers only through ``get`` and ``names``.
"""
from __future__ import annotations

import sys

from rules.config import EVALS, ConfigError, load_suite

BUILT_IN = {"aider": "rules.tiers.aider:AiderTier", "swe": "rules.tiers.swe:SweTier",
            "swe-multi": "rules.tiers.swe_multi:SweMultiTier"}  # name → "module:Class"
_MADE: dict[str, object] = {}


def names() -> list[str]:
    """The tiers of this lab home: the built-in ones, then those with a folder ``evals/<name>/suite.toml``
    (sorted)."""
    here = sorted(p.parent.name for p in EVALS.glob("*/suite.toml"))
    return list(BUILT_IN) + [n for n in here if n not in BUILT_IN]


def present() -> list[str]:
    """The tiers this lab home has a folder for (``evals/<name>/suite.toml``), in ``names()`` order."""
    return [n for n in names() if (EVALS / n / "suite.toml").is_file()]


def _path(name: str) -> str:
    """The ``module:Class`` of tier ``name``: its suite.toml's ``plugin``, else the built-in one."""
    if (EVALS / name / "suite.toml").is_file():
        plugin = load_suite(name).table.get("plugin")
        if plugin:
            return str(plugin)
    if name in BUILT_IN:
        return BUILT_IN[name]
    if (EVALS / name / "suite.toml").is_file():
        raise ConfigError(f"{EVALS / name / 'suite.toml'}: tier {name!r} is not built in; give its class as "
                          "plugin = \"module:Class\" (README.md, Adding a tier)")
    raise ConfigError(f"unknown tier {name!r}; the tiers here: {', '.join(names())}")


def get(name: str):
    """The tier ``name`` (made once per process). Raises ConfigError naming the known tiers when there is no
    such tier, naming the plugin when its module or class cannot be loaded or made, and naming what is missing
    when the class lacks what lab relies on (``check``)."""
    if name in _MADE:
        return _MADE[name]
    path = _path(name)
    module_name, _, cls_name = path.partition(":")
    if not module_name or not cls_name:
        raise ConfigError(f"tier {name!r}: plugin {path!r} is not \"module:Class\" (README.md, Adding a tier)")
    try:
        cls = getattr(_module(name, module_name), cls_name)
        tier = cls()
    except (ImportError, AttributeError, TypeError) as exc:
        raise ConfigError(f"tier {name!r}: plugin {path!r} does not load or make its tier "
                          f"({exc.__class__.__name__}: {exc}); give plugin = \"module:Class\", a class of "
                          f"{EVALS / name} or the Python path that takes no arguments") from None
    check(name, path, tier)
    _MADE[name] = tier
    return tier


def _module(name: str, module_name: str):
    """The plug-in module ``module_name`` of tier ``name``: a file of the tier's folder (``evals/<name>/<module>.py``
    or a package there) is imported under a name of its own (``lab_tier_<name>_<digest of the folder>.<module>``), so
    two tiers' folders (or two homes) may hold modules of one name; anything else from the Python path."""
    import importlib.util

    folder = EVALS / name
    top = module_name.split(".")[0]
    if not ((folder / f"{top}.py").is_file() or (folder / top / "__init__.py").is_file()):
        return importlib.import_module(module_name)
    import hashlib

    alias = f"lab_tier_{name}_{hashlib.sha256(str(folder).encode()).hexdigest()[:8]}"  # one per folder
    if alias not in sys.modules:
        spec = importlib.util.spec_from_loader(alias, loader=None, is_package=True)
        package = importlib.util.module_from_spec(spec)
        package.__path__ = [str(folder)]
        sys.modules[alias] = package
    if str(folder) not in sys.path:
        sys.path.append(str(folder))  # last: a module the tier imports by its plain name is found, none shadowed
    return importlib.import_module(f"{alias}.{module_name}")


def check(name: str, path: str, tier) -> None:
    """Raise ConfigError (one line, naming the plug-in and the fix) when ``tier`` lacks what lab relies on: its
    ``name`` is ``name``, its ``groups`` a tuple of strings, its ``profile`` a ``rules.tier.Profile`` of this
    tier whose ``group`` is one of its groups and with at least one metric."""
    from rules.tier import Profile

    where = f"tier {name!r} ({path})"
    if getattr(tier, "name", None) != name:
        raise ConfigError(f"tier {name!r}: its class {path} says its name is {getattr(tier, 'name', None)!r}; "
                          f"set the class's name = {name!r} (the folder's name)")
    groups = getattr(tier, "groups", None)
    if not isinstance(groups, tuple) or not groups or not all(isinstance(g, str) for g in groups):
        raise ConfigError(f"{where}: give the class groups, a tuple of its task labels' names (e.g. (\"topic\",))")
    profile = getattr(tier, "profile", None)
    if not isinstance(profile, Profile):
        raise ConfigError(f"{where}: give the class profile, a rules.tier.Profile (README.md, Adding a tier)")
    wrong = [said for bad, said in (
        (profile.tier != name, f"name the tier: Profile({name!r}, ...), it says {profile.tier!r}"),
        (profile.group not in groups, f"group by one of its groups {groups}, it says {profile.group!r}"),
        (not profile.metrics, "have a metric")) if bad]
    if wrong:
        raise ConfigError(f"{where}: its profile must {'; and '.join(wrong)}")


def made() -> dict[str, object]:
    """The tiers this process has made so far (name → tier), for tests of what a command imports."""
    return dict(_MADE)


def groups_of(name: str | None) -> tuple[str, ...]:
    """The group keys of tier ``name`` (its ``groups``: the labels its records carry as top-level keys); () for
    a record that names no tier. Raises ConfigError, as ``get``, for an unknown tier."""
    return tuple(get(name).groups) if name else ()


def suspicions_of(meta: dict) -> tuple:
    """The suspicion scan's table (``rules.scan.Suspicion`` patterns) for the task whose task.json holds
    ``meta``: its tier's ``suspicions(meta)``; () for a task that names no tier, or a tier without a table.
    Raises ConfigError, as ``get``, for an unknown tier."""
    name = meta.get("tier")
    if not name:
        return ()
    table = getattr(get(name), "suspicions", None)
    return tuple(table(meta)) if callable(table) else ()


def conformance_of(meta: dict, task_dir, stub, graded) -> list[dict]:
    """The API conformance flags (shaped as ``rules.scan.scan``'s) of the ``graded`` tree against the ``stub``
    tree of the task in ``task_dir`` whose task.json holds ``meta``: its tier's ``conformance``; [] for a task
    that names no tier, or a tier without the check. Raises ConfigError, as ``get``, for an unknown tier."""
    name = meta.get("tier")
    if not name:
        return []
    check = getattr(get(name), "conformance", None)
    return list(check(meta, task_dir, stub, graded)) if callable(check) else []
