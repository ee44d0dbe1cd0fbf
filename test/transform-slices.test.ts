/**
 * A TypeScript transform gets a chunk's rows a slice at a time, as they arrive: every row once, in
 * the order read, in slices of the size asked (one call with no rows for an empty read), one call
 * at a time even when it is async, and its results in order. A transform, or what takes its
 * output, that throws mid-read, and a statement that fails mid-read, reject with their own error
 * and leave the session usable — on the real server.
 */
import type pg from 'pg';
import { transformSlices, type Transform } from '../src/transforms/slices';
import { createTestDatabase, type TestDatabase } from './helpers/db';

let db: TestDatabase;
let client: pg.PoolClient;

beforeAll(async () => {
  db = await createTestDatabase('slices');
  client = await db.pool.connect();
});

afterAll(async () => {
  client?.release();
  await db?.drop();
});

/** n rows of (n, label), in key order; `failAt` makes the row of that n divide by zero. */
const rows = (n: number, failAt?: number) => ({
  text: `SELECT g AS n, 'r' || g AS label, ${failAt === undefined ? '1' : `1 / (g - ${failAt})`} AS one FROM generate_series(1, $1::int) g ORDER BY g`,
  values: [n],
});

async function slicesOf(n: number, sliceRows: number, transform: Transform = (r) => r) {
  const calls: number[][] = [];
  const taken: unknown[] = [];
  const read = await transformSlices(
    client,
    rows(n),
    sliceRows,
    (r) => {
      calls.push(r.map((row) => row.n as number));
      return transform(r);
    },
    (out) => taken.push(...(out as unknown[])),
  );
  return { read, calls, taken };
}

const stillUsable = async () => expect((await client.query('SELECT 41 + 1 AS x')).rows[0].x).toBe(42);

test('every row once, in the order read, in slices of the size asked; one call with none for an empty read', async () => {
  const { read, calls, taken } = await slicesOf(10_000, 4096);
  expect(read).toBe(10_000);
  expect(calls.map((c) => c.length)).toEqual([4096, 4096, 1808]);
  expect(calls.flat()).toEqual(Array.from({ length: 10_000 }, (_, i) => i + 1));
  expect(taken).toHaveLength(10_000);
  expect(taken[9999]).toEqual({ n: 10_000, label: 'r10000', one: 1 });

  const exact = await slicesOf(8192, 4096);
  expect(exact.calls.map((c) => c.length)).toEqual([4096, 4096]);

  const whole = await slicesOf(10_000, Infinity);
  expect(whole.calls.map((c) => c.length)).toEqual([10_000]);

  const empty = await slicesOf(0, 4096);
  expect(empty).toEqual({ read: 0, calls: [[]], taken: [] });
});

test('an async transform is called one slice at a time, and its results are taken in order', async () => {
  let running = 0;
  let most = 0;
  const { calls, taken } = await slicesOf(5000, 1000, async (r) => {
    running++;
    most = Math.max(most, running);
    // later slices resolve sooner if they were let run at once
    await new Promise((resolve) => setTimeout(resolve, 30 - (5 * Number(r[0].n)) / 1000));
    running--;
    return r.map((row) => row.n);
  });
  expect(most).toBe(1);
  expect(calls).toHaveLength(5);
  expect(taken).toEqual(Array.from({ length: 5000 }, (_, i) => i + 1));
});

test('a transform that throws mid-read: its error, no call after it, and the session usable', async () => {
  const seen: number[] = [];
  const failure = transformSlices(
    client,
    rows(10_000),
    1000,
    (r) => {
      seen.push(r[0].n as number);
      if (r[0].n === 3001) throw new RangeError('slice four is bad');
      return r;
    },
    () => undefined,
  );
  await expect(failure).rejects.toThrow('slice four is bad');
  expect(seen).toEqual([1, 1001, 2001, 3001]);
  await stillUsable();

  const asyncFailure = transformSlices(
    client,
    rows(10_000),
    1000,
    async (r) => {
      if (r[0].n === 2001) throw new RangeError('async slice three is bad');
      return r;
    },
    () => undefined,
  );
  await expect(asyncFailure).rejects.toThrow('async slice three is bad');
  await stillUsable();
});

test('what takes the output may refuse it: that error, and the session usable', async () => {
  const failure = transformSlices(
    client,
    rows(3000),
    1000,
    (r) => r,
    () => {
      throw new TypeError('not an array of rows');
    },
  );
  await expect(failure).rejects.toThrow('not an array of rows');
  await stillUsable();
});

test("a statement that fails mid-read rejects with PostgreSQL's error after the slices before it", async () => {
  const seen: number[] = [];
  const failure = transformSlices(
    client,
    rows(10_000, 6500),
    1000,
    (r) => {
      seen.push(r.length);
      return r;
    },
    () => undefined,
  );
  await expect(failure).rejects.toMatchObject({ code: '22012' });
  // rows arrive in order until the failing one; a slice not yet full is never handed over
  expect(seen.every((n) => n === 1000)).toBe(true);
  expect(seen.length).toBeLessThanOrEqual(6);
  await stillUsable();
});
