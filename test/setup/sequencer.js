/**
 * Jest's own order (failed files first, then the longest by the durations it cached, or the
 * largest files when there is no cache, as in CI's fresh clone), with two moves read from each
 * file's text (test/helpers/turns.ts): files that call `startsFirst(…)` go first, so a file that
 * takes minutes runs while the other slot works through the rest instead of running on alone at
 * the end; files that call `runsAlone(…)` go last, since a file waiting for its turn holds a jest
 * worker idle while the other worker finishes its file, and at the end there is nothing else
 * that worker could have done.
 */
const { readFileSync } = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const calls = (name) => (test) => new RegExp(`^${name}\\(`, 'm').test(readFileSync(test.path, 'utf8'));
const startsFirst = calls('startsFirst');
const runsAlone = calls('runsAlone');

class TurnsOrder extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    const middle = ordered.filter((t) => !startsFirst(t) && !runsAlone(t));
    return [...ordered.filter(startsFirst), ...middle, ...ordered.filter(runsAlone)];
  }
}

module.exports = TurnsOrder;
