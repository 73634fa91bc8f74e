"""The environments of pydata/xarray.

SWE-bench v4.1.0 (``SPECS_XARRAY``) makes xarray's environment with conda from the repository's
``ci/requirements/environment.yml`` (about 280 conda-forge packages) on Python 3.10, then pip-installs ten pins
over it. Its frozen environment for 0.12 (``swebench/resources/swebench-og/pydata__xarray/<n>/environment.yml``,
the same for all 13 Verified instances of 0.12, e.g. n = 4094) gives every version used here; conda is not at
hand, so the Python packages the test files of these instances import are installed from PyPI at those versions
(wheels; tornado builds from its sdist). Python 3.10 is not Debian's: pyenv's 3.10 build (``pythons=DIR``).

Where the freeze is no environment pip can make (pip's pins laid over conda's packages without a check), the
nearest one that is, recorded: distributed 2022.8.1 with the pinned dask 2022.8.1 (the freeze pairs it with
distributed 2024.9.1, made for dask 2024.9.1) and so tornado 6.1 (distributed 2022.8.1 asks for < 6.2); zarr
2.18.2 (2.18.3 asks for numpy >= 1.24; the pin is numpy 1.23.0); pytest-env left out (1.1.5 asks for pytest >= 8.3.3;
the pin is pytest 7.4.0; xarray's settings of this era set no ``env``). Left out as well, as no test file of these
instances imports them (backends, plots and conversions only): cartopy, cdms2, cfgrib, iris, pseudonetcdf,
rasterio, and the non-Python libraries conda brought for them."""
from __future__ import annotations

from rules.tiers.swe.env import Env

# SWE-bench's ten pip pins (SPECS_XARRAY), then numbagg from the environment file's pip section
_SPEC = ("numpy==1.23.0", "packaging==23.1", "pandas==1.5.3", "pytest==7.4.0", "python-dateutil==2.8.2",
         "pytz==2023.3", "six==1.16.0", "scipy==1.11.1", "setuptools==68.0.0", "dask==2022.8.1", "numbagg==0.8.2")
# the conda packages of pydata__xarray/4094/environment.yml that these tests import, at their frozen versions
_CONDA = ("bottleneck==1.4.0", "cftime==1.6.4", "fsspec==2024.9.0", "h5netcdf==1.4.0", "h5py==3.11.0",
          "hypothesis==6.114.0", "matplotlib==3.9.2", "nc-time-axis==1.4.1", "netCDF4==1.7.1", "numba==0.60.0",
          "numcodecs==0.13.0", "numexpr==2.10.0", "pint==0.24.3", "pooch==1.8.2", "pydap==3.5", "pytest-cov==5.0.0",
          "pytest-xdist==3.6.1", "seaborn==0.13.2", "sparse==0.15.4", "toolz==1.0.0")
# what those bring with them, at the freeze's versions
_DEPS = ("appdirs==1.4.4", "asciitree==0.3.3", "attrs==24.2.0", "beautifulsoup4==4.12.3", "certifi==2024.8.30",
         "charset-normalizer==3.4.0", "click==8.1.7", "cloudpickle==3.0.0", "contourpy==1.3.0", "coverage==7.6.1",
         "cycler==0.12.1", "docopt-ng==0.9.0", "exceptiongroup==1.2.2", "execnet==2.1.1", "fasteners==0.17.3",
         "flexcache==0.3", "flexparser==0.3.1", "fonttools==4.54.1", "idna==3.10", "importlib-metadata==8.5.0",
         "importlib-resources==6.4.5", "iniconfig==2.0.0", "jinja2==3.1.4", "kiwisolver==1.4.7", "llvmlite==0.43.0",
         "locket==1.0.0", "lxml==5.3.0", "markupsafe==3.0.1", "msgpack==1.1.0", "partd==1.4.2", "pillow==10.4.0",
         "platformdirs==4.3.6", "pluggy==1.5.0", "psutil==6.0.0", "pyparsing==3.1.4", "pyyaml==6.0.2",
         "requests==2.32.3", "sortedcontainers==2.4.0", "soupsieve==2.5", "tblib==3.0.0", "tomli==2.0.2",
         "typing-extensions==4.12.2", "urllib3==2.2.3", "webob==1.8.8", "zict==3.0.0", "zipp==3.20.2")
# pip-installable stand-ins where the freeze is no consistent environment (see above)
_MINE = ("distributed==2022.8.1", "tornado==6.1", "zarr==2.18.2")

_PINS = _SPEC + _CONDA + _DEPS + _MINE
_NAMES = " ".join(p.split("==")[0] for p in _SPEC + _CONDA + _MINE)

ENVS: tuple[Env, ...] = (
    # xarray reads its version from git (setuptools_scm), which the setup tree has not: the environment-setup
    # commit's own (git describe: v0.17.0-100-g1c198a191)
    Env("xarray-0.12", "pydata/xarray", ("0.12",), "3.10", "bookworm",
        install=(f"SETUPTOOLS_SCM_PRETEND_VERSION=0.17.1.dev100 pip install -c /opt/lab/constraints.txt . {_NAMES}",),
        pins=_PINS, pythonpath="."),
)
