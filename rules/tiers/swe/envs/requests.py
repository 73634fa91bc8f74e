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
named. Not done: a local httpbin in the image on the grading's loopback, which would let them run."""
from __future__ import annotations

from rules.tiers.swe.env import Env

# psf__requests/{1921,2317}/environment.yml: what conda's pytest 7.4.4 brought (the pip sections are empty)
_PINS = ("pytest==7.4.4", "pluggy==1.0.0", "iniconfig==1.1.1", "packaging==24.1", "tomli==2.0.1",
         "exceptiongroup==1.2.0", "certifi==2024.8.30")


def _named(path: str, names: str) -> tuple[str, ...]:
    """SWE-bench test names: ``path::`` before each whitespace-separated ``Class::test``."""
    return tuple(f"{path}::{n}" for n in names.split())


# The tests of each version's instances that failed with "Temporary failure in name resolution" (httpbin.org) in
# every offline run of their test file in the image, at base and with the gold patch (see above)
_NET_014 = _named("tests/test_requests.py", """
RequestsTestSuite::test_BASICAUTH_HTTP_200_OK_GET RequestsTestSuite::test_BASICAUTH_TUPLE_HTTP_200_OK_GET
RequestsTestSuite::test_DIGESTAUTH_HTTP_200_OK_GET RequestsTestSuite::test_DIGESTAUTH_WRONG_HTTP_401_GET
RequestsTestSuite::test_GET_no_redirect RequestsTestSuite::test_HEAD_no_redirect
RequestsTestSuite::test_HTTP_200_OK_GET RequestsTestSuite::test_HTTP_200_OK_GET_WITH_MIXED_PARAMS
RequestsTestSuite::test_HTTP_200_OK_GET_WITH_PARAMS RequestsTestSuite::test_HTTP_200_OK_HEAD
RequestsTestSuite::test_HTTP_200_OK_PUT RequestsTestSuite::test_HTTP_302_ALLOW_REDIRECT_GET
RequestsTestSuite::test_HTTP_302_GET RequestsTestSuite::test_POSTBIN_GET_POST_FILES
RequestsTestSuite::test_POSTBIN_GET_POST_FILES_STRINGS RequestsTestSuite::test_POSTBIN_GET_POST_FILES_WITH_HEADERS
RequestsTestSuite::test_POSTBIN_GET_POST_FILES_WITH_PARAMS
RequestsTestSuite::test_accept_objects_with_string_representations_as_urls RequestsTestSuite::test_bytes_files
RequestsTestSuite::test_cached_response RequestsTestSuite::test_can_have_none_in_header_values
RequestsTestSuite::test_connection_keepalive_and_close RequestsTestSuite::test_danger_mode_redirects
RequestsTestSuite::test_decompress_gzip RequestsTestSuite::test_default_status_raising
RequestsTestSuite::test_empty_response RequestsTestSuite::test_file_post_data RequestsTestSuite::test_head_content
RequestsTestSuite::test_httpauth_recursion RequestsTestSuite::test_iter_lines RequestsTestSuite::test_max_redirects
RequestsTestSuite::test_multiple_hooks RequestsTestSuite::test_none_vals_in_data_are_deleted
RequestsTestSuite::test_nonurlencoded_post_data RequestsTestSuite::test_nonurlencoded_postdata
RequestsTestSuite::test_nonzero_evaluation RequestsTestSuite::test_permissive_iter_content
RequestsTestSuite::test_post_fields_with_multiple_values_and_files
RequestsTestSuite::test_post_fields_with_multiple_values_and_files_as_tuples
RequestsTestSuite::test_prefetch_redirect_bug RequestsTestSuite::test_prefetch_return_response_interaction
RequestsTestSuite::test_redirect_history RequestsTestSuite::test_relative_redirect_history
RequestsTestSuite::test_request_ok_set RequestsTestSuite::test_response_has_unicode_url
RequestsTestSuite::test_response_sent RequestsTestSuite::test_session_HTTP_200_OK_GET
RequestsTestSuite::test_session_cookies_with_return_response_false
RequestsTestSuite::test_session_persistent_headers RequestsTestSuite::test_session_persistent_params
RequestsTestSuite::test_single_hook RequestsTestSuite::test_status_raising
RequestsTestSuite::test_str_data_content_type RequestsTestSuite::test_unicode_get
RequestsTestSuite::test_unpickled_session_requests RequestsTestSuite::test_upload_binary_data
RequestsTestSuite::test_urlencoded_get_query_multivalued_param RequestsTestSuite::test_urlencoded_post_data
RequestsTestSuite::test_urlencoded_post_query_and_data
RequestsTestSuite::test_urlencoded_post_query_multivalued_and_data
RequestsTestSuite::test_urlencoded_post_querystring RequestsTestSuite::test_urlencoded_post_querystring_multivalued
RequestsTestSuite::test_user_agent_transfers""")
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
_NET_24 = _named("test_requests.py", """
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
RequestsTestCase::test_history_is_always_a_list RequestsTestCase::test_json_param_post_content_type_works
RequestsTestCase::test_manual_redirect_with_partial_body_read RequestsTestCase::test_mixed_case_scheme_acceptable
RequestsTestCase::test_param_cookiejar_works RequestsTestCase::test_params_are_merged_case_sensitive
RequestsTestCase::test_prepared_from_session RequestsTestCase::test_prepared_request_hook
RequestsTestCase::test_pyopenssl_redirect RequestsTestCase::test_redirect_with_wrong_gzipped_header
RequestsTestCase::test_request_and_response_are_pickleable
RequestsTestCase::test_request_cookie_overrides_session_cookie RequestsTestCase::test_request_cookies_not_persisted
RequestsTestCase::test_request_ok_set RequestsTestCase::test_requests_history_is_saved
RequestsTestCase::test_requests_in_history_are_not_overridden RequestsTestCase::test_session_pickling
RequestsTestCase::test_set_cookie_on_301 RequestsTestCase::test_status_raising
RequestsTestCase::test_time_elapsed_blank RequestsTestCase::test_unicode_get
RequestsTestCase::test_unicode_header_name RequestsTestCase::test_unicode_method_name
RequestsTestCase::test_unicode_multipart_post RequestsTestCase::test_uppercase_scheme_redirect
RequestsTestCase::test_urlencoded_get_query_multivalued_param RequestsTestCase::test_user_agent_transfers
TestTimeout::test_encoded_methods TestTimeout::test_none_timeout TestTimeout::test_read_timeout
TestTimeout::test_stream_timeout""")
# 2.7's runs failed these too, and three tests 2.4 does not have; sorted as 2.4's list is, so the entry's digest
# is the one its images were built with
_NET_27 = tuple(sorted(_NET_24 + _named("test_requests.py", """
RequestsTestCase::test_response_iter_lines RequestsTestCase::test_unconsumed_session_response_closes_connection
test_urllib3_retries""")))


def _requests(version: str, exclude: tuple[str, ...]) -> Env:
    return Env(f"requests-{version}", "psf/requests", (version,), "3.9", "bullseye",
               install=("pip install -c /opt/lab/constraints.txt . pytest",), pins=_PINS, pythonpath=".",
               exclude=exclude)


ENVS: tuple[Env, ...] = (
    Env("requests-2.10", "psf/requests", ("2.10",), "3.9", "bullseye",
        install=("pip install . pytest",),
        # these connect to a private-range address (TARPIT) by design: never run with a network, never expected
        exclude=("tests/test_requests.py::TestTimeout::test_connect_timeout",
                 "tests/test_requests.py::TestTimeout::test_total_timeout_connect")),
    _requests("0.14", _NET_014),
    _requests("2.3", _NET_23),
    _requests("2.4", _NET_24),
    _requests("2.7", _NET_27),
)
