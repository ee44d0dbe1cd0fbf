/**
 * The fingerprints of what a SQL transform reads, against PostgreSQL itself: relations in the
 * order written, each once, source and target left out, names that resolve to nothing left out,
 * a view by its definition, functions by every overload a name can mean; a changed row, column
 * or definition shows; and all of it in three round trips however many inputs there are (the
 * check runs before every partition).
 */
import type pg from 'pg';
import { fingerprintInputs, inputChanges } from '../src/preflight/input-fingerprints';
import { createTestDatabase, type TestDatabase } from './helpers/db';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('fingerprints');
  await db.pool.query(`
    CREATE SCHEMA app;
    CREATE TABLE app.src (id bigint PRIMARY KEY);
    CREATE TABLE app.dst (id bigint PRIMARY KEY);
    CREATE TABLE app.fx (currency text PRIMARY KEY, rate numeric);
    INSERT INTO app.fx VALUES ('EUR', 1.1), ('GBP', 1.3);
    CREATE TABLE app."Odd Name" (k int);
    INSERT INTO app."Odd Name" VALUES (1);
    CREATE VIEW app.fx_view AS SELECT currency FROM app.fx;
    CREATE FUNCTION app.to_usd(bigint, numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT $1 * $2';
    CREATE FUNCTION app.to_usd(numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT $1';`);
});

afterAll(async () => {
  await db?.drop();
});

const reads = {
  tables: ['app.fx_view', 'app.fx', 'app.src', 'app.missing', 'app.Odd Name', 'app.fx'],
  functions: ['app.to_usd', 'to_usd', 'app.nothing'],
};

/** A pool whose queries are counted. */
function counting(pool: pg.Pool): { db: pg.Pool; queries: () => number } {
  let n = 0;
  const db = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop === 'query') {
        return (...args: Parameters<pg.Pool['query']>) => {
          n++;
          return (target.query as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  return { db, queries: () => n };
}

test('each input once, source and target left out, in three round trips', async () => {
  const { db: counted, queries } = counting(db.pool);
  const fingerprints = await fingerprintInputs(counted, reads, ['app.src', 'app.dst']);
  expect(queries()).toBe(3);
  expect(fingerprints.map((f) => [f.name, f.kind, f.rows ?? f.uncovered])).toEqual([
    ['app."Odd Name"', 'table', 1],
    ['app.fx', 'table', 2],
    ['app.fx_view', 'view', 'a view: its definition is checked, not its rows'],
    ['app.to_usd(bigint,numeric)', 'function', undefined],
    ['app.to_usd(numeric)', 'function', undefined],
  ]);
  // app is not on the search path: the unqualified name means no function of it
  expect(fingerprints.filter((f) => f.kind === 'function')).toHaveLength(2);
});

test('a transform that reads only its chunk costs no query; one that names its source, one, and has no inputs', async () => {
  const none = counting(db.pool);
  expect(await fingerprintInputs(none.db, { tables: [], functions: [] }, ['app.src', 'app.dst'])).toEqual([]);
  expect(none.queries()).toBe(0);
  const source = counting(db.pool);
  expect(await fingerprintInputs(source.db, { tables: ['app.src', 'app.dst'], functions: [] }, ['app.src', 'app.dst'])).toEqual([]);
  expect(source.queries()).toBe(1);
});

test('a changed row, a new column and a new definition each show', async () => {
  const before = await fingerprintInputs(db.pool, reads, ['app.src', 'app.dst']);
  await db.pool.query(`
    UPDATE app.fx SET rate = 1.2 WHERE currency = 'EUR';
    ALTER TABLE app."Odd Name" ADD COLUMN extra int;
    CREATE OR REPLACE FUNCTION app.to_usd(numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT $1 * 1';`);
  const after = await fingerprintInputs(db.pool, reads, ['app.src', 'app.dst']);
  expect(inputChanges(before, after)).toEqual([
    'table app."Odd Name" has a new shape',
    'table app.fx has rows with other values',
    'function app.to_usd(numeric) has a new definition',
  ]);
});
