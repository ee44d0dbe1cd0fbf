/** The moments a notifier tells, from what the ledger recorded: once each, per attempt, without row data. */
import { heldMoment, inTellingOrder, momentsOf, type RunMomentsLike } from '../../src/notify/moments';

const run = { name: 'orders-usd', runId: 'r1' };
const ledger = (over: Partial<RunMomentsLike> = {}): RunMomentsLike => ({
  status: 'running',
  attempt: 1,
  reverts: null,
  events: [],
  failed: [],
  held: [],
  ...over,
});
const event = (seq: number, kind: string, over: Partial<RunMomentsLike['events'][number]> = {}) => ({
  seq: String(seq),
  key: null,
  kind,
  actor: null,
  reason: null,
  detail: null,
  ...over,
});

test('started, a canary that pauses the run or waits for approval, a failed partition, the end; each once', () => {
  const m = ledger({
    events: [
      event(1, 'registered'),
      event(2, 'started', { actor: 'ana', reason: 'FX fix' }),
      event(3, 'canary-failed', { reason: 'the canary failed (2 problem(s))' }),
      event(4, 'canary-passed'),
      event(5, 'canary-passed', { reason: 'the canary passed (3 partition(s)); waiting for approval' }),
      event(6, 'paused', { actor: 'ana', reason: 'lunch' }),
      event(7, 'paused', { actor: 'guard:replicationLag', reason: 'held 600s by replicationLag 42 s' }),
    ],
    failed: [{ partitionId: 'id:000-100', error: 'violates check constraint "sane"', range: 'id in (10, 20]', attempt: 1 }],
  });
  const moments = momentsOf(run, m, new Set());
  expect(moments.map((x) => [x.key, x.kind])).toEqual([
    ['started:2', 'started'],
    ['paused:3', 'paused'],
    ['awaiting-approval:5', 'awaiting-approval'],
    ['paused:7', 'paused'],
    ['partition-failed:id:000-100:1', 'partition-failed'],
  ]);
  expect(moments[0].text).toBe('orders-usd/r1 started by ana: FX fix');
  expect(moments[3].text).toBe('orders-usd/r1 paused itself (guard:replicationLag): held 600s by replicationLag 42 s. Resume: backfill resume r1');
  expect(moments[4].text).toBe(
    'orders-usd/r1: partition id:000-100 failed (id in (10, 20]): violates check constraint "sane". See: backfill partitions r1 --status failed',
  );
  expect(momentsOf(run, m, new Set(moments.map((x) => x.key)))).toEqual([]);
});

test("the end of this attempt, not an earlier one's; a revert's success is told as reverted", () => {
  const finished = (attempt: number, status: string) =>
    event(10 + attempt, 'finished', { key: `finished-${attempt}`, detail: { status, total: 4, rowsWritten: 12345, byStatus: { succeeded: 3, failed: 1 } } });
  const second = ledger({ status: 'succeeded', attempt: 2, events: [finished(1, 'failed'), finished(2, 'succeeded')] });
  expect(momentsOf(run, second, new Set()).map((x) => [x.key, x.kind, x.text])).toEqual([
    ['finished:2', 'succeeded', 'orders-usd/r1 succeeded: 12,345 rows written; partitions: 3 succeeded, 1 failed of 4'],
  ]);
  const revert = ledger({ status: 'succeeded', reverts: 'r0', events: [finished(1, 'succeeded')] });
  expect(momentsOf(run, revert, new Set())[0]).toMatchObject({ kind: 'reverted', text: expect.stringMatching(/^orders-usd\/r1 reverted r0: /) });
});

test('held: how long and by what, keyed by when the hold began', () => {
  const m = heldMoment(
    run,
    [
      { partitionId: 'p1', reason: 'guard replicationLag: 42 s' },
      { partitionId: 'p2', reason: 'guard replicationLag: 42 s' },
    ],
    0,
    16 * 60_000,
  );
  expect(m).toMatchObject({
    key: 'held:0',
    kind: 'held',
    text: 'orders-usd/r1 has been held for 16 min: guard replicationLag: 42 s (2 partition(s)). See: backfill status r1',
  });
});

test('in telling order, a run that ends in the look its partitions failed in is told failed after them', () => {
  const m = ledger({
    status: 'failed',
    events: [
      event(1, 'started', { actor: 'ana' }),
      event(2, 'finished', { key: 'finished-1', detail: { status: 'failed', total: 2, rowsWritten: 10, byStatus: { succeeded: 1, failed: 1 } } }),
    ],
    failed: [{ partitionId: 'id:000-100', error: 'violates check constraint "sane"', range: null, attempt: 1 }],
  });
  const found = momentsOf(run, m, new Set());
  expect(found.map((x) => x.key)).toEqual(['started:1', 'finished:1', 'partition-failed:id:000-100:1']);
  expect(inTellingOrder(found).map((x) => x.key)).toEqual(['started:1', 'partition-failed:id:000-100:1', 'finished:1']);
});
