import {
  afterBudget,
  afterChunk,
  afterLockTimeout,
  afterStatementTimeout,
  decide,
  FULL_PACE,
  initialGovernorState,
  timeoutFloor,
  type Decision,
  type GovernorInput,
  type GovernorState,
} from '../../src/governor';
import type { GuardReading } from '../../src/domain/guards';
import type { Limits } from '../../src/domain/types';
import { flushesEveryChunk } from '../../src/domain/limits';

const NOON_UTC = Date.parse('2026-11-30T12:00:00Z');
const base: Limits = { chunkSize: 1000, concurrency: 4 };
const guards = { probeMs: { sql: 'SELECT 1', soft: 50, hard: 200 }, holdTimeoutSeconds: 60 };
const soft: GuardReading = { guard: 'probeMs', value: 80, level: 'soft', threshold: 50 };
const hard: GuardReading = { guard: 'probeMs', value: 312.4, level: 'hard', threshold: 200 };

function input(over: Partial<GovernorInput['control']> & { reading?: GuardReading | null; now?: number } = {}): GovernorInput {
  const { reading, now, ...control } = over;
  return {
    control: { paused: false, cancelRequested: false, limits: base, ...control },
    now: now ?? NOON_UTC,
    pollMs: 1000,
    ...(reading !== undefined ? { reading } : {}),
  };
}

describe('the partition governor decides what happens before each chunk', () => {
  const fresh = initialGovernorState();
  const cases: [string, GovernorState, GovernorInput, Decision][] = [
    ['cancel outranks everything: stop at this boundary', fresh, input({ cancelRequested: true, paused: true }), { kind: 'stop' }],
    [
      'a paused run waits, polling its control row',
      fresh,
      input({ paused: true }),
      { kind: 'wait', state: 'paused', cause: null, reason: 'run paused by an operator', ms: 1000 },
    ],
    [
      'outside the allowed hours it waits for the window, re-reading control every poll',
      fresh,
      input({ limits: { ...base, window: { start: '22:00', end: '06:00', timeZone: 'UTC' } } }),
      { kind: 'wait', state: 'outside-window', cause: 'window', reason: 'outside the allowed hours 22:00–06:00 UTC', ms: 1000 },
    ],
    [
      'inside the allowed hours it writes',
      fresh,
      input({ limits: { ...base, window: { start: '08:00', end: '18:00', timeZone: 'UTC' } } }),
      { kind: 'write', chunkSize: 1000, oneWriter: false, record: { governedBy: 'chunkSize', waitMs: 0 } },
    ],
    [
      'no guards: a chunk of the configured size',
      fresh,
      input(),
      { kind: 'write', chunkSize: 1000, oneWriter: false, record: { governedBy: 'chunkSize', waitMs: 0 } },
    ],
    [
      'an adaptive size, once learnt, is used and named',
      { ...fresh, adaptiveSize: 1500 },
      input(),
      { kind: 'write', chunkSize: 1500, oneWriter: false, record: { governedBy: 'targetChunkSeconds', waitMs: 0 } },
    ],
    ['with guards and no reading yet, it asks for one', fresh, input({ limits: { ...base, guards } }), { kind: 'measure' }],
    [
      'all guards clear: full speed',
      fresh,
      input({ limits: { ...base, guards }, reading: null }),
      { kind: 'write', chunkSize: 1000, oneWriter: false, record: { governedBy: 'chunkSize', waitMs: 0 } },
    ],
    [
      'a hard reading holds the partition',
      fresh,
      input({ limits: { ...base, guards }, reading: hard }),
      { kind: 'wait', state: 'held', cause: 'guard:probeMs', reason: 'held by probeMs 312.40 > hard 200', ms: 1000 },
    ],
    [
      'held past holdTimeoutSeconds, it asks the run to pause',
      { ...fresh, heldSince: NOON_UTC - 61_000 },
      input({ limits: { ...base, guards }, reading: hard }),
      { kind: 'pause-run', actor: 'guard:probeMs', reason: 'held 61s by probeMs 312.40 > hard 200' },
    ],
    [
      'the first soft reading: one writer at a time, no pause between chunks',
      { ...fresh, lastChunkMs: 400 },
      input({ limits: { ...base, guards }, reading: soft }),
      {
        kind: 'write',
        chunkSize: 1000,
        oneWriter: true,
        before: { kind: 'wait', state: 'slowed', cause: 'guard', reason: 'slowed by probeMs 80 > soft 50 (one writer at a time)', ms: 0 },
        record: { governedBy: 'guard:probeMs', guardValue: 80, waitMs: 0 },
      },
    ],
    [
      'a second soft reading halves the time spent writing: wait as long as the last chunk took',
      { ...fresh, pace: 1, lastChunkMs: 400 },
      input({ limits: { ...base, guards }, reading: soft }),
      {
        kind: 'write',
        chunkSize: 1000,
        oneWriter: true,
        before: {
          kind: 'wait',
          state: 'slowed',
          cause: 'guard',
          reason: 'slowed by probeMs 80 > soft 50 (one writer at a time, writing 50 % of the time)',
          ms: 400,
        },
        record: { governedBy: 'guard:probeMs', guardValue: 80, waitMs: 400 },
      },
    ],
    [
      'clear readings after a slow-down ease back, still one writer until full pace',
      { ...fresh, pace: 0.5, lastChunkMs: 300 },
      input({ limits: { ...base, guards }, reading: null }),
      {
        kind: 'write',
        chunkSize: 1000,
        oneWriter: true,
        before: {
          kind: 'wait',
          state: 'slowed',
          cause: 'guard',
          reason: 'slowed after a soft guard, speeding up again (one writer at a time, writing 60 % of the time)',
          ms: 200,
        },
        record: { governedBy: 'guard:easing', waitMs: 200 },
      },
    ],
  ];
  test.each(cases)('%s', (_title, state, facts, expected) => {
    expect(decide(state, facts).decision).toEqual(expected);
  });

  const transitions: [string, GovernorState, GovernorInput, Partial<GovernorState>][] = [
    ['a hard reading starts the held-since clock', initialGovernorState(), input({ limits: { ...base, guards }, reading: hard }), { heldSince: NOON_UTC }],
    [
      'the clock keeps its start while the hold lasts',
      { ...initialGovernorState(), heldSince: NOON_UTC - 5000 },
      input({ limits: { ...base, guards }, reading: hard }),
      { heldSince: NOON_UTC - 5000 },
    ],
    [
      'a reading below hard resets the clock',
      { ...initialGovernorState(), heldSince: NOON_UTC - 5000 },
      input({ limits: { ...base, guards }, reading: null }),
      { heldSince: undefined },
    ],
    ['a soft reading lowers the pace to one writer', initialGovernorState(), input({ limits: { ...base, guards }, reading: soft }), { pace: 1 }],
    ['guards removed live restore full pace at once', { ...initialGovernorState(), pace: 0.25 }, input(), { pace: FULL_PACE }],
    ['pausing leaves the pace as it was', { ...initialGovernorState(), pace: 0.25 }, input({ paused: true }), { pace: 0.25 }],
  ];
  test.each(transitions)('%s', (_title, state, facts, expected) => {
    expect(decide(state, facts).state).toMatchObject(expected);
  });
});

describe('after the governor decided to write', () => {
  const write = { kind: 'write' as const, chunkSize: 1000, oneWriter: false, record: { governedBy: 'chunkSize', waitMs: 0 } };

  test.each([
    ['no debt in the rows/s budget: unchanged, no wait', write, 0, null, { write }],
    [
      'debt: wait it out, recorded as governed by rowsPerSecond',
      write,
      250,
      null,
      {
        write: { ...write, record: { governedBy: 'rowsPerSecond', waitMs: 250 } },
        wait: { kind: 'wait', state: 'throttled', cause: null, reason: null, ms: 250 },
      },
    ],
    [
      'debt while a guard slows it: the guard stays the named cause, the waits add up, the ledger keeps the slow-down reason',
      { ...write, oneWriter: true, record: { governedBy: 'guard:probeMs', guardValue: 80, waitMs: 400 } },
      100,
      'slowed by probeMs',
      {
        write: { ...write, oneWriter: true, record: { governedBy: 'guard:probeMs', guardValue: 80, waitMs: 500 } },
        wait: { kind: 'wait', state: 'throttled', cause: null, reason: 'slowed by probeMs', ms: 100 },
      },
    ],
  ] as const)('%s', (_title, decision, debt, reason, expected) => {
    expect(afterBudget(decision, debt, reason)).toEqual(expected);
  });

  test.each([
    ['a fast chunk grows the next by a tenth of the configured size', { targetChunkSeconds: 1 }, 1000, 200, 1100],
    ['a slow chunk halves the next', { targetChunkSeconds: 1 }, 1000, 1500, 500],
    ['within 80-100 % of the target the size holds', { targetChunkSeconds: 1 }, 1000, 900, 1000],
    ['never below minChunkSize', { targetChunkSeconds: 1, minChunkSize: 800 }, 1000, 5000, 800],
    ['never above maxChunkSize', { targetChunkSeconds: 1, maxChunkSize: 1050 }, 1000, 10, 1050],
    ['without targetChunkSeconds the configured size is used again', {}, 700, 10, undefined],
  ] as const)('%s', (_title, extra, size, ms, expected) => {
    const next = afterChunk(initialGovernorState(), { chunkSize: size, ms, limits: { ...base, ...extra } });
    expect(next.adaptiveSize).toBe(expected);
    expect(next.lastChunkMs).toBe(ms);
  });

  test('a lock timeout holds the partition for one poll, naming the lock', () => {
    expect(afterLockTimeout('canceling statement due to lock timeout (SQLSTATE 55P03)', 1000)).toEqual({
      kind: 'wait',
      state: 'held',
      cause: 'lock',
      reason: 'waiting for a lock: canceling statement due to lock timeout (SQLSTATE 55P03)',
      ms: 1000,
    });
  });
});

describe('after a statement timeout', () => {
  test('chunks halve, stay capped through later chunks, and stop at a floor of chunkSize/16 (or minChunkSize)', () => {
    let state = initialGovernorState();
    const sizes: number[] = [];
    for (let i = 0; i < 6; i++) {
      const step = decide(state, input());
      if (step.decision.kind !== 'write') throw new Error('expected a write');
      sizes.push(step.decision.chunkSize);
      if (i > 0) expect(step.decision.record.governedBy).toBe('statementTimeoutSeconds');
      state = afterStatementTimeout(step.state, { chunkSize: step.decision.chunkSize, limits: base });
    }
    expect(sizes).toEqual([1000, 500, 250, 125, 62, 62]);
    expect(timeoutFloor(base)).toBe(62);
    expect(timeoutFloor({ ...base, minChunkSize: 300 })).toBe(300);
    // a committed chunk keeps the cap: the size that fits is the one to keep using
    const after = afterChunk(state, { chunkSize: 62, ms: 400, limits: base });
    expect(decide(after, input()).decision).toMatchObject({ kind: 'write', chunkSize: 62 });
  });
});

describe('flushesEveryChunk', () => {
  test('as the limits say; unset, while a commitMs guard is set', () => {
    expect(flushesEveryChunk({})).toBe(false);
    expect(flushesEveryChunk({ flushEveryChunk: true })).toBe(true);
    expect(flushesEveryChunk({ guards: { commitMs: { soft: 2 } } })).toBe(true);
    expect(flushesEveryChunk({ flushEveryChunk: false, guards: { commitMs: { soft: 2 } } })).toBe(false);
    // a guard on something else times no commit
    expect(flushesEveryChunk({ guards: { probeMs: { soft: 5, sql: 'SELECT 1' } } })).toBe(false);
  });
});
