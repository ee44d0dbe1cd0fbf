import type pg from 'pg';
import { serverProblems } from '../../src/preflight/inspect';

/** A session that answers the version question as PostgreSQL of `num` would, and refuses any other. */
function serverOf(num: string): Pick<pg.PoolClient, 'query'> {
  return {
    query: (async (sql: string) => {
      if (sql !== "SELECT current_setting('server_version_num') AS v") throw new Error(`unexpected ${sql}`);
      return { rows: [{ v: num }] };
    }) as unknown as pg.PoolClient['query'],
  };
}

test.each([
  ['140011', [{ path: 'database', message: 'points at PostgreSQL 14; backfill needs PostgreSQL 15 or newer (it writes with MERGE)' }]],
  ['150000', []],
  ['170004', []],
])('PostgreSQL %s: %j', async (num, problems) => {
  expect(await serverProblems(serverOf(num))).toEqual(problems);
});
