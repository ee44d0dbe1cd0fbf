import * as run from '../../src/workflows/run-state';
import * as control from '../../src/workflows/control-state';
import type { RunState } from '../../src/workflows/run-state';

const limits = { chunkSize: 1000, concurrency: 2 };
const started = run.opened(run.initialRunState(limits, '2026-11-30T12:00:00.000Z'), { partitionsTotal: 4, firstPage: [] }, false);
const alice = { actor: 'alice', reason: 'replica lag' };

describe('operator actions on the run state', () => {
  const paused = control.pause(started, alice, 'k1');
  const cancelling = control.requestCancel(started, alice, 'k2');
  const cases: [string, RunState, (s: RunState) => RunState, Partial<RunState> & { events: number }][] = [
    [
      'pause: paused, held by the actor, one event to sync',
      started,
      (s) => control.pause(s, alice, 'k'),
      { paused: true, heldBy: alice, controlVersion: 1, events: 1 },
    ],
    ['pause while paused changes nothing', paused, (s) => control.pause(s, alice, 'k'), { paused: true, controlVersion: 1, events: 1 }],
    ['pause while cancelling changes nothing', cancelling, (s) => control.pause(s, alice, 'k'), { paused: false, controlVersion: 1, events: 1 }],
    [
      'an engine pause decided on the current version applies',
      started,
      (s) => control.pause(s, { actor: 'backfill', reason: 'disk full', basedOnVersion: 0 }, 'k'),
      { paused: true, controlVersion: 1, events: 1 },
    ],
    [
      'an engine pause decided before the latest resume is stale: ignored',
      control.resume(paused, { actor: 'bob' }, 'k3'),
      (s) => control.pause(s, { actor: 'backfill', reason: 'disk full', basedOnVersion: 0 }, 'k'),
      { paused: false, controlVersion: 2, events: 2 },
    ],
    [
      'resume a paused run: no longer held',
      paused,
      (s) => control.resume(s, { actor: 'bob' }, 'k'),
      { paused: false, heldBy: undefined, controlVersion: 2, events: 2 },
    ],
    ['resume a running run changes nothing', started, (s) => control.resume(s, alice, 'k'), { paused: false, controlVersion: 0, events: 0 }],
    [
      'cancel: cancelling, held by the actor',
      started,
      (s) => control.requestCancel(s, alice, 'k'),
      { cancelRequested: true, heldBy: alice, cancelledByTemporal: false, controlVersion: 1, events: 1 },
    ],
    [
      'a second cancel changes nothing',
      cancelling,
      (s) => control.requestCancel(s, { actor: 'temporal' }, 'k', true),
      { cancelRequested: true, cancelledByTemporal: false, controlVersion: 1, events: 1 },
    ],
    [
      'a Temporal cancellation becomes an orderly cancel, remembered as such',
      started,
      (s) => control.requestCancel(s, { actor: 'temporal' }, 'k', true),
      { cancelRequested: true, cancelledByTemporal: true, events: 1 },
    ],
    [
      "backfill cancel's update awaits Temporal's cancellation",
      started,
      (s) => control.requestCancel(s, { ...alice, thenTemporalCancel: true }, 'k'),
      { cancelRequested: true, awaitingTemporalCancel: true, cancelledByTemporal: false, controlVersion: 1, events: 1 },
    ],
    [
      "Temporal's cancellation after backfill cancel's update ends the execution Canceled, no second event",
      control.requestCancel(started, { ...alice, thenTemporalCancel: true }, 'k2'),
      (s) => control.requestCancel(s, { actor: 'temporal' }, 'k', true),
      { cancelRequested: true, cancelledByTemporal: true, heldBy: alice, controlVersion: 1, events: 1 },
    ],
    [
      'cancelling a paused run needs no resume',
      paused,
      (s) => control.requestCancel(s, alice, 'k'),
      { paused: true, cancelRequested: true, controlVersion: 2, events: 2 },
    ],
    [
      'new limits apply at once and are recorded from/to',
      started,
      (s) => control.changeLimits(s, { concurrency: 5, actor: 'dana' }, 'k'),
      { limits: { chunkSize: 1000, concurrency: 5 }, controlVersion: 1, events: 1 },
    ],
  ];
  test.each(cases)('%s', (_title, from, act, expected) => {
    const { events, ...fields } = expected;
    const after = act(from);
    expect(after).toMatchObject(fields);
    expect(after.pendingEvents).toHaveLength(events);
    expect(control.isDirty(after)).toBe(after.controlVersion !== 0);
  });

  test('events carry kind, actor, reason and a key unique per decision', () => {
    const s = control.changeLimits(control.pause(started, alice, 'a'), { chunkSize: 50, actor: 'dana', reason: 'smaller' }, 'b');
    expect(s.pendingEvents).toEqual([
      { key: 'paused-a', kind: 'paused', actor: 'alice', reason: 'replica lag' },
      { key: 'limits-changed-b', kind: 'limits-changed', actor: 'dana', reason: 'smaller', detail: { from: limits, to: { chunkSize: 50, concurrency: 2 } } },
    ]);
  });

  test('a sync clears exactly the events it wrote; a later decision stays pending and dirty', () => {
    const s1 = control.pause(started, alice, 'a');
    const sent = s1.pendingEvents.slice();
    const s2 = control.resume(s1, alice, 'b'); // arrives while the sync activity runs
    const s3 = control.synced(s2, s1.controlVersion, sent, 'paused');
    expect(s3.pendingEvents.map((e) => e.key)).toEqual(['resumed-b']);
    expect(s3.syncedVersion).toBe(1);
    expect(control.isDirty(s3)).toBe(true);
    expect(s3.status).toBe('paused');
  });

  test.each([
    ['a valid change on a running run', started, { concurrency: 3, actor: 'x' }, undefined],
    ['a change out of bounds', started, { concurrency: 0, actor: 'x' }, 'concurrency must be an integer from 1 to 500 (got 0)'],
    [
      'any change while cancelling',
      control.requestCancel(started, alice, 'k'),
      { concurrency: 3, actor: 'x' },
      'run r1 is cancelling; its limits can no longer change',
    ],
    [
      'any change once finished',
      { ...started, status: 'succeeded' as const },
      { concurrency: 3, actor: 'x' },
      'run r1 is succeeded; its limits can no longer change',
    ],
  ])('setLimits validator: %s', (_title, s, change, refusal) => {
    expect(control.limitsChangeRefusal(s, 'r1', change)).toBe(refusal);
  });

  test('setLimits validator: any change once the run is finishing (no chunk left to use it, nothing to record it)', () => {
    expect(control.limitsChangeRefusal(started, 'r1', { concurrency: 3, actor: 'x' }, true)).toBe(
      'run r1 is finishing (its last partitions are done and its outcome is being recorded); its limits can no longer change',
    );
  });

  const canaryHeld: RunState = { ...started, canary: { partitions: ['p1'], phase: 'held', held: 'the canary failed: 3 rows differ', launched: 1 } };
  test.each<[string, RunState, control.OperatorControl, boolean, string | undefined]>([
    ['pause a running run', started, 'pause', false, undefined],
    ['pause a paused run', paused, 'pause', false, 'run r1 is already paused by alice (replica lag); resume it with: backfill resume r1'],
    ['resume a paused run', paused, 'resume', false, undefined],
    ['resume a running run', started, 'resume', false, 'run r1 is not paused; there is nothing to resume'],
    [
      'resume a run held by its canary',
      canaryHeld,
      'resume',
      false,
      'run r1 is held by its canary, not paused: the canary failed: 3 rows differ; let it go on with: backfill approve r1 --reason "…", or cancel it',
    ],
    ['cancel a run held by its canary', canaryHeld, 'cancel', false, undefined],
    ['cancel a paused run', paused, 'cancel', false, undefined],
    ['cancel a cancelling run', cancelling, 'cancel', false, 'run r1 is already being cancelled'],
    ['pause a cancelling run', cancelling, 'pause', false, 'run r1 is being cancelled; it cannot pause'],
    ['pause a finished run', { ...started, status: 'succeeded' as const }, 'pause', false, 'run r1 already finished (succeeded); there is nothing to pause'],
    [
      'cancel a finishing run',
      started,
      'cancel',
      true,
      'run r1 is finishing (its last partitions are done and its outcome is being recorded); there is nothing to cancel',
    ],
  ])('pause, resume and cancel validators: %s', (_title, s, action, finishing, refusal) => {
    expect(control.controlRefusal(s, 'r1', action, finishing)).toBe(refusal);
  });
});
