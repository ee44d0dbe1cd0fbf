/**
 * The plan's average partition, rows planned / partitions: the one figure behind the guesses
 * about a partition before it is read, made on both sides of the workflow boundary (so pure):
 * whether its first attempt runs as a local activity and whether the run starts its partitions
 * in groups (workflows/run-state.ts), which the plan's estimate must guess as the run will
 * (operations/orchestration-pace.ts), and whether a chunk is expected to end it
 * (activities/forward-chunk.ts, and the bench's bare loop, which must guess as the worker does).
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

/**
 * A group's members at most: its local attempts run at once on the worker that takes it. Ten
 * keeps two groups in flight at concurrency 20; five and twenty were slower on both servers
 * (bench/RESULTS-LOG.md, "Groups sized by measure").
 */
export const GROUP_SIZE = 10;

/**
 * Runs of fewer partitions keep one workflow each, a row per partition in the Web UI: grouping
 * would save them about half a second a run (same section).
 */
export const GROUP_MIN_PARTITIONS = 40;

/**
 * Partitions of a chunk or two on average: small enough that a first attempt as a local activity
 * usually finishes them (workflows/backfill-partition.ts).
 */
export function smallOnAverage(rowsPlanned: number | null | undefined, partitions: number, chunkSize: number): boolean {
  const average = rowsPerPartition(rowsPlanned, partitions);
  return average !== undefined && average <= 2 * chunkSize;
}

/** Small partitions of a run of many: the run starts them in groups (where its transform is SQL). */
export function startsInGroups(rowsPlanned: number | null | undefined, partitions: number, chunkSize: number): boolean {
  return partitions >= GROUP_MIN_PARTITIONS && smallOnAverage(rowsPlanned, partitions, chunkSize);
}
