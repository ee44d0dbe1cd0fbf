import { progressOf } from '../../src/cli/render/watch';
import type { RunSnapshot } from '../../src/operations/follow';

const snapshot = (rowsPlanned: string | null, rowsRead: number, done: number, active = true, inLedger = 6) =>
  ({ run: { rows_planned: rowsPlanned, partitions_total: 6 }, totals: { rowsRead, total: inLedger }, done, active }) as unknown as RunSnapshot;

describe('watch measures progress in rows against the rows planned', () => {
  test('rows read move the bar before any partition finishes', () => {
    expect(progressOf(snapshot('600000', 150000, 0))).toEqual({ value: 150000, total: 600000, unit: 'rows' });
  });
  test('an estimate that was short never shows more than 100 %', () => {
    expect(progressOf(snapshot('500000', 520000, 5))).toEqual({ value: 520000, total: 520000, unit: 'rows' });
  });
  test('a finished run ends at 100 %, whatever the estimate said', () => {
    expect(progressOf(snapshot('600000', 580000, 6, false))).toEqual({ value: 580000, total: 580000, unit: 'rows' });
  });
  test('runs registered before rows were planned fall back to partitions', () => {
    expect(progressOf(snapshot(null, 100, 2))).toEqual({ value: 2, total: 6, unit: 'partitions' });
  });
  test('partitions split while running (limits.splitTail) count in the total', () => {
    expect(progressOf(snapshot(null, 100, 7, true, 8))).toEqual({ value: 7, total: 8, unit: 'partitions' });
  });
});
