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

/** 0 for a file that calls startsFirst, 2 for one that calls runsAlone, 1 for the rest; each file read once. */
function turn(test) {
  const text = readFileSync(test.path, 'utf8');
  if (/^startsFirst\(/m.test(text)) return 0;
  return /^runsAlone\(/m.test(text) ? 2 : 1;
}

class TurnsOrder extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    const turns = new Map(ordered.map((t) => [t.path, turn(t)]));
    // a stable sort: jest's order within each turn
    return [...ordered].sort((a, b) => turns.get(a.path) - turns.get(b.path));
  }
}

module.exports = TurnsOrder;
