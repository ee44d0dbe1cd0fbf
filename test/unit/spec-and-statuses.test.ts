import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { specJsonSchema } from '../../src/specs/json-schema';
import { loadSpecFile, parseSpecText } from '../../src/specs/load';
import { SpecError } from '../../src/specs/errors';
import { PARTITION_TRANSITIONS, RUN_TRANSITIONS, RunStatus, PartitionStatus, canTransition } from '../../src/domain/statuses';
import { partitionGroupWorkflowId, partitionWorkflowId, runWorkflowId } from '../../src/domain/ids';

const valid = `
name: orders-usd-fix
reason: fix
database: DATABASE_URL
source: { table: public.orders, key: id }
partition: { by: range, column: id, size: 1000 }
transform: { name: t, version: 1, sql: "SELECT c.id FROM chunk c" }
target: { table: public.t, key: [id], mode: upsert }
`;

describe('spec parsing', () => {
  test('defaults fill limits, and the hash does not depend on field order', () => {
    const a = parseSpecText(valid, 'a.yaml');
    expect(a.spec.limits).toEqual({ chunkSize: 5000, concurrency: 4 });
    const reordered = valid.split('\n').reverse().join('\n');
    expect(parseSpecText(reordered, 'b.yaml').specHash).toBe(a.specHash);
    expect(a.transform).toMatchObject({ name: 't', version: 1, kind: 'sql' });
  });

  test('source.key is one column or a list; range takes size or count; timeZone is an IANA name: each mistake says so', () => {
    expect(parseSpecText(valid.replace('key: id }', 'key: [id, created_at] }'), 'k.yaml').spec.source.key).toEqual(['id', 'created_at']);
    const problem = (text: string) => {
      try {
        parseSpecText(text, 'x.yaml');
        return 'accepted';
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(problem(valid.replace('key: id }', 'key: { a: 1 } }'))).toContain('source.key must be a column name, or a list of column names for a composite key');
    expect(problem(valid.replace('key: id }', 'key: [] }'))).toContain('source.key must name at least one column');
    expect(problem(valid.replace('size: 1000', 'count: 8'))).toBe('accepted');
    expect(problem(valid.replace('size: 1000', 'size: 1000, count: 8'))).toContain('by: range takes size (a width in key units, integer columns) or count');
    expect(problem(valid.replace(', size: 1000', ''))).toContain('by: range takes size');
    const time = valid.replace('{ by: range, column: id, size: 1000 }', '{ by: time, column: created_at, size: 1 day, timeZone: Mars/Olympus }');
    expect(problem(time)).toContain('partition.timeZone must be an IANA time zone name such as "America/New_York"');
    expect(problem(time.replace('Mars/Olympus', 'America/New_York'))).toBe('accepted');
  });

  test('a changed transform changes the spec hash and code hash', () => {
    const a = parseSpecText(valid, 'a.yaml');
    const b = parseSpecText(valid.replace('SELECT c.id', 'SELECT DISTINCT c.id'), 'a.yaml');
    expect(b.specHash).not.toBe(a.specHash);
    expect(b.transform.codeHash).not.toBe(a.transform.codeHash);
  });

  test('every problem is reported at once, each with its line', () => {
    const bad = valid.replace('name: orders-usd-fix', 'name: Orders_USD').replace('version: 1', 'version: 0');
    try {
      parseSpecText(bad, 'bad.yaml');
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(SpecError);
      expect((err as SpecError).problems.map((p) => [p.path, p.line])).toEqual([
        ['name', 2],
        ['transform.version', 7],
      ]);
    }
  });

  test('both sql and module, or neither, is refused', () => {
    expect(() => parseSpecText(valid.replace('sql: "SELECT c.id FROM chunk c"', 'module: x.ts, sql: "SELECT 1"'), 'x.yaml')).toThrow(
      'transform needs exactly one of sql (a SELECT over `chunk`) or module (a TypeScript file)',
    );
  });
});

describe('status transitions', () => {
  test.each(Object.values(RunStatus))('run status %s only moves along the table', (from) => {
    for (const to of Object.values(RunStatus)) {
      expect(canTransition(RUN_TRANSITIONS, from, to)).toBe(RUN_TRANSITIONS[from].includes(to));
    }
  });

  test('a succeeded run never moves again; failed and cancelled runs may only be retried (back to running)', () => {
    expect(RUN_TRANSITIONS.succeeded).toEqual([]);
    expect(RUN_TRANSITIONS.failed).toEqual(['running']);
    expect(RUN_TRANSITIONS.cancelled).toEqual(['running']);
  });

  test('a succeeded partition never runs again (a revert may mark it reverted, for good); failed and cancelled ones may be retried', () => {
    expect(PARTITION_TRANSITIONS[PartitionStatus.Succeeded]).toEqual(['reverted']);
    expect(PARTITION_TRANSITIONS[PartitionStatus.Reverted]).toEqual([]);
    expect(canTransition(PARTITION_TRANSITIONS, 'failed', 'reverted')).toBe(true);
    expect(canTransition(PARTITION_TRANSITIONS, 'pending', 'reverted')).toBe(false);
    expect(canTransition(PARTITION_TRANSITIONS, 'failed', 'pending')).toBe(true);
    expect(canTransition(PARTITION_TRANSITIONS, 'failed', 'running')).toBe(true);
    expect(canTransition(PARTITION_TRANSITIONS, 'cancelled', 'running')).toBe(true);
    expect(canTransition(PARTITION_TRANSITIONS, 'pending', 'succeeded')).toBe(false);
  });
});

test('workflow ids follow backfill/<name>/<runId>[/<partitionId>]', () => {
  expect(runWorkflowId('orders', 'r1')).toBe('backfill/orders/r1');
  expect(partitionWorkflowId('orders', 'r1', 'day:2024-03-01')).toBe('backfill/orders/r1/day:2024-03-01');
});

test("a group's workflow id names its first member, its size and every member: other members are another group", () => {
  const group = partitionGroupWorkflowId('orders', 'r1', ['day:2024-03-01', 'day:2024-03-02']);
  expect(group).toMatch(/^backfill\/orders\/r1\/group\/day:2024-03-01\+2-[0-9a-f]{8}$/);
  expect(partitionGroupWorkflowId('orders', 'r1', ['day:2024-03-01', 'day:2024-03-02'])).toBe(group);
  expect(partitionGroupWorkflowId('orders', 'r1', ['day:2024-03-01', 'day:2024-03-03'])).not.toBe(group);
});

test('examples/spec.schema.json is the JSON Schema generated from the zod spec schema (regenerate: backfill schema)', () => {
  const committed = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'examples', 'spec.schema.json'), 'utf8'));
  expect(committed).toEqual(specJsonSchema());
});

test('every example spec parses as a spec: the shapes the README points at are valid as written', () => {
  const dir = path.join(__dirname, '..', '..', 'examples');
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  expect(files.length).toBeGreaterThanOrEqual(4);
  for (const file of files) expect(() => loadSpecFile(path.join(dir, file))).not.toThrow();
});
