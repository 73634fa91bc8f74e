'use strict';
// jest's start-up caches, built at image build (node 18 has no NODE_COMPILE_CACHE). Preloaded with `node -r`
// before jest starts, it serves two things from /opt/lab/js/code-cache, for jest's own modules only (the files
// under /opt/lab/js/node_modules):
// - V8's code cache: every script compiled from such a file, whether node loads it (jest's command line, its
//   runner) or jest loads it into a test file's context (jest-circus, expect: through vm.Script), starts from the
//   bytecode kept for exactly that text, so a grading skips most of parsing and compiling jest. An entry is found
//   by the sha256 of the script's whole text: a text that differs by a byte finds none and is compiled afresh
//   (V8 itself checks only the length). V8 rejects a cache from another V8 version or other flags by itself.
// - where each module that one of them requires was found (request and requiring folder -> file), by node or,
//   for a test file's context, by jest's default resolver (this file is also jest's `resolver`, which hands
//   every other request to jest's default): the search (a dozen stat calls a module) is done once, at image
//   build. Kept only for a request made from such a file and found under /opt/lab/js/node_modules, so the search
//   never left the image's read-only files and gives the same answer at every grading.
// Any other script or request (a work tree's above all, node's own modules) goes through node as always, and so
// does a module file that holds `import(` (a dynamic import needs node's own compile). A missing or rejected entry
// only costs the work it would have saved: the modules behave the same either way.
//
// Written once, at image build (`LAB_CODE_CACHE=build`: a jest run over a sample test, then the bytecode of every
// script it compiled, taken after the run so the functions it ran are in it too, and every search it made), root-
// owned in the image; a grading only reads them (the root filesystem is read-only, the tests run unprivileged).
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const crypto = require('crypto');
const Module = require('module');

const ROOT = '/opt/lab/js/node_modules/';
const DIR = '/opt/lab/js/code-cache';
const mode = process.env.LAB_CODE_CACHE; // 'build', 'check' (say how much the caches served), or none
const building = mode === 'build';
delete process.env.LAB_CODE_CACHE;
const counts = {scripts: 0, cached: 0, searches: 0, found: 0};

let index = {}; // sha256 of a script's text -> [offset, length] of its code cache in cache.bin
let blob = null;
let found = {}; // requiring folder + '\0' + request -> the file node resolved it to
let jestFound = {}; // the same for jest's resolver, the key also naming the options that change its answer
if (!building) {
  try {
    index = JSON.parse(fs.readFileSync(path.join(DIR, 'index.json'), 'utf8'));
    blob = fs.readFileSync(path.join(DIR, 'cache.bin'));
    found = JSON.parse(fs.readFileSync(path.join(DIR, 'resolve.json'), 'utf8'));
    jestFound = JSON.parse(fs.readFileSync(path.join(DIR, 'jest-resolve.json'), 'utf8'));
  } catch {
    index = {};
    found = {};
    jestFound = {};
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
Object.defineProperty(CachedScript, 'name', {value: 'Script'}); // as a graded script sees vm.Script: by its name
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

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, isMain, options) {
  if (isMain || options !== undefined || typeof request !== 'string' || !parent
      || typeof parent.filename !== 'string' || !parent.filename.startsWith(ROOT)) {
    return resolveFilename.call(this, request, parent, isMain, options);
  }
  const key = path.dirname(parent.filename) + '\0' + request;
  counts.searches += 1;
  if (Object.prototype.hasOwnProperty.call(found, key)) {
    counts.found += 1;
    return found[key];
  }
  const filename = resolveFilename.call(this, request, parent, isMain, options);
  if (building && typeof filename === 'string' && filename.startsWith(ROOT)) found[key] = filename;
  return filename;
};

// jest's resolver (the `resolver` of check.sh's jest config): jest's default resolver, its answers for requests
// from jest's own folders served from the table built with it at image build
function resolver(request, options) {
  const basedir = options.basedir;
  if (typeof request !== 'string' || typeof basedir !== 'string' || !(basedir + '/').startsWith(ROOT)) {
    return options.defaultResolver(request, options);
  }
  const key = JSON.stringify([basedir, request, options.conditions, options.extensions, options.moduleDirectory,
    options.paths]);
  counts.searches += 1;
  if (Object.prototype.hasOwnProperty.call(jestFound, key)) {
    counts.found += 1;
    return jestFound[key];
  }
  const filename = options.defaultResolver(request, options);
  if (building && typeof filename === 'string' && filename.startsWith(ROOT)) jestFound[key] = filename;
  return filename;
}
module.exports = resolver;

if (mode === 'check') {
  process.on('exit', () => fs.writeSync(2, `code cache: ${counts.cached} of ${counts.scripts} scripts; ` +
    `${counts.found} of ${counts.searches} module searches\n`));
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
    fs.writeFileSync(path.join(DIR, 'resolve.json'), JSON.stringify(found));
    fs.writeFileSync(path.join(DIR, 'jest-resolve.json'), JSON.stringify(jestFound));
  });
}
