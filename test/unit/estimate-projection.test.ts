import { project, type MeasuredFacts, type ScopeFacts } from '../../src/operations/estimate-projection';
import { REFERENCE_PACE } from '../../src/operations/orchestration-pace';
import type { SampledWork } from '../../src/operations/estimate-sample';
import { FINAL_SAMPLE } from '../../src/gates/gate-checks';
import { resolveSpec } from '../../src/specs/resolve';
import { specSchema } from '../../src/specs/schema';

const spec = (extra: Record<string, unknown> = {}, limits: Record<string, unknown> = {}) =>
  resolveSpec(
    specSchema.parse({
      name: 'orders',
      reason: 'r',
      database: 'DATABASE_URL',
      source: { table: 'public.orders', key: 'id' },
      partition: { by: 'range', column: 'id', size: 1000 },
      transform: { name: 't', version: 1, sql: 'SELECT c.id FROM chunk c' },
      target: { table: 'public.totals', key: ['id'], mode: 'upsert' },
      limits: { concurrency: 4, chunkSize: 10_000, ...limits },
      ...extra,
    }),
  );
const scope = (rows: number): ScopeFacts => ({ rows, exact: true, rowsPerPartition: rows, bytesRead: null });
const measured: MeasuredFacts = { parallel: 2, countSeconds: 0.2, checkSeconds: 0.1, pace: REFERENCE_PACE };
const ORCHESTRATION_SLOT_MS = REFERENCE_PACE.slotMs;
const ORCHESTRATION_MS_PER_PARTITION = REFERENCE_PACE.msPerPartition;
// 3,000 sampled rows at 0.1 ms each, half of them new, a fifth changed; written in 600 ms
const written: SampledWork = {
  rows: 3_000,
  computeMs: 300,
  inserts: 1_500,
  updates: 600,
  preview: [],
  written: { ms: 600, walBytes: 300_000, storageBytes: 450_000, imageRows: 2_100, imageBytes: 42_000 },
};
const readOnly: SampledWork = { ...written, written: undefined };

test('a run of big partitions is paced by the database: the sample scaled to the scope, spread over the partitions measured side by side', () => {
  const p = project(spec(), 8, scope(1_000_000), written, measured);
  expect(p).toMatchObject({ inserts: 500_000, updates: 200_000, unchanged: 300_000, walBytes: 100_000_000, storageBytes: 150_000_000, lowerBound: false });
  expect(p.computeSeconds).toBeCloseTo(50); // 100 s of transforming, two partitions at a time
  expect(p.writeSeconds).toBeCloseTo(100);
  expect(p.orchestrationSeconds).toBeCloseTo((8 * ORCHESTRATION_SLOT_MS) / 4 / 1000);
  // checks in start and in registration, the count, the final check's sixteenth in two lanes, start and finish
  const finalCheck = ((1_000_000 / FINAL_SAMPLE) * 0.1 * 1e-3) / 2 + (8 * 5) / 1000 / 4;
  expect(p.fixedSeconds).toBeCloseTo(2 * 0.1 + 0.2 + finalCheck + 0.3);
  expect(p.durationSeconds).toBeCloseTo(150 + p.fixedSeconds);
  expect(p.bindingLimit).toBe("the database: 2 partitions' work at a time (measured)");
  expect(p.images).toEqual({ rows: 700_000, bytes: 14_000_000, keep: '14 days' });
});

test('many small partitions are paced by what Temporal orchestrates a second, or by the slots their hops hold', () => {
  const tiny: SampledWork = { rows: 30, computeMs: 3, inserts: 30, updates: 0, preview: [] };
  const rate = project(spec({}, { concurrency: 20 }), 2_000, scope(2_000), tiny, { ...measured, parallel: 1 });
  expect(rate.orchestrationSeconds).toBeCloseTo((2_000 * ORCHESTRATION_MS_PER_PARTITION) / 1000);
  expect(rate.bindingLimit).toBe(
    `orchestration: 2000 partitions at about ${ORCHESTRATION_MS_PER_PARTITION} ms each, the most Temporal starts and reports a second`,
  );
  // at concurrency 2 each slot's hops, not the server's rate, set the pace
  const slots = project(spec({}, { concurrency: 2 }), 200, scope(20_000), tiny, { ...measured, parallel: 1 });
  expect(slots.bindingLimit).toBe(
    `orchestration: 200 partitions, 2 at a time (limits.concurrency), each holding its slot about ${ORCHESTRATION_SLOT_MS} ms for Temporal besides its database work`,
  );
  expect(slots.durationSeconds - slots.fixedSeconds).toBeCloseTo((200 * ORCHESTRATION_SLOT_MS) / 1000 / 2 + 2 / 2);
});

test('a rows/s cap that is slower than the work binds, and the allowed hours stretch whatever binds', () => {
  const capped = project(spec({}, { rowsPerSecond: 1_000 }), 8, scope(1_000_000), written, measured);
  expect(capped.durationSeconds).toBe(1_000);
  expect(capped.bindingLimit).toBe('the rows/s cap (1000 rows/s)');
  // 22:00–06:00 is open 8 hours of 24, across midnight
  const windowed = project(
    spec({}, { rowsPerSecond: 1_000, window: { start: '22:00', end: '06:00', timeZone: 'UTC' } }),
    8,
    scope(1_000_000),
    written,
    measured,
  );
  expect(windowed.durationSeconds).toBeCloseTo(3_000);
  expect(windowed.bindingLimit).toBe('the rows/s cap (1000 rows/s) and the window (8 of 24 hours)');
  const fast = project(spec({}, { rowsPerSecond: 1_000_000 }), 8, scope(1_000_000), written, measured);
  expect(fast.bindingLimit).toBe("the database: 2 partitions' work at a time (measured)");
});

test('without measured writes the duration is a lower bound and says so; images are counted, not sized', () => {
  const p = project(spec(), 8, scope(1_000_000), readOnly, measured);
  expect(p.lowerBound).toBe(true);
  expect(p.writeSeconds).toBeUndefined();
  expect(p.walBytes).toBeUndefined();
  expect(p.images).toEqual({ rows: 700_000, keep: '14 days' });
  expect(p.bindingLimit).toBe("reading and transforming, 2 partitions' work at a time (measured); writes not measured");
});

test('undo: off keeps no images, and a final check that is off costs nothing', () => {
  const p = project(spec({ undo: 'off', validate: { finalCheck: 'off' } }), 8, scope(1_000_000), written, measured);
  expect(p.images).toBeUndefined();
  expect(p.fixedSeconds).toBeCloseTo(2 * 0.1 + 0.2 + 0.3);
  const all = project(spec({ validate: { finalCheck: 'all' } }), 8, scope(1_000_000), written, measured);
  expect(all.fixedSeconds - p.fixedSeconds).toBeCloseTo((1_000_000 * 0.1 * 1e-3) / 2 + (8 * 5) / 1000 / 4);
});

test('the projection says what it takes for granted: the slots, the workers, the server it was measured on', () => {
  const { assumes } = project(spec({}, { concurrency: 3 }), 8, scope(1_000_000), written, { ...measured, parallel: 1 });
  expect(assumes[0]).toBe('3 partitions in flight (limits.concurrency), on workers with at least 3 activity slots between them (BACKFILL_MAX_ACTIVITIES)');
  expect(assumes[1]).toBe("the database as busy as during the sample, and able to run one partition's work at a time");
  expect(assumes[2]).toContain('no recent undisturbed run of 12 partitions or more in this database');
  expect(assumes[2]).toContain('a server on PostgreSQL persistence takes about twice that');
  expect(assumes[3]).toBe('the 3000 sampled rows typical of the 1000000 in scope');
});

test("a pace measured on this deployment replaces the reference in Temporal's part, and the plan says where it comes from", () => {
  const newest = new Date('2026-12-01T10:00:00Z');
  const slow = {
    slotMs: 2 * ORCHESTRATION_SLOT_MS,
    msPerPartition: 2 * ORCHESTRATION_MS_PER_PARTITION,
    grouped: false,
    basis: { kind: 'measured' as const, factor: 2, runs: 3, newest },
  };
  const tiny: SampledWork = { rows: 30, computeMs: 3, inserts: 30, updates: 0, preview: [] };
  const reference = project(spec({}, { concurrency: 2 }), 200, scope(20_000), tiny, { ...measured, parallel: 1 });
  const measuredHere = project(spec({}, { concurrency: 2 }), 200, scope(20_000), tiny, { ...measured, parallel: 1, pace: slow });
  expect(measuredHere.orchestrationSeconds).toBeCloseTo(2 * reference.orchestrationSeconds);
  expect(measuredHere.pace).toBe(slow);
  expect(measuredHere.bindingLimit).toContain(`each holding its slot about ${2 * ORCHESTRATION_SLOT_MS} ms`);
  expect(measuredHere.assumes[2]).toContain('2.00 × the reference, as measured from the last 3 undisturbed runs in this database');
  expect(measuredHere.assumes[2]).toContain('2026-12-01T10:00:00.000Z');
});
