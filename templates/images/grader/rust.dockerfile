# Rust: rustc/cargo from Debian (rustc-web, bookworm's modern Rust). Every crate the exercises and their
# references declare (grader/rust/crates.toml) is vendored from the crate registry at build time, versions pinned
# by grader/rust/Cargo.lock, and cargo is pointed at the vendored copy, offline, through source replacement.
# Each dependency set is then compiled once into /opt/lab/rust/seeds/<set>/target (deps.json beside it names
# the set): check.sh starts the target folder of an exercise with the same [dependencies] from it, so grading
# compiles only the exercise itself.
RUN apt-get update && apt-get install -y --no-install-recommends rustc-web cargo-web && rm -rf /var/lib/apt/lists/*
ENV CARGO_HOME=/opt/lab/rust/cargo CARGO_INCREMENTAL=0
COPY grader/rust/ /opt/lab/rust/crates/
RUN set -eu; mkdir -p "$CARGO_HOME"; python3 /opt/lab/rust/crates/crates.py manifest /tmp/vendoring; \
    cd /tmp/vendoring; cargo vendor --locked --versioned-dirs /opt/lab/rust/vendor > "$CARGO_HOME/config.toml"; \
    printf '\n[net]\noffline = true\n' >> "$CARGO_HOME/config.toml"; cat "$CARGO_HOME/config.toml"; \
    python3 /opt/lab/rust/crates/crates.py seeds /opt/lab/rust/seeds; \
    for seed in /opt/lab/rust/seeds/*/; do \
      (cd "$seed" && CARGO_TARGET_DIR="$seed/target" cargo test --offline --all-features --test seed --no-run -q); \
    done; \
    rm -rf /tmp/vendoring "$CARGO_HOME/registry"; du -sh /opt/lab/rust/seeds/*/target
