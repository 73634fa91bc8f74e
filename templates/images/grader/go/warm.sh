#!/bin/sh
# Fill the image's GOCACHE with what any exercise's `go test` needs from the standard library: every
# importable std package compiled, and the vet facts `go test`'s built-in vet step reads for them.
# Without this each fresh grader container recompiles std first (about 19 s on one core).
set -eu
dir=$(mktemp -d)
cd "$dir"
printf 'module labwarm\n\ngo 1.18\n' > go.mod
pkgs=$(go list -e -f '{{if and (not .Incomplete) (ne .Name "main")}}{{.ImportPath}}{{end}}' std \
       | grep -v -E '(^|/)internal(/|$)|^vendor/' || true)
{ echo 'package labwarm'; echo; echo 'import ('
  for p in $pkgs; do echo "	_ \"$p\""; done
  echo ')'; } > warm.go
printf 'package labwarm\n\nimport "testing"\n\nfunc TestWarm(t *testing.T) {}\n\nfunc Example() {}\n' > warm_test.go
go test -count=1 -json . > /dev/null
cd / && rm -rf "$dir"
# Go refreshes the mtime of a cache entry it uses once the entry is an hour old: in a container that copies
# each used file of the image up into the container's layer, on every test run. Entries dated in the future
# (2100) are never refreshed, and the daily trim keeps them.
find "$(go env GOCACHE)" -type f -exec touch -d @4102444800 {} +
echo "go: warmed $(echo "$pkgs" | wc -w) std packages into $(go env GOCACHE) ($(du -sh "$(go env GOCACHE)" | cut -f1))"
