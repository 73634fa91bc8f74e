"""The environments of django/django, for SWE-bench Lite's 114 django instances (versions 3.0 to 5.0).

Pins: SWE-bench v4.1.0's frozen environments (tag v4.1.0 = commit 726c5461e2ef52d83cf1ea2107870a8bb3328d57 of
SWE-bench/SWE-bench), ``swebench/resources/swebench-og/django__django/<number>/environment.yml``: the ``pip:``
section of the file named beside each entry, whole. Every Lite instance of a version that has such a file has the
same pip section (4, 7, 8, 12, 5, 4 and 3 files for 3.0 ... 5.0); the conda part (Python's patch level, sqlite,
openssl) is not reproduced: the interpreters are pyenv's 3.6.15 / 3.8.18 / 3.9.18 (``pythons=``; the files say
3.6.13 / 3.8.20 / 3.9.20) and Debian bookworm's 3.11.2 (3.11.10).

Like SWE-bench's (``swebench/harness/constants/python.py``, SPECS_DJANGO): the tests run with django's own
``tests/runtests.py`` (runner "django": ``rules.tiers.swe.djangotests``); 3.0 to 3.2 generate and use the
en_US.UTF-8 locale. SWE-bench installs the work tree with ``pip install -e .``; lab installs no copy of django at
all (the environment-setup commits of 3.0 and 3.2 are not in the fork lab reads, and an installed copy could hold
the fix): the work tree is first on ``PYTHONPATH``. Python 3.6 has no ``ast`` end positions, which the canaries'
script needs: those images get Debian's python3 for it.
"""
from __future__ import annotations

from rules.tiers.swe.env import Env

_LOCALE = ("sed -i '/en_US.UTF-8/s/^# //g' /etc/locale.gen && locale-gen",)
_LOCALE_ENV = (("LANG", "en_US.UTF-8"), ("LANGUAGE", "en_US:en"), ("LC_ALL", "en_US.UTF-8"))
_INSTALL = ("pip install -r /opt/lab/constraints.txt",)
# a pyenv build's sysconfig links extensions (pywatchman's) against libpython in the folder it was built in
# (/root/.pyenv/versions/X.Y.Z/lib), absent from the image: the copy at /opt/lab/python/lib is the one to find
_INSTALL_PYENV = ("LDFLAGS=-L/opt/lab/python/lib pip install -r /opt/lab/constraints.txt",)


def _django(version: str, python: str, pins: tuple[str, ...], locale: bool = False) -> Env:
    """django ``version`` on ``python`` with ``pins`` (its v4.1.0 environment file's pip section): no copy of
    django installed, the work tree on the path, django's runner."""
    apt = ("locales",) if locale else ()
    if python == "3.6":
        apt += ("python3",)  # the canaries' script (ast end positions: Python 3.8 or newer)
    install = (_LOCALE if locale else ()) + (_INSTALL if python == "3.11" else _INSTALL_PYENV)
    return Env(f"django-{version}", "django/django", (version,), python, "bookworm", install=install, pins=pins,
               apt=apt, pythonpath=".", setup_source=False, test_env=_LOCALE_ENV if locale else (), runner="django")


# 3.0: environment.yml of django__django-11179 (Python 3.6.13 there)
_PY36_30 = (
    "aiohttp==3.8.6", "aiosignal==1.2.0", "argon2-cffi==21.3.0", "argon2-cffi-bindings==21.2.0", "asgiref==3.4.1",
    "async-timeout==4.0.2", "asynctest==0.13.0", "attrs==22.2.0", "bcrypt==4.0.1", "cffi==1.15.1",
    "charset-normalizer==2.0.12", "dataclasses==0.8", "docutils==0.18.1", "frozenlist==1.2.0", "geoip2==4.6.0",
    "idna==3.10", "idna-ssl==1.1.0", "jinja2==3.0.3", "markupsafe==2.0.1", "maxminddb==2.2.0", "multidict==5.2.0",
    "numpy==1.19.5", "pillow==8.4.0", "pycparser==2.21", "pylibmc==1.6.3", "python-memcached==1.62", "pytz==2024.2",
    "pywatchman==1.4.1", "pyyaml==6.0.1", "requests==2.27.1", "selenium==3.141.0", "sqlparse==0.4.4", "tblib==1.7.0",
    "typing-extensions==4.1.1", "urllib3==1.26.20", "yarl==1.7.2",
)

# 3.1: environment.yml of django__django-12708 (Python 3.6.13 there)
_PY36_31 = (
    "aiohttp==3.8.6", "aiosignal==1.2.0", "argon2-cffi==21.3.0", "argon2-cffi-bindings==21.2.0", "asgiref==3.4.1",
    "async-timeout==4.0.2", "asynctest==0.13.0", "attrs==22.2.0", "bcrypt==4.0.1", "cffi==1.15.1",
    "charset-normalizer==2.0.12", "dataclasses==0.8", "docutils==0.18.1", "frozenlist==1.2.0", "geoip2==4.6.0",
    "idna==3.10", "idna-ssl==1.1.0", "jinja2==3.0.3", "markupsafe==2.0.1", "maxminddb==2.2.0", "multidict==5.2.0",
    "numpy==1.19.5", "pillow==8.4.0", "pycparser==2.21", "pylibmc==1.6.3", "python-memcached==1.62", "pytz==2024.2",
    "pywatchman==1.4.1", "pyyaml==6.0.1", "requests==2.27.1", "selenium==3.141.0", "sqlparse==0.4.4", "tblib==1.7.0",
    "typing-extensions==4.1.1", "urllib3==1.26.20", "yarl==1.7.2",
)

# 3.2: environment.yml of django__django-13658 (Python 3.6.13 there)
_PY36_32 = (
    "aiohttp==3.8.6", "aiosignal==1.2.0", "argon2-cffi==21.3.0", "argon2-cffi-bindings==21.2.0", "asgiref==3.4.1",
    "async-timeout==4.0.2", "asynctest==0.13.0", "attrs==22.2.0", "backports-zoneinfo==0.2.1", "bcrypt==4.0.1",
    "cffi==1.15.1", "charset-normalizer==2.0.12", "dataclasses==0.8", "docutils==0.18.1", "frozenlist==1.2.0",
    "geoip2==4.6.0", "idna==3.10", "idna-ssl==1.1.0", "importlib-resources==5.4.0", "jinja2==3.0.3",
    "markupsafe==2.0.1", "maxminddb==2.2.0", "multidict==5.2.0", "numpy==1.19.5", "pillow==8.4.0", "pycparser==2.21",
    "pylibmc==1.6.3", "pymemcache==3.5.2", "python-memcached==1.62", "pytz==2024.2", "pywatchman==1.4.1",
    "pyyaml==6.0.1", "requests==2.27.1", "selenium==3.141.0", "six==1.16.0", "sqlparse==0.4.4", "tblib==1.7.0",
    "typing-extensions==4.1.1", "tzdata==2024.2", "urllib3==1.26.20", "yarl==1.7.2", "zipp==3.6.0",
)

# 4.0: environment.yml of django__django-14855 (Python 3.8.20 there)
_PY38_40 = (
    "aiohappyeyeballs==2.4.3", "aiohttp==3.10.9", "aiosignal==1.3.1", "argon2-cffi==23.1.0",
    "argon2-cffi-bindings==21.2.0", "asgiref==3.8.1", "async-timeout==4.0.3", "attrs==24.2.0",
    "backports-zoneinfo==0.2.1", "bcrypt==4.2.0", "certifi==2024.8.30", "cffi==1.17.1", "charset-normalizer==3.4.0",
    "docutils==0.20.1", "exceptiongroup==1.2.2", "frozenlist==1.4.1", "geoip2==4.8.0", "h11==0.14.0", "idna==3.10",
    "jinja2==3.1.4", "markupsafe==2.1.5", "maxminddb==2.6.2", "multidict==6.1.0", "numpy==1.24.4",
    "outcome==1.3.0.post0", "pillow==10.4.0", "propcache==0.2.0", "pycparser==2.22", "pylibmc==1.6.3",
    "pymemcache==4.0.0", "pysocks==1.7.1", "python-memcached==1.62", "pytz==2024.2", "pywatchman==2.0.0",
    "pyyaml==6.0.2", "redis==5.1.1", "requests==2.32.3", "selenium==4.25.0", "sniffio==1.3.1",
    "sortedcontainers==2.4.0", "sqlparse==0.5.1", "tblib==3.0.0", "trio==0.26.2", "trio-websocket==0.11.1",
    "typing-extensions==4.12.2", "tzdata==2024.2", "urllib3==2.2.3", "websocket-client==1.8.0", "wsproto==1.2.0",
    "yarl==1.14.0",
)

# 4.1: environment.yml of django__django-15695 (Python 3.9.20 there)
_PY39_41 = (
    "aiohappyeyeballs==2.4.3", "aiohttp==3.10.9", "aiosignal==1.3.1", "aiosmtpd==1.4.6", "argon2-cffi==23.1.0",
    "argon2-cffi-bindings==21.2.0", "asgiref==3.8.1", "async-timeout==4.0.3", "atpublic==5.0", "attrs==24.2.0",
    "bcrypt==4.2.0", "black==24.10.0", "certifi==2024.8.30", "cffi==1.17.1", "charset-normalizer==3.4.0",
    "click==8.1.7", "docutils==0.21.2", "exceptiongroup==1.2.2", "frozenlist==1.4.1", "geoip2==4.8.0", "h11==0.14.0",
    "idna==3.10", "jinja2==3.1.4", "markupsafe==3.0.1", "maxminddb==2.6.2", "multidict==6.1.0",
    "mypy-extensions==1.0.0", "numpy==2.0.2", "outcome==1.3.0.post0", "packaging==24.1", "pathspec==0.12.1",
    "pillow==10.4.0", "platformdirs==4.3.6", "propcache==0.2.0", "pycparser==2.22", "pylibmc==1.6.3",
    "pymemcache==4.0.0", "pysocks==1.7.1", "pytz==2024.2", "pywatchman==2.0.0", "pyyaml==6.0.2", "redis==5.1.1",
    "requests==2.32.3", "selenium==4.25.0", "sniffio==1.3.1", "sortedcontainers==2.4.0", "sqlparse==0.5.1",
    "tblib==3.0.0", "tomli==2.0.2", "trio==0.26.2", "trio-websocket==0.11.1", "typing-extensions==4.12.2",
    "tzdata==2024.2", "urllib3==2.2.3", "websocket-client==1.8.0", "wsproto==1.2.0", "yarl==1.14.0",
)

# 4.2: environment.yml of django__django-16255 (Python 3.9.20 there)
_PY39_42 = (
    "aiohappyeyeballs==2.4.3", "aiohttp==3.10.9", "aiosignal==1.3.1", "aiosmtpd==1.4.6", "argon2-cffi==23.1.0",
    "argon2-cffi-bindings==21.2.0", "asgiref==3.8.1", "async-timeout==4.0.3", "atpublic==5.0", "attrs==24.2.0",
    "bcrypt==4.2.0", "black==24.10.0", "certifi==2024.8.30", "cffi==1.17.1", "charset-normalizer==3.4.0",
    "click==8.1.7", "docutils==0.21.2", "exceptiongroup==1.2.2", "frozenlist==1.4.1", "geoip2==4.8.0", "h11==0.14.0",
    "idna==3.10", "jinja2==3.1.4", "markupsafe==3.0.1", "maxminddb==2.6.2", "multidict==6.1.0",
    "mypy-extensions==1.0.0", "numpy==2.0.2", "outcome==1.3.0.post0", "packaging==24.1", "pathspec==0.12.1",
    "pillow==10.4.0", "platformdirs==4.3.6", "propcache==0.2.0", "pycparser==2.22", "pylibmc==1.6.3",
    "pymemcache==4.0.0", "pysocks==1.7.1", "pytz==2024.2", "pywatchman==2.0.0", "pyyaml==6.0.2", "redis==5.1.1",
    "requests==2.32.3", "selenium==4.25.0", "sniffio==1.3.1", "sortedcontainers==2.4.0", "sqlparse==0.5.1",
    "tblib==3.0.0", "tomli==2.0.2", "trio==0.26.2", "trio-websocket==0.11.1", "typing-extensions==4.12.2",
    "tzdata==2024.2", "urllib3==2.2.3", "websocket-client==1.8.0", "wsproto==1.2.0", "yarl==1.14.0",
)

# 5.0: environment.yml of django__django-17087 (Python 3.11.10 there)
_PY311_50 = (
    "aiohappyeyeballs==2.4.3", "aiohttp==3.10.9", "aiosignal==1.3.1", "aiosmtpd==1.4.6", "argon2-cffi==23.1.0",
    "argon2-cffi-bindings==21.2.0", "asgiref==3.8.1", "atpublic==5.0", "attrs==24.2.0", "bcrypt==4.2.0",
    "black==24.10.0", "certifi==2024.8.30", "cffi==1.17.1", "charset-normalizer==3.4.0", "click==8.1.7",
    "docutils==0.21.2", "frozenlist==1.4.1", "geoip2==4.8.0", "h11==0.14.0", "idna==3.10", "jinja2==3.1.4",
    "markupsafe==3.0.1", "maxminddb==2.6.2", "multidict==6.1.0", "mypy-extensions==1.0.0", "numpy==2.1.2",
    "outcome==1.3.0.post0", "packaging==24.1", "pathspec==0.12.1", "pillow==10.4.0", "platformdirs==4.3.6",
    "propcache==0.2.0", "pycparser==2.22", "pylibmc==1.6.3", "pymemcache==4.0.0", "pysocks==1.7.1",
    "pywatchman==2.0.0", "pyyaml==6.0.2", "redis==5.1.1", "requests==2.32.3", "selenium==4.25.0", "sniffio==1.3.1",
    "sortedcontainers==2.4.0", "sqlparse==0.5.1", "tblib==3.0.0", "trio==0.26.2", "trio-websocket==0.11.1",
    "typing-extensions==4.12.2", "tzdata==2024.2", "urllib3==2.2.3", "websocket-client==1.8.0", "wsproto==1.2.0",
    "yarl==1.14.0",
)


ENVS: tuple[Env, ...] = (
    _django("3.0", "3.6", _PY36_30, locale=True),
    _django("3.1", "3.6", _PY36_31, locale=True),
    _django("3.2", "3.6", _PY36_32, locale=True),
    _django("4.0", "3.8", _PY38_40),
    _django("4.1", "3.9", _PY39_41),
    _django("4.2", "3.9", _PY39_42),
    _django("5.0", "3.11", _PY311_50),
)
