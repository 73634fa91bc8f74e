"""The environments of psf/requests.

SWE-bench v4.1.0 (``SPECS_REQUESTS``) gives every requests version one spec: Python 3.9, ``pytest``, ``pip install
.``. Its frozen environments (``swebench/resources/swebench-og/psf__requests/<n>/environment.yml``) have an empty
pip section: requests of these eras vendors urllib3 and chardet, and pytest came from conda, frozen at pytest 7.4.4
with pluggy 1.0.0, iniconfig 1.1.1, packaging 24.1, tomli 2.0.1 and exceptiongroup 1.2.0 in each (n = 1921 for 2.3,
2317 for 2.4, 1724 and 1766 for 2.0, 2931 for 2.9: the same six). Versions 0.14 and 2.7 have no freeze; the spec
being one for all, they take the same pins. 2.3's setup commit asks for ``certifi`` (``requires = ['certifi']``):
pinned to the release the other freezes of lab's table carry (2024.8.30).

The network: requests' test files of these eras send most of their tests to httpbin.org (``HTTPBIN_URL``), and the
dataset's lists were made with it reachable. Every grading runs with no network, so such tests are left out of
every expectation (``exclude``, recorded in task.json ``excluded``): those that failed with a name-resolution
error ("Temporary failure in name resolution") in every offline run of the instance's test file in the image, at
base and with the gold patch (evals/swe/NOTES.md, "requests and astropy"), and those connecting to a private-range
address by design (TARPIT, 2.10). A FAIL_TO_PASS test among them is left out too while another decides the
instance (``swebench.render``); an instance whose FAIL_TO_PASS tests all need a network is rejected with them
named.

The local httpbin (0.14, 2.4 and 2.7: the versions whose Lite instances have FAIL_TO_PASS tests only httpbin
decides; 2.3 and 2.10 keep their images and digests): PyPI ``httpbin`` 0.10.4 (psf/httpbin, the continuation of
the 0.9.2 that httpbin.org serves; Requires-Python >=3.8, here bullseye's 3.9.2) and its dependencies at the
versions pip resolved for it on that Python (``HTTPBIN_PINS``), in a venv of its own (``/opt/lab/httpbin``), never
in the tests' venv. ``/opt/lab/httpbin-start``, a ``prepare`` line, serves it on ``HTTPBIN_URL`` (127.0.0.1, the
only interface of a grading's container, whose network is none); every one of these test files reads that
variable (``HTTPBIN = os.environ.get('HTTPBIN_URL', ...)``; 0.14 sets it only when absent), which the test run is
given (``test_env``). Why the graded code cannot reach the server: check.sh runs ``prepare`` as root before any
graded code runs (before the canaries are laid and the tester is handed the tree), so the port is bound before
the tester exists; the server runs as ``nobody`` (uid 65534, no capabilities, ``setsid``, an empty environment,
``python -I``), not the tester (uid 1000, ``as_tester``: ``setpriv`` with no capabilities and no new privileges),
so the tester can neither signal it (``kill`` needs the same uid or CAP_KILL; check.sh's own ``as_tester kill -KILL
-1`` spares it too), trace it, nor bind its port (taken; and a second socket on it with SO_REUSEPORT needs the same
uid); its code is root's, on the image's read-only root, and its private folder ``/tmp/lab-httpbin`` (mode 700,
nobody's) is the tester's to read or write neither. httpbin keeps no state between requests: the graded code can
talk to it as the tests do, and nothing it sends changes what another request is answered. The script waits until
the server answers (120 s at most: a Flask app's imports took seconds at a load of 20 on 2 cores, and a server not
up in time is the one failure here the agent is not to blame for) and says so in one line when it does not; then
the tests that need it fail: an infrastructure failure counted as the agent's, not told apart yet (check.sh has no
channel for it that the tester cannot write too; the line in the grading's log is the evidence). In an agent's container the same line starts
it once (a server that already answers is kept).

What the local server cannot stand for stays excluded, by the evidence of every offline run with it, at base and
with the gold patch (evals/swe/NOTES.md, "A local httpbin for requests"): tests written to reach httpbin.org itself
(a name-resolution error), https to HTTPBIN_URL's host (httpbin.org answered https too; the local server speaks
http), TARPIT's private-range address, and two tests of 0.14 on what httpbin.org's front answered (keep-alive, a
streamed file body). Measured there too: with the local server, most FAIL_TO_PASS tests of these instances pass
at base (the dataset's lists were made against the live service and name tests that its answers failed then), so
the proof (``swebench.prove``) keeps 2317 by the one that fails at base and passes with the fix, and rejects 2674
and 863, whose every remaining FAIL_TO_PASS test passes at base."""
from __future__ import annotations

import shlex

from rules.tiers.swe.env import Env

# psf__requests/{1921,2317}/environment.yml: what conda's pytest 7.4.4 brought (the pip sections are empty)
_PINS = ("pytest==7.4.4", "pluggy==1.0.0", "iniconfig==1.1.1", "packaging==24.1", "tomli==2.0.1",
         "exceptiongroup==1.2.0", "certifi==2024.8.30")


# PyPI httpbin 0.10.4 and what pip 24.0 resolved for it on Python 3.9.2 (bullseye), 2026-12-07
HTTPBIN_PINS = ("httpbin==0.10.4", "blinker==1.9.0", "brotlicffi==1.2.1.0", "cffi==2.0.0", "click==8.1.8",
                "decorator==5.3.2", "flask==3.1.3", "greenlet==2.0.2", "importlib-metadata==8.7.1",
                "itsdangerous==2.2.0", "jinja2==3.1.6", "markupsafe==3.0.4", "pycparser==2.23", "six==1.17.0",
                "werkzeug==3.1.9", "zipp==3.23.1")
HTTPBIN_PORT = 8765
HTTPBIN_URL = f"http://127.0.0.1:{HTTPBIN_PORT}/"
HTTPBIN_START = "/opt/lab/httpbin-start"  # the prepare line: serves httpbin on HTTPBIN_URL (see the docstring)
HTTPBIN_USER = 65534  # nobody: neither root nor the tester (uid 1000)

_HTTPBIN_START = r"""#!/bin/sh
# A local httpbin on 127.0.0.1:PORT for the tests' HTTPBIN_URL (rules/tiers/swe/envs/requests.py): started by root
# before any graded code runs, as nobody (uid UID), which the tester (uid 1000) can neither signal nor replace.
set -u
cd /  # never run anything from the work tree's folder, where check.sh calls this as root
answers() {
  /opt/lab/httpbin/bin/python -I -c 'import sys, urllib.request as u; u.urlopen(sys.argv[1] + "get", timeout=2)' \
    "http://127.0.0.1:PORT/" > /dev/null 2>&1
}
answers && exit 0
set --
dir=/tmp/lab-httpbin
mkdir -p "$dir" && chmod 700 "$dir"
if [ "$(id -u)" = 0 ]; then
  chown UID:UID "$dir"
  set -- setpriv --reuid=UID --regid=UID --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs --
fi
"$@" env -i PATH=/usr/bin:/bin HOME="$dir" TMPDIR="$dir" LANG=C.UTF-8 setsid \
  /opt/lab/httpbin/bin/python -I -m httpbin.core --host 127.0.0.1 --port PORT < /dev/null > "$dir/log" 2>&1 &
i=0
while [ $i -lt 600 ]; do
  answers && exit 0
  sleep 0.2; i=$((i + 1))
done
echo "lab: the local httpbin did not answer on 127.0.0.1:PORT within 120 s:"; tail -n 20 "$dir/log"
exit 1
"""


def httpbin_install() -> tuple[str, ...]:
    """The install steps that put the local httpbin into an image: its venv ``/opt/lab/httpbin`` (Debian's
    Python, ``HTTPBIN_PINS``) and ``HTTPBIN_START``, written one printf argument a line (a Dockerfile's RUN holds
    no raw newline)."""
    script = _HTTPBIN_START.replace("PORT", str(HTTPBIN_PORT)).replace("UID", str(HTTPBIN_USER))
    return (
        "/usr/bin/python3 -m venv /opt/lab/httpbin",
        "/opt/lab/httpbin/bin/pip install 'pip<24.1' && /opt/lab/httpbin/bin/pip install " + " ".join(HTTPBIN_PINS),
        "printf '%s\\n' " + " ".join(shlex.quote(line) for line in script.splitlines()) + f" > {HTTPBIN_START}",
        f"chmod 755 {HTTPBIN_START}",
    )


def _named(path: str, names: str) -> tuple[str, ...]:
    """SWE-bench test names: ``path::`` before each whitespace-separated ``Class::test``."""
    return tuple(f"{path}::{n}" for n in names.split())


# 2.3 (no local httpbin): the tests of its instances that failed with "Temporary failure in name resolution"
# (httpbin.org) in every offline run of their test file in the image, at base and with the gold patch (see above)
_NET_23 = _named("test_requests.py", """
RequestsTestCase::test_BASICAUTH_TUPLE_HTTP_200_OK_GET RequestsTestCase::test_DIGESTAUTH_QUOTES_QOP_VALUE
RequestsTestCase::test_DIGESTAUTH_WRONG_HTTP_401_GET RequestsTestCase::test_DIGEST_AUTH_RETURNS_COOKIE
RequestsTestCase::test_DIGEST_AUTH_SETS_SESSION_COOKIES RequestsTestCase::test_DIGEST_HTTP_200_OK_GET
RequestsTestCase::test_DIGEST_STREAM RequestsTestCase::test_HTTP_200_OK_GET_ALTERNATIVE
RequestsTestCase::test_HTTP_200_OK_GET_WITH_MIXED_PARAMS RequestsTestCase::test_HTTP_200_OK_GET_WITH_PARAMS
RequestsTestCase::test_HTTP_200_OK_HEAD RequestsTestCase::test_HTTP_200_OK_PUT
RequestsTestCase::test_HTTP_302_ALLOW_REDIRECT_GET RequestsTestCase::test_POSTBIN_GET_POST_FILES
RequestsTestCase::test_POSTBIN_GET_POST_FILES_WITH_DATA
RequestsTestCase::test_auth_is_retained_for_redirect_on_host
RequestsTestCase::test_auth_is_stripped_on_redirect_off_host RequestsTestCase::test_basicauth_with_netrc
RequestsTestCase::test_cookie_persists_via_api RequestsTestCase::test_cookie_quote_wrapped
RequestsTestCase::test_cookie_removed_on_expire RequestsTestCase::test_cookie_sent_on_redirect
RequestsTestCase::test_custom_content_type RequestsTestCase::test_decompress_gzip
RequestsTestCase::test_different_encodings_dont_break_post RequestsTestCase::test_fixes_1329
RequestsTestCase::test_generic_cookiejar_works RequestsTestCase::test_header_remove_is_case_insensitive
RequestsTestCase::test_history_is_always_a_list RequestsTestCase::test_manual_redirect_with_partial_body_read
RequestsTestCase::test_mixed_case_scheme_acceptable RequestsTestCase::test_param_cookiejar_works
RequestsTestCase::test_params_are_merged_case_sensitive RequestsTestCase::test_prepared_from_session
RequestsTestCase::test_prepared_request_hook RequestsTestCase::test_pyopenssl_redirect
RequestsTestCase::test_redirect_with_wrong_gzipped_header
RequestsTestCase::test_request_and_response_are_pickleable
RequestsTestCase::test_request_cookie_overrides_session_cookie RequestsTestCase::test_request_cookies_not_persisted
RequestsTestCase::test_request_ok_set RequestsTestCase::test_requests_in_history_are_not_overridden
RequestsTestCase::test_session_pickling RequestsTestCase::test_set_cookie_on_301
RequestsTestCase::test_status_raising RequestsTestCase::test_time_elapsed_blank RequestsTestCase::test_unicode_get
RequestsTestCase::test_unicode_header_name RequestsTestCase::test_unicode_method_name
RequestsTestCase::test_unicode_multipart_post RequestsTestCase::test_uppercase_scheme_redirect
RequestsTestCase::test_urlencoded_get_query_multivalued_param RequestsTestCase::test_user_agent_transfers
TestTimeout::test_stream_timeout""")

# 0.14, 2.4 and 2.7 (the local httpbin): the tests of each version's instance (863, 2317, 2674) that failed in every
# one of three offline runs of its test file in the image with the local httpbin, at base and with the gold patch
# (evals/swe/NOTES.md, "A local httpbin for requests"), by what the failure says:
# - the name of a host outside ("Temporary failure in name resolution"): httpbin.org written into the test;
_OUTSIDE_014 = _named("tests/test_requests.py",
                      "RequestsTestSuite::test_accept_objects_with_string_representations_as_urls")
_OUTSIDE_24 = _named("test_requests.py", """
RequestsTestCase::test_auth_is_stripped_on_redirect_off_host RequestsTestCase::test_pyopenssl_redirect
RequestsTestCase::test_requests_history_is_saved TestTimeout::test_stream_timeout""")
_OUTSIDE_27 = _named("test_requests.py", """
RequestsTestCase::test_auth_is_stripped_on_redirect_off_host RequestsTestCase::test_pyopenssl_redirect""")
# - https to HTTPBIN_URL's host ("SSLError: [SSL: WRONG_VERSION_NUMBER]": the local server speaks http only, as
#   httpbin.org answered both);
_HTTPS = _named("test_requests.py", "RequestsTestCase::test_mixed_case_scheme_acceptable")
# - a private-range address by design (TARPIT, 10.255.255.1: "Network is unreachable"), as 2.10's;
_TARPIT = _named("test_requests.py", "TestTimeout::test_connect_timeout TestTimeout::test_total_timeout_connect")
# - httpbin.org's own front (a load balancer answering "Connection: keep-alive"; a streamed file body taken):
#   the local server answers "close" and 501 ("AssertionError: 'close' != 'keep-alive'", "501 != 200").
_FRONT_014 = _named("tests/test_requests.py", """
RequestsTestSuite::test_connection_keepalive_and_close RequestsTestSuite::test_file_post_data""")


def _requests(version: str, exclude: tuple[str, ...], httpbin: bool = False) -> Env:
    """A requests version's entry; ``httpbin``: with the local httpbin (the docstring; without it the entry is
    the one it was, digest included)."""
    install = ("pip install -c /opt/lab/constraints.txt . pytest",)
    if not httpbin:
        return Env(f"requests-{version}", "psf/requests", (version,), "3.9", "bullseye", install=install,
                   pins=_PINS, pythonpath=".", exclude=exclude)
    return Env(f"requests-{version}", "psf/requests", (version,), "3.9", "bullseye",
               install=install + httpbin_install(), pins=_PINS, pythonpath=".", prepare=(HTTPBIN_START,),
               test_env=(("HTTPBIN_URL", HTTPBIN_URL),), exclude=exclude)


ENVS: tuple[Env, ...] = (
    Env("requests-2.10", "psf/requests", ("2.10",), "3.9", "bullseye",
        install=("pip install . pytest",),
        # these connect to a private-range address (TARPIT) by design: never run with a network, never expected
        exclude=("tests/test_requests.py::TestTimeout::test_connect_timeout",
                 "tests/test_requests.py::TestTimeout::test_total_timeout_connect")),
    _requests("0.14", _OUTSIDE_014 + _FRONT_014, httpbin=True),
    _requests("2.3", _NET_23),
    _requests("2.4", _OUTSIDE_24 + _HTTPS + _TARPIT, httpbin=True),
    _requests("2.7", _OUTSIDE_27 + _HTTPS + _TARPIT, httpbin=True),
)
