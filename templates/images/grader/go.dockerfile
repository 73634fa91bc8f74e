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
# What check.sh uses per grading: cache-links, a link to each of the cache's 256 subfolders (a grading's GOCACHE is a
# copy of it: the image's entries, read-only), and lab-go-output (the readable output of go test -json). The helper
# is built with a throwaway cache, so the image's stays exactly what warm.sh compiled.
COPY grader/go/lab-go-output.go /opt/lab/go/src/lab-go-output.go
RUN set -eu; mkdir /opt/lab/go/cache-links; \
    for d in /opt/lab/go/cache/[0-9a-f][0-9a-f]; do ln -s "$d" /opt/lab/go/cache-links/; done; \
    [ "$(ls /opt/lab/go/cache-links | wc -l)" = 256 ]; \
    tmp=$(mktemp -d); cp -Rs /opt/lab/go/cache "$tmp/cache"; cd /opt/lab/go/src; \
    GOCACHE="$tmp/cache" GO111MODULE=off go build -trimpath -o /opt/lab/go/bin/lab-go-output lab-go-output.go; \
    rm -rf "$tmp"; /opt/lab/go/bin/lab-go-output 0 /dev/null /dev/null 2>/dev/null | grep -qx 'go test exited with 0'
