/**
 * A TypeScript transform's rows reach the output table as COPY text where that means what the
 * JSON document meant: the same rows, the same NULLs, the same errors (by SQLSTATE). Each value
 * below goes both ways into a table of scalar columns on the real server, one row at a time
 * (so each error is its own), then thousands of random strings at once; where the encoder says
 * only JSON can carry a row, the engine uses JSON and nothing is compared. And a COPY whose
 * backend dies mid-stream fails at once, without an uncaught error that would end the worker.
 */
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { outputTakesCopy } from '../src/compiler/output-table';
import { createPool } from '../src/db/pool';
import { copyText } from '../src/transforms/copy-text';
import { createTestDatabase, type TestDatabase } from './helpers/db';

let db: TestDatabase;
let client: pg.PoolClient;

const COLUMNS: Record<string, string> = {
  n: 'integer',
  txt: 'text',
  short: 'varchar(4)',
  num: 'numeric',
  money2: 'numeric(6,2)',
  i4: 'integer',
  i8: 'bigint',
  f8: 'double precision',
  flag: 'boolean',
  at: 'timestamptz',
  at3: 'timestamp(3)',
  day: 'date',
  mood: 'app_mood',
  word: 'app_word',
  span: 'int4range',
  raw: 'bytea',
  ci: 'text COLLATE "C"',
};
const NAMES = Object.keys(COLUMNS);

beforeAll(async () => {
  db = await createTestDatabase('copytext');
  await db.pool.query(`
    CREATE TYPE app_mood AS ENUM ('calm', 'Loud');
    CREATE DOMAIN app_word AS text CHECK (VALUE ~ '^[a-z]+$');
    CREATE TABLE out_scalars (${NAMES.map((c) => `${c} ${COLUMNS[c]}`).join(', ')});
    CREATE TABLE out_json (n integer, doc jsonb);
    CREATE DOMAIN app_doc AS json;
    CREATE DOMAIN app_tags AS text[];
    CREATE TYPE app_pair AS (a integer, b text);
    CREATE TABLE out_domain_json (n integer, doc app_doc);
    CREATE TABLE out_domain_array (n integer, tags app_tags);
    CREATE TABLE out_composite (n integer, pair app_pair);
    CREATE TABLE out_dropped (n integer, gone text, txt text);
    ALTER TABLE out_dropped DROP COLUMN gone;`);
  client = await db.pool.connect();
});

afterAll(async () => {
  client?.release();
  await db?.drop();
});

type Outcome = { rows: string[] } | { error: string };

/** The rows as the table holds them afterwards (as JSON text, by n), or the error's SQLSTATE; nothing kept. */
async function fill(way: 'json' | 'copy', rows: unknown[], columns = NAMES): Promise<Outcome | 'json only'> {
  let body: Buffer | null = null;
  if (way === 'copy') {
    body = copyText(rows, columns);
    if (body === null) return 'json only';
  }
  await client.query('BEGIN');
  try {
    if (body) {
      const copy = client.query(copyFrom(`COPY out_scalars (${columns.join(', ')}) FROM STDIN`));
      copy.end(body);
      await finished(copy);
    } else {
      await client.query(
        `INSERT INTO out_scalars (${columns.join(', ')}) SELECT ${columns.join(', ')} FROM json_populate_recordset(NULL::out_scalars, $1::json)`,
        [JSON.stringify(rows)],
      );
    }
    const { rows: held } = await client.query<{ r: string }>('SELECT row_to_json(o)::text AS r FROM out_scalars o ORDER BY n');
    return { rows: held.map((h) => h.r) };
  } catch (err) {
    return { error: (err as { code?: string }).code ?? String(err) };
  } finally {
    await client.query('ROLLBACK');
  }
}

const FEB_29 = new Date(Date.UTC(2024, 1, 29, 23, 59, 59, 123));
/** Values every column is given, one row each: what a transform might return. */
const VALUES: unknown[] = [
  null,
  undefined,
  '',
  ' ',
  'calm',
  'Loud',
  'abc',
  'abcde',
  'a\tb',
  'line\nbreak',
  'cr\rlf\r\n',
  'back\\slash',
  '\\N',
  '\\.',
  '\\x0001ff',
  '\\x',
  'quote " and \' and {braces}',
  'é ☃ 😀 \u2028',
  '\u0001\u001f\u007f',
  '[1,5)',
  '(,)',
  'empty',
  '2024-02-29',
  '2024-02-29 23:59:59.1234567+00',
  '2024-03-10 02:30:00 America/New_York',
  'infinity',
  '-infinity',
  'epoch',
  'NaN',
  '1e3',
  ' 42 ',
  '0x1F',
  '9223372036854775808',
  '123.456',
  't',
  'FALSE',
  0,
  -0,
  1,
  -1,
  42,
  1.5,
  0.1 + 0.2,
  1e21,
  1e-7,
  2 ** 31,
  2 ** 53 + 2,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  NaN,
  Infinity,
  -Infinity,
  true,
  false,
  FEB_29,
  new Date(Date.UTC(-50, 0, 1)),
  new Date(Date.UTC(275000, 0, 1)),
  new Date(NaN),
  () => 1,
  Symbol('s'),
  { toJSON: () => 'from toJSON' },
  { toJSON: () => 7 },
  { toJSON: () => ({ nested: true }) },
  { toJSON: () => undefined },
];

test.each(NAMES.filter((c) => c !== 'n'))('every value into a %s column: COPY holds what JSON holds, or fails the same way', async (column) => {
  const differences: string[] = [];
  for (const [i, value] of VALUES.entries()) {
    const row = { n: i, [column]: value };
    const json = await fill('json', [row]);
    const copy = await fill('copy', [row]);
    if (copy === 'json only') continue;
    if (JSON.stringify(copy) !== JSON.stringify(json)) differences.push(`${shown(value)}: JSON ${JSON.stringify(json)}, COPY ${JSON.stringify(copy)}`);
  }
  expect(differences).toEqual([]);
});

test('thousands of random strings, every row at once: the same table both ways', async () => {
  const alphabet = ['a', 'Z', '0', ' ', '\t', '\n', '\r', '\\', 'N', '.', '"', "'", ',', '{', '}', 'é', '☃', '😀', '\u0001', '\u2028'];
  let seed = 12345;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const text = () => Array.from({ length: Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  const rows = Array.from({ length: 5000 }, (_, n) => ({
    n,
    txt: text(),
    short: random() < 0.5 ? Array.from(text()).slice(0, 4).join('') : null,
    ci: random() < 0.1 ? undefined : text(),
  }));
  const columns = ['n', 'txt', 'short', 'ci'];
  const copy = await fill('copy', rows, columns);
  expect(copy).not.toBe('json only');
  expect((copy as { rows: string[] }).rows).toHaveLength(5000);
  expect(copy).toEqual(await fill('json', rows, columns));
});

test('the output table says whether its columns take COPY text, through domains, dropped columns and quoted names', async () => {
  const takes = async (table: string, columns: string[]) => {
    const q = outputTakesCopy(table, columns);
    return (await db.pool.query<{ ok: boolean }>(q.text, q.values)).rows[0].ok;
  };
  expect(await takes('out_scalars', NAMES)).toBe(true);
  expect(await takes('out_dropped', ['n', 'txt'])).toBe(true);
  expect(await takes('out_json', ['n', 'doc'])).toBe(false);
  expect(await takes('out_domain_json', ['n', 'doc'])).toBe(false);
  expect(await takes('out_domain_array', ['n', 'tags'])).toBe(false);
  expect(await takes('out_composite', ['n', 'pair'])).toBe(false);
  // a column the table lacks is not a yes
  expect(await takes('out_scalars', ['n', 'nope'])).toBe(false);
  await db.pool.query('CREATE TABLE "Mixed Case" ("Key" integer, "Note" text)');
  expect(await takes('"Mixed Case"', ['Key', 'Note'])).toBe(true);
});

function shown(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (value instanceof Date) return `Date ${Number.isNaN(value.getTime()) ? 'invalid' : value.toISOString()}`;
  if (typeof value === 'object' && value !== null) return `object ${JSON.stringify(value)}`;
  return `${typeof value} ${JSON.stringify(value) ?? String(value)}`;
}

test('a COPY whose backend is terminated while it streams fails its chunk; nothing hangs and the process lives on', async () => {
  const pool = createPool(db.url, { max: 1 });
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    const victim = await pool.connect();
    const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    // as a chunk sends it: all at once, then wait; a body PostgreSQL takes a few hundred milliseconds to read
    const rows = Array.from({ length: 300_000 }, (_, n) => ({ n, txt: 'a value of about forty characters, give or take' }));
    const copy = victim.query(copyFrom('COPY out_scalars (n, txt) FROM STDIN'));
    copy.end(copyText(rows, ['n', 'txt']));
    const done = finished(copy);
    // terminated once the server is reading rows: mid-stream, whatever the machine's speed
    for (let polls = 0; polls < 2000; polls++) {
      const { rows: progress } = await db.pool.query('SELECT 1 FROM pg_stat_progress_copy WHERE pid = $1 AND tuples_processed > 0', [pid]);
      if (progress.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
    await expect(done).rejects.toThrow(/terminat|ECONNRESET/);
    victim.release(true);
    expect((await pool.query<{ n: string }>('SELECT count(*) AS n FROM out_scalars')).rows[0].n).toBe('0');
  } finally {
    process.off('uncaughtException', onUncaught);
    await pool.end();
  }
  expect(uncaught).toEqual([]);
});
