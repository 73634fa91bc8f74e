"""Compare lab's cold proof of a track selection with a plain script of the same exercises, in ONE invocation,
and measure the no-op and one-change reruns of ``doit gen:aider``.

    python3 benchmarks/prove_vs_plain.py --upstream /path/to/polyglot-benchmark [--langs python,go,javascript]
        [--limit N] [--jobs 2] [--keep]

Per track, one after the other: lab's cold proof (``doit gen:aider langs=<track>`` in a scratch lab home, on a
scratch clone of the upstream: render, prove, publish), then the plain script over exactly the work trees lab
proved (each exercise's reference solution, then its stub): one container of the same grader image per run,
the track's own test command as root, no canaries, no report parsing, build caches shared between the runs in
one scratch volume (Go's seeded from the image's, as lab's are: a one-time copy of ~4 s that counts in the
plain script's time). Both use ``--jobs`` workers. It prints, per
track, both wall clocks and their ratio (lab / plain: below 1 means lab is faster). Only the ratio means much
on a shared, loaded machine; the seconds swing with the load.

Then: the no-op rerun (median of ``--noop-runs``, nothing changed) and the one-change rerun (one exercise's test
file touched in the upstream clone and pulled), whose overhead is its wall clock less that exercise's proof.
The C++ proof cache (``lab-cache-prove``) is the machine's own, so C++ is not measured cold here.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from gen_incremental import clean_up, doit, git, noop_reruns, one_change  # noqa: E402  (benchmarks/ is the script's folder)

PLAIN_VOLUME = "lab-bench-plain-cache"


def plain_command(language: str, exercise: str, test_files: list[str]) -> str:
    """The track's plain test command, as a shell script run as root in the grader image with the work tree at
    /src (read-only) and a shared cache volume at /cache."""
    tests = " ".join(shlex.quote(t) for t in test_files)
    copy = f"mkdir -p /work/x/{exercise} && cp -R /src/. /work/x/{exercise}/ && cd /work/x/{exercise}"
    if language == "python":
        return f"{copy} && python3 -m pytest -q -p no:cacheprovider {tests}"
    if language == "go":
        return (f"[ -d /cache/go ] || cp -a /opt/lab/go/cache /cache/go; {copy} && GOCACHE=/cache/go GOPROXY=off "
                f"GOTOOLCHAIN=local GOFLAGS=-buildvcs=false go test -count=1 .")
    if language == "javascript":
        return (f"{copy} && ln -s /opt/lab/js/node_modules node_modules && "
                f"sed -i -E 's/(^|[^A-Za-z0-9_$.])x(test|it|describe)\\(/\\1\\2(/g' {tests} && "
                f"node /opt/lab/js/node_modules/jest/bin/jest.js --ci --runInBand --cacheDirectory=/cache/jest {tests}")
    if language == "cpp":
        return (f"{copy} && mkdir -p build && cd build && CCACHE_DIR=/cache/ccache cmake .. -DEXERCISM_RUN_ALL_TESTS=1 "
                f"-DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null && CCACHE_DIR=/cache/ccache make -s && ./{exercise}")
    if language == "java":
        return (f"{copy} && cp=$(cat /opt/lab/java/classpath) && mkdir -p /tmp/c && "
                f"javac -nowarn -d /tmp/c -cp \"$cp\" $(find src -name '*.java') && java -cp \"$cp\" "
                f"org.junit.platform.console.ConsoleLauncher execute --disable-banner --class-path /tmp/c "
                f"--scan-class-path /tmp/c --config=junit.jupiter.conditions.deactivate='org.junit.*DisabledCondition'")
    if language == "rust":
        return f"{copy} && CARGO_TARGET_DIR=/tmp/target cargo test --offline -q -- --include-ignored"
    raise SystemExit(f"no plain command for track {language!r}")


def plain_track(builds: list[Path], jobs: int, image: str) -> tuple[float, int, list[str]]:
    """Run the plain script over the proved tasks in ``builds`` (reference then stub of each): (seconds, runs,
    the tasks whose reference did not pass the plain run: a plain run that fails early would flatter it)."""
    from rules import sandbox
    from rules.config import Limits
    from rules.worktree import lay_work_tree

    limits = Limits(cpus=1.0, memory=4 * 1024**3, pids=1024, timeout=600)
    scratch = Path(tempfile.mkdtemp(prefix="lab-bench-plain-"))
    runs = []
    for b in builds:
        meta = json.loads((b / "task" / "task.json").read_text())
        for variant in ("reference", "stub"):
            tree = scratch / b.name / variant
            lay_work_tree(b / "task", tree, b / "answer" if variant == "reference" else None)
            runs.append((tree, plain_command(meta["language"], meta["exercise"], meta["test_files"])))

    def one(run):
        tree, command = run
        return tree, sandbox.run(image, ["bash", "-c", command], mounts=[
            sandbox.Mount(str(tree), "/src", read_only=True),
            sandbox.Mount(sandbox.volume(PLAIN_VOLUME), "/cache", kind="volume")],
            network="none", limits=limits, workdir="/", labels={"lab.role": "bench"},
            tmpfs={"/work": "size=2g,exec", "/tmp": "size=2g,exec"})

    start = time.monotonic()
    # references first, then stubs, as a script would loop over the variants
    ordered = runs[0::2] + runs[1::2]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        done = list(pool.map(one, ordered))
    seconds = time.monotonic() - start
    failed = sorted(tree.parent.name for tree, res in done if tree.name == "reference" and res.exit_code != 0)
    shutil.rmtree(scratch, ignore_errors=True)
    return seconds, len(runs), failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", required=True, help="a local clone of the polyglot benchmark")
    ap.add_argument("--langs", default="python,go,javascript", help="comma-separated tracks")
    ap.add_argument("--limit", type=int, default=0, help="exercises per track (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--noop-runs", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args()
    langs = [x.strip() for x in args.langs.split(",") if x.strip()]
    # doit runs as a user's would: lab's own modules on the path, and Python caching their bytecode (a sandbox
    # that sets PYTHONDONTWRITEBYTECODE would add ~50 ms of compiling to every doit start)
    os.environ["PYTHONPATH"] = str(PROJECT)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

    from rules import images

    scratch = Path(tempfile.mkdtemp(prefix="lab-bench-pvp-"))
    clone = scratch / "upstream"
    subprocess.run(["git", "clone", "-q", args.upstream, str(clone)], check=True)
    home = scratch / "home"
    (home / "evals" / "aider").mkdir(parents=True)
    (home / "evals" / "aider" / "suite.toml").write_text((PROJECT / "evals" / "aider" / "suite.toml").read_text())
    head = git(clone, "rev-parse", "HEAD")
    select = ["all=1"] if not args.limit else [f"limit={args.limit}"]
    results: dict = {"image": images.GRADER, "jobs": args.jobs, "tracks": {},
                     "load_before": [round(x, 2) for x in os.getloadavg()]}
    t, _ = doit(home, "image:grader")
    print(f"grader image {images.GRADER} (not counted): {t:.1f}s", flush=True)
    doit(home, "pull:aider", f"upstream={clone}", f"ref={head}")
    subprocess.run(["docker", "volume", "rm", "-f", PLAIN_VOLUME], capture_output=True)
    build_root = home / ".lab" / "build" / "aider"
    for lang in langs:
        t_lab, _ = doit(home, "gen:aider", *select, f"langs={lang}", f"jobs={args.jobs}")
        builds = sorted(b for b in build_root.glob(f"{lang}-*")
                        if json.loads((b / "proof.json").read_text())["status"] in ("kept", "free"))
        t_plain, runs, failed = plain_track(builds, args.jobs, images.GRADER)
        ratio = t_lab / t_plain if t_plain else float("nan")
        results["tracks"][lang] = {"exercises": len(builds), "lab_seconds": round(t_lab, 1),
                                   "plain_seconds": round(t_plain, 1), "ratio": round(ratio, 3),
                                   "plain_references_failed": failed}
        print(f"{lang:11} {len(builds):3} exercises: lab {t_lab:7.1f}s  plain {t_plain:7.1f}s ({runs} runs)  "
              f"ratio {ratio:.2f}" + (f"  (plain: {len(failed)} references failed: {failed[:5]})" if failed else ""),
              flush=True)
    lab_total = sum(r["lab_seconds"] for r in results["tracks"].values())
    plain_total = sum(r["plain_seconds"] for r in results["tracks"].values())
    results["total_ratio"] = round(lab_total / plain_total, 3) if plain_total else None
    results["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(f"total       lab {lab_total:.1f}s  plain {plain_total:.1f}s  ratio {results['total_ratio']}  (load average "
          f"before {results['load_before']}, after {results['load_after']}: other work on the machine)", flush=True)

    common = [*select, f"langs={','.join(langs)}", f"jobs={args.jobs}"]
    doit(home, "gen:aider", *common)  # the selection changed (all tracks now): publishing again, not counted
    noops = noop_reruns(home, common, args.noop_runs)
    results["noop_seconds"] = [round(x, 3) for x in noops]
    results["noop_seconds_median"] = round(statistics.median(noops), 3)
    print(f"no-op: median {statistics.median(noops):.3f}s of {results['noop_seconds']}", flush=True)

    results["one_change"] = one = one_change(home, clone, common, langs[0])
    print(f"one change ({one['task']}): {one['seconds']:.2f}s, of which its proof {one['proof_seconds']:.2f}s, "
          f"overhead {one['overhead_seconds']:.2f}s; proved again: {one['proved']}", flush=True)
    results["manifest"] = str(home / "evals/aider/manifest.json")
    print(json.dumps(results, indent=2))
    clean_up(scratch, args.keep, PLAIN_VOLUME)


if __name__ == "__main__":
    main()
