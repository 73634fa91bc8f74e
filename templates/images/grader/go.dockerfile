# bookworm's golang-go is 1.19; dnd-character imports `slices` (Go >= 1.21): take Go from backports.
# Offline and deterministic: no proxy, no toolchain switch, no cgo (no exercise needs it, and with a C
# compiler elsewhere in the image cgo would change the build keys of the cached standard library).
RUN apt-get update && apt-get install -y --no-install-recommends -t bookworm-backports golang-1.23-go \
    && ln -sf /usr/lib/go-1.23/bin/go /usr/local/bin/go && ln -sf /usr/lib/go-1.23/bin/gofmt /usr/local/bin/gofmt \
    && rm -rf /var/lib/apt/lists/*
ENV GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOPATH=/opt/lab/go/path \
    GOCACHE=/opt/lab/go/cache
COPY grader/go/warm.sh /opt/lab/go/warm.sh
RUN sh /opt/lab/go/warm.sh
