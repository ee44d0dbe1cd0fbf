/**
 * `backfill validate` checks specs with no database at all: every example is valid with the
 * database variables pointing nowhere; a spec whose SQL the parser refuses, or whose fields the
 * schema refuses, exits 2 naming the file and field; several files are each reported.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from './helpers/cli';

const nowhere = 'postgres://nobody@127.0.0.1:1/none';
const offline = { DATABASE_URL: nowhere, DEMO_DATABASE_URL: nowhere };
const examples = ['accounts-balanced', 'daily-rollup-ny', 'events-native', 'orders-usd'].map((e) => path.resolve(__dirname, '../examples', `${e}.yaml`));

function specFile(name: string, text: string): string {
  const file = path.join(os.tmpdir(), `validate-${process.pid}-${name}.yaml`);
  writeFileSync(file, text);
  return file;
}

const base = `name: offline
reason: test
database: DATABASE_URL
source: { table: app.orders, key: id }
partition: { by: range, column: id, size: 1000 }
target: { table: app.totals, key: [id], mode: upsert }
`;

test('every example is valid offline, with its database unreachable; the text says what only plan can check', async () => {
  const all = await runCli(['validate', ...examples, '-o', 'json'], offline);
  expect(all.stderr).toBe('');
  expect(all.code).toBe(0);
  const verdicts = JSON.parse(all.stdout) as { valid: boolean; file: string; notChecked: string[] }[];
  expect(verdicts.map((v) => [path.basename(v.file), v.valid])).toEqual(examples.map((e) => [path.basename(e), true]));
  const one = await runCli(['validate', examples[3]], offline);
  expect(one.code).toBe(0);
  expect(one.stdout).toContain('is valid offline: orders-usd-fix');
  expect(one.stdout).toContain('SQL, through the PostgreSQL parser');
  expect(one.stdout).toContain('not checked without the database (backfill plan checks them)');
});

test('SQL the parser refuses and fields the schema refuses exit 2, each naming its file and field; the valid file beside them is still reported', async () => {
  const writes = specFile('writes', `${base}transform: { name: t, version: 1, sql: "DELETE FROM app.orders RETURNING id" }\n`);
  const badField = specFile('field', `${base.replace('by: range', 'by: sometimes')}transform: { name: t, version: 1, sql: "SELECT c.id FROM chunk c" }\n`);
  const good = specFile('good', `${base}transform: { name: t, version: 1, sql: "SELECT c.id FROM chunk c" }\n`);
  const checked = await runCli(['validate', writes, badField, good, '-o', 'jsonl'], offline);
  expect(checked.code).toBe(2);
  expect(checked.stderr).toContain(`invalid spec ${writes}: transform.sql`);
  expect(checked.stderr).toMatch(new RegExp(`invalid spec ${badField}:\\d+:\\d+: partition.by`));
  const lines = checked.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { valid: boolean; file: string });
  expect(lines.map((l) => [l.file, l.valid])).toEqual([
    [writes, false],
    [badField, false],
    [good, true],
  ]);
});
