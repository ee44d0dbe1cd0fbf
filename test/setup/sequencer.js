/**
 * Jest's own order (failed files first, then the longest by the durations it cached, or the
 * largest files when there is no cache, as in CI's fresh clone), with the files that run alone
 * (`runsAlone(…)`, test/helpers/runs-alone.ts) moved to the end: a file waiting for its turn
 * holds a jest worker idle while the other worker finishes its file, and at the end there is
 * nothing else that worker could have done.
 */
const { readFileSync } = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const runsAlone = (test) => /^runsAlone\(/m.test(readFileSync(test.path, 'utf8'));

class AloneLast extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    return [...ordered.filter((t) => !runsAlone(t)), ...ordered.filter(runsAlone)];
  }
}

module.exports = AloneLast;
