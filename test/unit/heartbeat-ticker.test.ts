import { MockActivityEnvironment } from '@temporalio/testing';
import { recordProgress, withHeartbeatTicker } from '../../src/activities/heartbeat-ticker';

/** An activity that records `steps` in turn, each after `gapMs`, while a ticker runs beside it. */
function stepper(steps: unknown[], gapMs: number) {
  return withHeartbeatTicker({
    async checkSomething(): Promise<string> {
      for (const step of steps) {
        await new Promise((resolve) => setTimeout(resolve, gapMs));
        recordProgress(step);
      }
      await new Promise((resolve) => setTimeout(resolve, gapMs));
      return 'done';
    },
  }).checkSomething;
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

/** Runs `activity` to its end on fake time. */
async function runFor<T>(env: MockActivityEnvironment, activity: () => Promise<T>, ms: number): Promise<T> {
  const result = env.run<[], T, () => Promise<T>>(activity);
  await jest.advanceTimersByTimeAsync(ms);
  return result;
}

function heartbeatsOf(env: MockActivityEnvironment): unknown[] {
  const seen: unknown[] = [];
  env.on('heartbeat', (d: unknown) => seen.push(d));
  return seen;
}

test('a long step between records still heartbeats, repeating the progress last recorded', async () => {
  const env = new MockActivityEnvironment();
  const seen = heartbeatsOf(env);
  // 12 s between records, ticks every 5 s
  await expect(runFor(env, stepper([{ ordinal: 3 }, { ordinal: 7 }], 12_000), 36_000)).resolves.toBe('done');
  // ticks at 5 and 10 s repeat what it resumed from (nothing); the record at 12 s; ticks at 15 and
  // 20 s repeat it; the record at 24 s; ticks at 25, 30 and 35 s repeat that one
  expect(seen).toEqual([undefined, undefined, { ordinal: 3 }, { ordinal: 3 }, { ordinal: 3 }, { ordinal: 7 }, { ordinal: 7 }, { ordinal: 7 }, { ordinal: 7 }]);
});

test('a retry that has not recorded yet repeats the progress it resumed from, not nothing', async () => {
  const env = new MockActivityEnvironment({ heartbeatDetails: { ordinal: 40 } });
  const seen = heartbeatsOf(env);
  await runFor(env, stepper([], 11_000), 11_000);
  expect(seen).toEqual([{ ordinal: 40 }, { ordinal: 40 }]);
});

test('a local attempt gets no ticker (it cannot heartbeat)', async () => {
  const env = new MockActivityEnvironment({ isLocal: true });
  const seen = heartbeatsOf(env);
  await runFor(env, stepper([], 6_000), 6_000);
  expect(seen).toEqual([]);
});
