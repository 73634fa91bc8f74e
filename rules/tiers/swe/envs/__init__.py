"""Lab's table of the swe tier's environments, one module per repository (``envs/<name>.py``, each a tuple
``ENVS`` of ``rules.tiers.swe.env.Env``), recorded from studies of the instances on this machine kind
(evals/swe/NOTES.md) and the era pins of each project. A new repository is a new module here, added to ``ENVS``
below; ``[envs.<name>]`` tables of evals/swe/suite.toml are laid over it (``swebench.environments``).

Order matters only among entries with no ``only``: the first one serving an instance's version is its
environment (``swebench.env_for``)."""
from __future__ import annotations

from rules.tiers.swe.envs import (astropy, django, flask, matplotlib, pylint, pytest, requests, seaborn, sklearn,
                                  sphinx, sympy, xarray)

ENVS = (flask.ENVS + requests.ENVS + pytest.ENVS + pylint.ENVS + sympy.ENVS + django.ENVS + sphinx.ENVS
        + seaborn.ENVS + xarray.ENVS + astropy.ENVS + sklearn.ENVS + matplotlib.ENVS)
