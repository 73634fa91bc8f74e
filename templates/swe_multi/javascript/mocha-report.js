'use strict';
// lab's mocha reporter (rules/tiers/swe_multi/javascript.py): every test's last state, in jest's --json shape
// ({"testResults": [{"name": file, "assertionResults": [{"fullName", "title", "status"}]}]}), written to the file
// $LAB_JS_REPORT names when the run ends. A test that failed once stays failed (a late error after its pass).
const fs = require('fs');

function LabReporter(runner) {
  const states = new Map();
  const mark = (test, status) => {
    const old = states.get(test);
    if (!(old && old.status === 'failed')) states.set(test, {test, status});
  };
  runner.on('pass', (test) => mark(test, 'passed'));
  runner.on('fail', (test) => mark(test, 'failed'));
  runner.on('pending', (test) => mark(test, 'pending'));
  runner.once('end', () => {
    const files = new Map();
    for (const {test, status} of states.values()) {
      const file = test.file || (test.parent && test.parent.file) || '';
      if (!files.has(file)) files.set(file, []);
      files.get(file).push({fullName: test.fullTitle(), title: test.title, status});
    }
    const report = {testResults: [...files].map(([name, assertionResults]) => ({name, assertionResults}))};
    fs.writeFileSync(process.env.LAB_JS_REPORT, JSON.stringify(report));
  });
}

module.exports = LabReporter;
