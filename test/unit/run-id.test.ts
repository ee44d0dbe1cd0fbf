import { randomBytes } from 'node:crypto';
import { newRunId } from '../../src/operations/run-id';
import { RUN_ID_PATTERN, runWorkflowId } from '../../src/domain/ids';

const AT = new Date('2026-12-02T03:01:42.123Z');

test('a run id is the UTC minute it was made and 16 hex digits, and is a valid run id', () => {
  const id = newRunId(AT);
  expect(id).toMatch(/^20261202-0301-[0-9a-f]{16}$/);
  expect(RUN_ID_PATTERN.test(id)).toBe(true);
  expect(runWorkflowId('orders-usd-fix', id)).toBe(`backfill/orders-usd-fix/${id}`);
});

test('a million ids made in the same minute are all different', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 1_000_000; i++) seen.add(newRunId(AT));
  expect(seen.size).toBe(1_000_000);
});

test('the random part is eight bytes, in hex', () => {
  expect(newRunId(AT, (n) => randomBytes(n).fill(0xab).toString('hex'))).toBe('20261202-0301-abababababababab');
  const drawn: number[] = [];
  newRunId(AT, (n) => (drawn.push(n), '0'.repeat(2 * n)));
  expect(drawn).toEqual([8]);
});

test('ids sort by the minute they were made in', () => {
  const ids = ['2026-12-31T23:59:00Z', '2027-01-01T00:00:00Z', '2027-01-01T00:01:00Z'].map((t) => newRunId(new Date(t)));
  expect([...ids].sort()).toEqual(ids);
});

test('ids of the older form (four hex digits) and ids chosen with --run-id stay valid', () => {
  for (const id of ['20261202-0301-42ca', '20250101-0000-0000', 'nightly-7', 'a']) expect(RUN_ID_PATTERN.test(id)).toBe(true);
  for (const id of ['Bad Id', '-leading', 'x'.repeat(41), 'a/b']) expect(RUN_ID_PATTERN.test(id)).toBe(false);
});
