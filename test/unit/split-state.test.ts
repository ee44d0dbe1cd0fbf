/** When the run asks for a running partition to be cut (limits.splitTail), and what a cut adds. */
import * as run from '../../src/workflows/run-state';
import * as control from '../../src/workflows/control-state';
import * as gates from '../../src/workflows/gate-state';
import { partitionsCut, tailKey, wantsSplit } from '../../src/workflows/split-state';
import type { RunState } from '../../src/workflows/run-state';

const limits = { chunkSize: 1000, concurrency: 2, splitTail: true };
const opened = run.opened(run.initialRunState(limits, '2026-12-03T05:00:00.000Z'), { partitionsTotal: 3, firstPage: [] }, false);
const running = (s: RunState, ...ids: string[]) => ids.reduce((t, id, i) => run.launched(t, { id, ordinal: i }), s);
const oneLeft = running(opened, 'p3');
const who = { actor: 'alice', reason: 'r' };

describe('wantsSplit', () => {
  test.each([
    ['a free slot, nothing left to start, one partition running', oneLeft, false, undefined, true],
    ['without limits.splitTail', running({ ...opened, limits: { ...opened.limits, splitTail: undefined } }, 'p3'), false, undefined, false],
    ['the plan still has partitions to start', oneLeft, true, undefined, false],
    ['every slot busy', running(opened, 'p2', 'p3'), false, undefined, false],
    ['nothing running (the run is about to finish)', opened, false, undefined, false],
    ['paused', control.pause(oneLeft, who, 'k'), false, undefined, false],
    ['cancelling', control.requestCancel(oneLeft, who, 'k'), false, undefined, false],
    ['a ramp stage holding back the rest of the plan', gates.rampStarted(oneLeft, [2]), false, undefined, false],
    ['the last cut found nothing worth cutting, and nothing changed since', oneLeft, false, tailKey(oneLeft), false],
    ['the last cut found nothing, then another slot was added', { ...oneLeft, limits: { ...oneLeft.limits, concurrency: 3 } }, false, tailKey(oneLeft), true],
  ] as [string, RunState, boolean, string | undefined, boolean][])('%s', (_label, s, planLeft, tried, expected) => {
    expect(wantsSplit(s, planLeft, tried)).toBe(expected);
  });
});

test('a cut raises the run partition count to what the ledger holds, never lowers it', () => {
  expect(partitionsCut(oneLeft, 4).partitionsTotal).toBe(4);
  expect(partitionsCut(oneLeft, 2).partitionsTotal).toBe(3);
});
