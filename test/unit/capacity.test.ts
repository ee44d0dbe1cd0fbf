import pino from 'pino';
import { ConditionReporter } from '../../src/activities/condition-reporter';
import { nextPace } from '../../src/governor';
import type { PartitionCondition } from '../../src/domain/types';

describe('soft guard response (AIMD on the pace)', () => {
  test('a soft reading makes partitions write one at a time, more halve the time spent writing, down to 1/8', () => {
    let pace = 2;
    const trace: number[] = [];
    for (const soft of [true, true, true, true, true, false, false, false]) trace.push((pace = nextPace(pace, soft)));
    expect(trace).toEqual([1, 0.5, 0.25, 0.125, 0.125, 0.225, 0.325, 0.425]);
  });

  test('clear readings give a tenth back; a soft one while recovering above 1 drops straight to one writer', () => {
    let pace = 0.125;
    for (let i = 0; i < 9; i += 1) pace = nextPace(pace, false);
    expect(pace).toBe(1.025);
    expect(nextPace(1.5, true)).toBe(1);
    for (let i = 0; i < 10; i += 1) pace = nextPace(pace, false);
    expect(pace).toBe(2);
  });
});

describe('ConditionReporter', () => {
  const log = pino({ level: 'silent' });

  function reporter(options: { stale?: boolean; fail?: boolean } = {}) {
    let now = 1_000_000;
    const sent: PartitionCondition[] = [];
    const r = new ConditionReporter(
      'p1',
      async (c) => {
        if (options.fail) throw new Error('workflow not found');
        sent.push(c);
      },
      log,
      { stale: options.stale ?? false, minIntervalMs: 2000, now: () => now },
    );
    return { r, sent, advance: (ms: number) => (now += ms) };
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  test('reports a change of state or cause once; a guard value moving is not a change', async () => {
    const { r, sent, advance } = reporter();
    r.set('writing', null, null);
    await settle();
    expect(sent).toEqual([]); // the run already assumes a fresh partition writes
    r.set('held', 'guard:probeMs', 'held by probeMs 312.40 > hard 200');
    await settle();
    r.set('held', 'guard:probeMs', 'held by probeMs 280.00 > hard 200');
    advance(5000);
    r.flush();
    await settle();
    expect(sent).toEqual([{ partitionId: 'p1', state: 'held', reason: 'held by probeMs 312.40 > hard 200', since: new Date(1_000_000).toISOString() }]);
    r.set('writing', null, null);
    await settle();
    expect(sent.map((c) => c.state)).toEqual(['held', 'writing']);
  });

  test('at most one report per interval; what stands when it has passed is sent, a flap in between is not', async () => {
    const { r, sent, advance } = reporter();
    r.set('slowed', 'guard', 'slowed by queue 50 > soft 10');
    await settle();
    r.set('held', 'guard:queue', 'held by queue 500 > hard 100');
    r.flush();
    await settle();
    expect(sent.map((c) => c.state)).toEqual(['slowed']);
    advance(2500);
    r.flush();
    await settle();
    expect(sent.map((c) => c.state)).toEqual(['slowed', 'held']);
    // held -> writing -> held within the interval: the run still shows the right thing, nothing is sent
    r.set('writing', null, null);
    r.set('held', 'guard:queue', 'held by queue 600 > hard 100');
    advance(2500);
    r.flush();
    await settle();
    expect(sent.map((c) => c.state)).toEqual(['slowed', 'held']);
  });

  test('a partition whose earlier attempt left a reason reports writing, to clear what the run shows', async () => {
    const { r, sent } = reporter({ stale: true });
    r.set('writing', null, null);
    await settle();
    expect(sent.map((c) => c.state)).toEqual(['writing']);
  });

  test('an undeliverable report is dropped without failing the partition, and retried on the next change', async () => {
    const { r, advance } = reporter({ fail: true });
    r.set('held', 'lock', 'waiting for a lock');
    await r.close();
    advance(2500);
    r.set('writing', null, null);
    await expect(r.close()).resolves.toBeUndefined();
  });
});
