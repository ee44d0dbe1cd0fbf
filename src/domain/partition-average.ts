/**
 * The plan's average partition, rows planned / partitions: the one figure behind two guesses
 * about a partition before it is read, made on both sides of the workflow boundary (so pure):
 * whether its first attempt runs as a local activity (workflows/run-state.ts smallPartitions),
 * and whether a chunk is expected to end it (activities/forward-chunk.ts, and the bench's bare
 * loop, which must guess as the worker does).
 */

/** Rows in an average partition of the plan; undefined where the plan has no row count. */
export function rowsPerPartition(rowsPlanned: number | null | undefined, partitions: number): number | undefined {
  if (rowsPlanned == null || partitions <= 0) return undefined;
  return rowsPlanned / partitions;
}

/** Whether what is left of an average partition, after `rowsRead`, fits in one chunk of `limit` rows. */
export function likelyLastChunk(rowsPlanned: number | null | undefined, partitions: number, rowsRead: number, limit: number): boolean {
  const average = rowsPerPartition(rowsPlanned, partitions);
  return average !== undefined && average - rowsRead < limit;
}
