"""The grader image's Dockerfile as rendered (pure: no Docker): a track's late fragment comes after every track's
toolchain, so changing it rebuilds no other track's layers, and only when that track is built."""
from rules.render import render

TRACKS = ("python", "go", "javascript", "cpp", "java", "rust")


def test_the_javascript_late_fragment_is_built_after_every_toolchain():
    text = render("images/grader.Dockerfile.j2", base="debian:bookworm", tracks=TRACKS)
    late = text.index("build-code-cache.sh")
    assert all(text.index(f"# ---- {track} ----") < late for track in TRACKS)
    assert text.index("jest/bin/jest.js --version") < late < text.index("COPY grader/lab-versions")


def test_a_grader_without_javascript_has_no_javascript_late_fragment():
    text = render("images/grader.Dockerfile.j2", base="debian:bookworm", tracks=("python", "go"))
    assert "code-cache" not in text and "lazy-babel" not in text and "# ---- go ----" in text
