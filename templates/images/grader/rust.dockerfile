RUN apt-get update && apt-get install -y --no-install-recommends rustc-web cargo-web && rm -rf /var/lib/apt/lists/*
