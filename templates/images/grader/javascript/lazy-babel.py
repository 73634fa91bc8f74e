"""Make jest-snapshot 29 load Babel on first use instead of at start.

jest-snapshot's InlineSnapshots.js requires @babel/generator, @babel/types and @babel/core when it is loaded (in
every jest run, twice: in jest's own process and in each test file's context), for one thing only: writing inline
snapshots, which a run with --ci never does. Loading them costs a grading about a sixth of its CPU. This rewrites
those three top-level requires into functions that require the same modules, the same way, when first called:
what runs and what it returns are unchanged. Run once at image build; it fails (exit 1) unless it finds exactly
the code it expects, so a jest upgrade that changes it stops the build instead of passing unpatched.
"""
import re
import sys

path = sys.argv[1]
text = open(path, encoding="utf-8").read()
opt = (r"\{\s*(?:// @ts-expect-error requireOutside Babel transform\s*)?"
       r"\[\(globalThis\['jest-symbol-do-not-touch'\] \|\| globalThis\.Symbol\)\.for\(\s*"
       r"'jest-resolve-outside-vm-option'\s*\)\]: true\s*\}")
block = re.compile(
    r"const generate = // @ts-expect-error requireOutside Babel transform\s*"
    r"require\(require\.resolve\('@babel/generator', " + opt + r"\)\)\.default;\s*"
    r"const \{\s*isAwaitExpression,\s*templateElement,\s*templateLiteral,\s*traverse,\s*traverseFast\s*\} = "
    r"require\(require\.resolve\('@babel/types', " + opt
    + r"\)\);\s*// @ts-expect-error requireOutside Babel transform\s*"
    r"const \{parseSync\} = require\(require\.resolve\('@babel/core', " + opt + r"\)\);\n")
found = block.findall(text)
if len(found) != 1:
    sys.exit(f"lazy-babel: {path}: the Babel requires were not found as expected ({len(found)} matches): "
             "check this patch against the installed jest-snapshot")
lazy = """// lab (templates/images/grader/javascript/lazy-babel.py): Babel is required on first use, not at load
const babelOnce = (name) => {
  let loaded;
  return () => loaded || (loaded = require(require.resolve(name, {
    [(globalThis['jest-symbol-do-not-touch'] || globalThis.Symbol).for('jest-resolve-outside-vm-option')]: true
  })));
};
const babelGenerator = babelOnce('@babel/generator');
const babelTypes = babelOnce('@babel/types');
const babelCore = babelOnce('@babel/core');
const generate = (...args) => babelGenerator().default(...args);
const isAwaitExpression = (...args) => babelTypes().isAwaitExpression(...args);
const templateElement = (...args) => babelTypes().templateElement(...args);
const templateLiteral = (...args) => babelTypes().templateLiteral(...args);
const traverse = (...args) => babelTypes().traverse(...args);
const traverseFast = (...args) => babelTypes().traverseFast(...args);
const parseSync = (...args) => babelCore().parseSync(...args);
"""
open(path, "w", encoding="utf-8").write(block.sub(lambda m: lazy, text))
