"""The swe-multi tier's JavaScript canaries: the aider tier's writer (/opt/lab/javascript_canaries.py, a copy of
lab_grader/javascript_canaries.py), with its plain canaries asserting through node's ``assert`` in a mocha file
whose tests assert so (``STYLE`` "assert"; jest's ``expect`` is not there).

    python3 -I /opt/lab/js_canaries.py STYLE TEST_FILE CANARY_FAIL CANARY_PASS [MANIFEST]
"""
import sys

sys.path.insert(0, "/opt/lab")
import javascript_canaries as jc  # noqa: E402


def assert_plain(style, title, indent, a, b):
    """A plain canary asserting ``a`` strictly equals ``b`` with the file's own ``assert``."""
    keyword, quote, _ = style
    keyword = "it" if keyword == "test" else keyword  # mocha's BDD interface has no `test`
    return [f"{indent}{keyword}({jc.source_of(title, quote)}, function () {{",
            f"{indent}  assert.strictEqual({a}, {b});", f"{indent}}});"]


if __name__ == "__main__":
    if sys.argv[1] == "assert":
        jc._plain = assert_plain
    jc.main(sys.argv[2:])
