import { chunkReads } from '../../src/preflight/chunk-access';

const node = (type: string, rows: number, extra: Record<string, unknown> = {}, children: unknown[] = []) =>
  ({ 'Node Type': type, 'Plan Rows': rows, ...extra, Plans: children }) as never;

describe('how many rows a chunk costs to find, from the bounds query plan', () => {
  test('a range scan of an index in key order: nothing to warn about', () => {
    const plan = node('Aggregate', 1, {}, [node('Limit', 1000, {}, [node('Index Scan', 50_000, { 'Index Cond': '(id > $1)' })])]);
    expect(chunkReads(plan, 'created_at', 1000, 1_000_000)).toBeUndefined();
  });

  test('a sort under the limit reads the whole partition per chunk', () => {
    const plan = node('Aggregate', 1, {}, [node('Limit', 1000, {}, [node('Sort', 26_000, {}, [node('Bitmap Heap Scan', 26_493)])])]);
    expect(chunkReads(plan, 'created_at', 1000, 1_000_000)).toEqual({ rowsPerChunk: 26_493, how: 'sort' });
  });

  test("the key index filtered on the partition column reads chunkSize over the partition's share of the table", () => {
    const plan = node('Aggregate', 1, {}, [node('Limit', 1000, {}, [node('Index Scan', 8000, { Filter: "((status <> 'void'::text) AND (tenant = 5))" })])]);
    expect(chunkReads(plan, 'tenant', 1000, 100_000)).toEqual({ rowsPerChunk: 12_500, how: 'filtered-key-scan' });
    // a filter on something else (the spec's where) is not the partition's doing
    expect(chunkReads(plan, 'region', 1000, 100_000)).toBeUndefined();
  });
});
