/**
 * Followers ride out what the workers ride out: `watch`, `start --wait` and the demo follow a
 * run through a database outage (here the connection cut and refused for a few seconds, as in
 * a restart or failover) and report the run's end; only an outage longer than their patience
 * ends them, with a message saying the run goes on.
 */
import { createPool } from '../src/db/pool';
import { followRun, waitForResult } from '../src/operations';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec } from './helpers/orders';
import { startTcpProxy } from './helpers/tcp-proxy';

const env = useTestEnvironment('outage', { rows: 20_000 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The follower's own pool, reaching the database through a proxy the test can cut. */
async function followerThroughProxy() {
  const url = new URL(env.db.url);
  const proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const pool = createPool(url.toString(), { max: 2, applicationName: 'backfill-follower' });
  return { proxy, pool, close: async () => (await pool.end(), await proxy.close().catch(() => undefined)) };
}

test('a follower rides out the database going away mid-run and reports the run succeeded', async () => {
  const { proxy, pool, close } = await followerThroughProxy();
  try {
    // ~8 s at 2,500 rows/s: long enough to lose the database in the middle
    const started = await env.start(ordersSpec(env.db.envVar, { name: 'outage-follow', limits: { chunkSize: 1000, concurrency: 2, rowsPerSecond: 2500 } }));
    const outages: (string | null)[] = [];
    const following = followRun(pool, started.runId, () => undefined, { intervalMs: 200, onOutage: (m) => outages.push(m) });
    await sleep(1500);
    await proxy.cut();
    await sleep(3000);
    await proxy.restore();
    expect(await following).toBe('succeeded');
    expect((await waitForResult(started.handle)).status).toBe('succeeded');
    expect(outages.some((m) => m !== null && /database unavailable/.test(m))).toBe(true);
    expect(outages[outages.length - 1]).toBeNull();
  } finally {
    await close();
  }
});

test('an outage longer than the follower waits ends it with a message saying the run goes on', async () => {
  const { proxy, pool, close } = await followerThroughProxy();
  try {
    const started = await env.start(ordersSpec(env.db.envVar, { name: 'outage-long', limits: { chunkSize: 1000, concurrency: 2, rowsPerSecond: 2500 } }));
    await proxy.cut();
    await expect(followRun(pool, started.runId, () => undefined, { intervalMs: 100, outageMs: 1000 })).rejects.toThrow(
      /the database has been unavailable for \d+ s .*; the run goes on without this follower: backfill watch /,
    );
    expect((await waitForResult(started.handle)).status).toBe('succeeded');
  } finally {
    await close();
  }
});
