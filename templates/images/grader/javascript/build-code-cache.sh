#!/bin/sh
# Build jest's start-up caches (code-cache.js) at image build: one jest run as a grading's (templates/aider/javascript/
# check.sh.j2: the same flags, config and transform) over the sample exercise, every test enabled; then check
# that its tests ran as expected, with the cache read back.
set -eu
w=$(mktemp -d)
cp /opt/lab/js/sample/* "$w"
cd "$w"
ln -s /opt/lab/js/node_modules node_modules
sed -i -E 's/(^|[^A-Za-z0-9_$.])x(test|it|describe)\(/\1\2(/g' sample.spec.js
cat > config.json <<JSON
{
  "rootDir": "$w",
  "testEnvironment": "node",
  "watchman": false,
  "testTimeout": 30000,
  "cacheDirectory": "$w/.jest-cache",
  "resolver": "/opt/lab/js/code-cache.js",
  "transform": {"\\\\.[cm]?[jt]sx?\$": ["/opt/lab/js/node_modules/@swc/jest", {"swcrc": false,
    "jsc": {"target": "es2022", "parser": {"syntax": "ecmascript"}}, "module": {"type": "commonjs"}}]}
}
JSON
jest() {
  node -r /opt/lab/js/code-cache.js /opt/lab/js/node_modules/jest/bin/jest.js --ci --runInBand --forceExit \
    --config config.json --json --outputFile=out.json --runTestsByPath sample.spec.js > log 2>&1 || true
  python3 - <<'PY'
import json
suites = json.load(open("out.json"))["testResults"]
got = sorted((a["title"], a["status"]) for a in suites[0]["assertionResults"])
want = sorted([("passes", "passed"), ("resolves", "passed"), ("each 1", "passed"), ("each 2", "passed"),
               ("fails with the solution error", "failed"), ("fails an equality", "failed"),
               ("fails a toBe", "failed"), ("fails a toThrow", "failed"),
               ("fails through expect, its error rewritten", "failed")])
assert got == want, f"the code cache's sample run: {got}"
PY
}
LAB_CODE_CACHE=build jest
rm -rf .jest-cache
LAB_CODE_CACHE=check jest
line=$(grep '^code cache: ' log)
echo "$line"
# every script served from the cache (a cache V8 rejects, e.g. for other flags, would serve none)
echo "$line" | grep -Eq '^code cache: ([0-9]+) of \1 scripts;' \
  || { echo "the code cache served too few scripts"; exit 1; }
cd /
rm -rf "$w"
