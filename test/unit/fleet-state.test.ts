/** The fleet's decisions without a server: waves, concurrency, onError, approvals, pause and cancel, its status. */
import * as fleet from '../../src/workflows/fleet/fleet-state';
import { memberRunInput, type FleetWorkflowInput } from '../../src/workflows/fleet/input';

const at = '2026-12-05T00:00:00.000Z';
const who = { actor: 'alice', reason: 'because' };

function input(waves: number[], block: Partial<Pick<FleetWorkflowInput['record'], 'concurrency' | 'onError' | 'approve'>> = {}): FleetWorkflowInput {
  const members = waves.map((wave, i) => ({
    variable: `DB_${i}`,
    wave,
    runId: `r-m${i + 1}`,
    databaseIdentity: `1:${i}`,
    databaseQueue: `q.DB_${i}`,
    specHash: `h${i}`,
    limits: { concurrency: 2, chunkSize: 100 + i },
  }));
  return {
    record: {
      fleetId: 'fleet-x',
      name: 'n',
      reason: 'r',
      workflowId: 'backfill/n/fleet-x',
      fleetHash: 'fh',
      startedBy: 'test',
      waves: Math.max(...waves),
      concurrency: 1,
      onError: 'stop',
      approve: false,
      ...block,
      members: members.map((m) => ({ variable: m.variable, wave: m.wave })),
      excluded: [],
    },
    spec: { name: 'n', reason: 'r', database: 'DB_0', limits: { concurrency: 2, chunkSize: 100 } } as FleetWorkflowInput['spec'],
    transform: { kind: 'sql', name: 't', version: 1, codeHash: 'c' } as FleetWorkflowInput['transform'],
    members,
  };
}

const start = (i: FleetWorkflowInput) => fleet.nextWave(fleet.initialFleet(i, (id) => `wf/${id}`))!;
const finish = (s: fleet.FleetState, v: string, status: 'succeeded' | 'failed' | 'cancelled' = 'succeeded') => fleet.memberFinished(s, v, { status }, at);

test('waves in order, at most concurrency at once; the next wave only once this one has finished', () => {
  let s = start(input([1, 1, 1, 2], { concurrency: 2 }));
  expect(s.wave).toBe(1);
  s = fleet.memberStarted(s, fleet.nextToStart(s)!.variable, at);
  s = fleet.memberStarted(s, fleet.nextToStart(s)!.variable, at);
  // two running: the third waits for a slot
  expect(fleet.nextToStart(s)).toBeUndefined();
  s = finish(s, 'DB_0');
  expect(fleet.nextToStart(s)?.variable).toBe('DB_2');
  s = fleet.memberStarted(s, 'DB_2', at);
  // DB_3 is wave 2: not while wave 1 runs
  expect(fleet.nextToStart(s)).toBeUndefined();
  expect(fleet.waveDone(s)).toBe(false);
  s = finish(finish(s, 'DB_1'), 'DB_2');
  expect(fleet.waveDone(s)).toBe(true);
  s = fleet.nextWave(s)!;
  expect(fleet.nextToStart(s)?.variable).toBe('DB_3');
  s = finish(fleet.memberStarted(s, 'DB_3', at), 'DB_3');
  expect(fleet.nextWave(s)).toBeUndefined();
  expect(fleet.fleetStatus(s, true)).toBe('succeeded');
});

test('onError stop: after a failure no member starts, those running finish, the rest are not started; continue: the rest carry on, the fleet fails', () => {
  let s = start(input([1, 1, 1], { concurrency: 2 }));
  s = fleet.memberStarted(fleet.memberStarted(s, 'DB_0', at), 'DB_1', at);
  s = finish(s, 'DB_0', 'failed');
  expect(s.stopping).toBe('DB_0 failed; onError: stop starts no other member');
  expect(fleet.nextToStart(s)).toBeUndefined();
  expect(fleet.startsNoMore(s)).toBe(true);
  s = finish(s, 'DB_1');
  s = fleet.closeUnstarted(s);
  expect(s.members.map((m) => m.status)).toEqual(['failed', 'succeeded', 'not-started']);
  expect(fleet.fleetStatus(s, true)).toBe('failed');

  let c = start(input([1, 1, 2], { onError: 'continue' }));
  c = finish(fleet.memberStarted(c, 'DB_0', at), 'DB_0', 'failed');
  expect(fleet.nextToStart(c)?.variable).toBe('DB_1');
  c = finish(fleet.memberStarted(c, 'DB_1', at), 'DB_1');
  c = fleet.nextWave(c)!;
  c = finish(fleet.memberStarted(c, 'DB_2', at), 'DB_2');
  expect(fleet.fleetStatus(c, true)).toBe('failed');
});

test('approve: waves after the first wait for a person; approving is refused when nothing waits', () => {
  let s = start(input([1, 2], { approve: true }));
  expect(s.awaitingApproval).toBeUndefined();
  expect(fleet.controlRefusal(s, 'fleet-x', 'approve', false)).toBe('fleet fleet-x is not waiting for an approval (wave 1 of 2)');
  s = finish(fleet.memberStarted(s, 'DB_0', at), 'DB_0');
  s = fleet.nextWave(s)!;
  expect(s.awaitingApproval).toBe(2);
  expect(fleet.fleetStatus(s, false)).toBe('awaiting-approval');
  expect(fleet.nextToStart(s)).toBeUndefined();
  expect(fleet.controlRefusal(s, 'fleet-x', 'approve', false)).toBeUndefined();
  s = fleet.approveWave(s, who, at);
  expect(s.approvals).toEqual({ 2: who });
  expect(fleet.nextToStart(s)?.variable).toBe('DB_1');
  expect(fleet.controlRefusal(start(input([1, 2])), 'fleet-x', 'approve', false)).toMatch(/its spec does not ask for one/);
});

test('pause holds every start until resume; cancel ends the waiting for approval and every start; refusals say why', () => {
  let s = start(input([1, 1]));
  s = fleet.pause(s, who, at);
  expect(fleet.nextToStart(s)).toBeUndefined();
  expect(fleet.fleetStatus(s, false)).toBe('paused');
  expect(fleet.controlRefusal(s, 'fleet-x', 'pause', false)).toBe('fleet fleet-x is already paused by alice; resume it with: backfill resume fleet-x');
  s = fleet.resume(s, who, at);
  expect(fleet.controlRefusal(s, 'fleet-x', 'resume', false)).toBe('fleet fleet-x is not paused');
  expect(fleet.nextToStart(s)?.variable).toBe('DB_0');
  s = fleet.requestCancel(fleet.memberStarted(s, 'DB_0', at), who, at);
  expect(fleet.nextToStart(s)).toBeUndefined();
  expect(fleet.fleetStatus(s, false)).toBe('cancelling');
  expect(fleet.controlRefusal(s, 'fleet-x', 'cancel', false)).toBe('fleet fleet-x is already being cancelled');
  s = fleet.closeUnstarted(finish(s, 'DB_0', 'cancelled'));
  expect(fleet.fleetStatus(s, true)).toBe('cancelled');
  expect(fleet.controlRefusal(s, 'fleet-x', 'pause', true)).toBe('fleet fleet-x already finished (cancelled); there is nothing to pause');
  expect(s.events.map((e) => e.kind)).toEqual(['paused', 'resumed', 'member-started', 'cancel-requested', 'member-finished']);
});

test("a member's run input: the shared spec with its own database and limits, pinned to its database and queue, carrying the fleet's record", () => {
  const i = input([1, 2]);
  const run = memberRunInput(i, i.members[1], 'alice');
  expect(run).toMatchObject({
    kind: 'run',
    runId: 'r-m2',
    spec: { database: 'DB_1', limits: { chunkSize: 101 } },
    specHash: 'h1',
    databaseIdentity: '1:1',
    databaseQueue: 'q.DB_1',
    fleet: { member: 'DB_1', wave: 2, waveApprovedBy: 'alice', record: { fleetId: 'fleet-x' } },
  });
});
