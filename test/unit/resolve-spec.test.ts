import { resolveSpec, undoKeep } from '../../src/specs/resolve';
import { specSchema, type Spec } from '../../src/specs/schema';
import { hashSpec } from '../../src/specs/load';

const written = specSchema.parse({
  name: 'orders',
  reason: 'r',
  database: 'DATABASE_URL',
  source: { table: 'public.orders', key: 'id' },
  partition: { by: 'time', column: 'created_at', size: '6 hours', timeZone: 'Europe/Berlin' },
  transform: { name: 't', version: 1, sql: 'SELECT c.id FROM chunk c' },
  target: { table: 'public.totals', key: ['id'], mode: 'upsert' },
});
const transform = { name: 't', version: 1, kind: 'sql' as const, codeHash: 'c' };

test('a key of one column becomes a list; a composite key stays in its order', () => {
  expect(resolveSpec(written).source.key).toEqual(['id']);
  expect(resolveSpec({ ...written, source: { table: 't', key: ['b', 'a'] } }).source.key).toEqual(['b', 'a']);
});

test("a time partition's interval is parsed once, its text and calendar kept as written", () => {
  expect(resolveSpec(written).partition).toEqual({
    by: 'time',
    column: 'created_at',
    size: '6 hours',
    timeZone: 'Europe/Berlin',
    interval: { count: 6, unit: 'hour' },
  });
  const range = { by: 'range' as const, column: 'id', size: 10 };
  expect(resolveSpec({ ...written, partition: range }).partition).toEqual(range);
});

test('undo: the default keep is filled in; off stays off', () => {
  expect(resolveSpec(written).undo).toEqual({ keep: '14 days' });
  expect(undoKeep(resolveSpec({ ...written, undo: { keep: '2 days' } }))).toBe('2 days');
  expect(undoKeep(resolveSpec({ ...written, undo: 'off' }))).toBeNull();
});

test('resolving twice is resolving once, and the spec as written (what is hashed) is left as it was', () => {
  const copy: Spec = structuredClone(written);
  const once = resolveSpec(written);
  expect(resolveSpec(once)).toEqual(once);
  expect(written).toEqual(copy);
  expect(hashSpec(written, transform)).toBe(hashSpec(copy, transform));
});

test('a spec that skipped validation is refused, not resolved into a wrong interval', () => {
  expect(() => resolveSpec({ ...written, partition: { by: 'time', column: 'at', size: 'a fortnight' } })).toThrow(/not an interval/);
});
