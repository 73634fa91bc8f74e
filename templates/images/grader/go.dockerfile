# bookworm's golang-go is 1.19; dnd-character imports `slices` (Go >= 1.21): take Go from backports
RUN apt-get update && apt-get install -y --no-install-recommends -t bookworm-backports golang-1.23-go \
    && ln -sf /usr/lib/go-1.23/bin/go /usr/local/bin/go && ln -sf /usr/lib/go-1.23/bin/gofmt /usr/local/bin/gofmt \
    && rm -rf /var/lib/apt/lists/*
ENV GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod
