"""The grader image as rendered and built from (pure: no Docker): a track's late fragment comes after every
track's toolchain, so changing it rebuilds no other track's layers, and only when that track is built; lab_grader
comes last; no bytecode cache is an input."""
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


def test_lab_grader_is_the_last_layer_and_lands_where_python3_isolated_finds_it():
    text = render("images/grader.Dockerfile.j2", base="debian:bookworm", tracks=TRACKS)
    copy = text.index("COPY grader/lab_grader/ /usr/lib/python3/dist-packages/lab_grader/\n")
    assert text.index("RUN chmod 755 /usr/local/bin/lab-versions") < copy
    assert text[copy:].count("\nRUN ") == 1 and "compileall" in text[copy:]


def test_the_grader_image_is_built_from_its_files_but_no_bytecode_cache(tmp_path, monkeypatch):
    from rules import images

    for rel in ("grader.Dockerfile.j2", "grader/lab_grader/batch.py", "grader/lab_grader/__pycache__/batch.pyc",
                "grader/rust/crates.pyc", "agents/noop.Dockerfile.j2"):
        (tmp_path / "images" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "images" / rel).write_text(rel)
    monkeypatch.setattr(images, "TEMPLATES", tmp_path)
    got = [p.relative_to(tmp_path / "images").as_posix() for p in images.grader_templates()]
    assert sorted(got) == ["grader.Dockerfile.j2", "grader/lab_grader/batch.py"]
    assert set(images.context_files()) == {"grader.Dockerfile.j2", "grader/lab_grader/batch.py",
                                           "agents/noop.Dockerfile.j2", "ca-certificates.crt"}


def test_two_tags_of_one_repository_build_through_staging_tags_of_their_own():
    from rules.images import staging_tag

    assert staging_tag("lab/grader:latest") == staging_tag("lab/grader") == "lab/grader:staging"
    assert staging_tag("lab/grader:py") == "lab/grader:py-staging"
    assert staging_tag("localhost:5000/lab/grader") == "localhost:5000/lab/grader:staging"
    assert staging_tag("lab/agent-noop:latest") == "lab/agent-noop:staging"
