/**
 * A backend terminated while its connection is checked out of a pool (between two queries of
 * a chunk, during a transform, while holding a lock) must fail the next query, not end the
 * process: an unhandled 'error' event on a pg client kills Node, and with it every partition
 * the worker was running. Found by the fault matrix (pg_terminate_backend mid-run).
 */
import { createPool } from '../src/db/pool';
import { createTestDatabase, type TestDatabase } from './helpers/db';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('connloss');
});
afterAll(async () => {
  await db?.drop();
});

test('a checked-out connection whose backend is terminated fails its next query; the process lives on and the pool reconnects', async () => {
  const pool = createPool(db.url, { max: 2 });
  try {
    const client = await pool.connect();
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await expect(client.query('SELECT 1')).rejects.toThrow();
      client.release(true);
      expect(uncaught).toEqual([]);
      expect((await pool.query<{ n: number }>('SELECT 1 AS n')).rows[0].n).toBe(1);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  } finally {
    await pool.end();
  }
});
