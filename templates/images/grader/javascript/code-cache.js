'use strict';
// V8's code cache for jest's own modules (node 18 has no NODE_COMPILE_CACHE). Preloaded with `node -r` before
// jest starts. Every script compiled from a file under /opt/lab/js/node_modules, whether node loads it (jest's
// command line, its runner) or jest loads it into a test file's context (jest-circus, expect, jest-snapshot:
// through vm.Script), starts from the bytecode the image build kept for exactly that text, so a grading skips
// most of parsing and compiling jest. Any other script (a work tree's file, node's own) is compiled as always,
// and so is a module file that holds `import(` (a dynamic import needs node's own compile).
//
// The cache is written once, at image build (`LAB_CODE_CACHE=build`: a jest run over a sample test, then the
// bytecode of every script it compiled, taken after the run so the functions it ran are in it too), into
// /opt/lab/js/code-cache, root-owned in the image; a grading only reads it (the root filesystem is read-only
// and the tests run unprivileged). An entry is found by the sha256 of the script's whole text: a text that
// differs by a byte from the one the cache was built from finds none and is compiled afresh (V8 itself checks
// only the length). V8 rejects a cache from another V8 version or other flags by itself, and a missing or
// rejected entry only costs the compile it would have saved: the scripts behave the same either way.
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const crypto = require('crypto');
const Module = require('module');

const ROOT = '/opt/lab/js/node_modules/';
const DIR = '/opt/lab/js/code-cache';
const mode = process.env.LAB_CODE_CACHE; // 'build', 'check' (say how many scripts it served), or none
const building = mode === 'build';
delete process.env.LAB_CODE_CACHE;
const counts = {scripts: 0, cached: 0};

let index = {}; // sha256 of a script's text -> [offset, length] of its cache in the blob
let blob = null;
if (!building) {
  try {
    index = JSON.parse(fs.readFileSync(path.join(DIR, 'index.json'), 'utf8'));
    blob = fs.readFileSync(path.join(DIR, 'cache.bin'));
  } catch {
    index = {};
  }
}
const built = new Map(); // building: sha256 -> the script compiled from that text

const Script = vm.Script;
class CachedScript extends Script {
  constructor(code, options) {
    const filename = options && typeof options === 'object' ? options.filename : undefined;
    if (typeof code !== 'string' || typeof filename !== 'string' || !filename.startsWith(ROOT)) {
      super(code, options);
      return;
    }
    const hash = crypto.createHash('sha256').update(code).digest('hex');
    const entry = index[hash];
    super(code, entry ? {...options, cachedData: blob.subarray(entry[0], entry[0] + entry[1])} : options);
    if (building) built.set(hash, this);
    counts.scripts += 1;
    counts.cached += entry && !this.cachedDataRejected ? 1 : 0;
  }
}
vm.Script = CachedScript;

function makeRequire(mod) { // as node's own makeRequireFunction
  const require = function require(id) {
    return mod.require(id);
  };
  function resolve(request, options) {
    return Module._resolveFilename(request, mod, false, options);
  }
  resolve.paths = (request) => Module._resolveLookupPaths(request, mod);
  require.resolve = resolve;
  require.main = process.mainModule;
  require.extensions = Module._extensions;
  require.cache = Module._cache;
  return require;
}

const compile = Module.prototype._compile;
Module.prototype._compile = function (content, filename) {
  if (typeof filename !== 'string' || !filename.startsWith(ROOT) || content.includes('import(')) {
    return compile.call(this, content, filename);
  }
  const source = content.replace(/^#!.*/, ''); // a hashbang line stays, empty: the line numbers stay too
  const fn = new CachedScript(Module.wrap(source), {filename}).runInThisContext({displayErrors: true});
  return fn.call(this.exports, this.exports, makeRequire(this), this, filename, path.dirname(filename));
};

if (mode === 'check') {
  process.on('exit', () => fs.writeSync(2, `code cache: ${counts.cached} of ${counts.scripts} scripts\n`));
}
if (building) {
  process.on('exit', () => {
    const parts = [];
    const out = {};
    let offset = 0;
    for (const [hash, script] of built) {
      const data = script.createCachedData();
      out[hash] = [offset, data.length];
      parts.push(data);
      offset += data.length;
    }
    fs.mkdirSync(DIR, {recursive: true});
    fs.writeFileSync(path.join(DIR, 'cache.bin'), Buffer.concat(parts));
    fs.writeFileSync(path.join(DIR, 'index.json'), JSON.stringify(out));
  });
}
