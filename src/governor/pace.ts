/**
 * The two feedback rules a partition's governor applies between chunks: the pace after a
 * guard reading (AIMD on the share of time spent writing) and the adaptive chunk size
 * (AIMD towards chunks of targetChunkSeconds). Pure and workflow-safe.
 */

/** Full speed: partitions write concurrently, as fast as their limits allow. */
export const FULL_PACE = 2;
/** The slowest a soft signal makes a partition: writing 1/8 of the time. Only a hard signal stops it. */
export const MIN_PACE = 1 / 8;

/**
 * A partition's pace after a guard reading. 2 is full speed; below 2 the run's partitions write
 * one at a time (on a small database server, concurrent chunks take every core and live queries
 * wait for CPU); below 1 it is also the share of time spent writing. A soft reading drops it to 1,
 * then halves it (down to 1/8); a clear reading adds a tenth, so ten clear readings in a row
 * restore full speed.
 */
export function nextPace(pace: number, soft: boolean): number {
  if (soft) return pace > 1 ? 1 : Math.max(MIN_PACE, pace / 2);
  return Math.min(FULL_PACE, Math.round((pace + 0.1) * 1000) / 1000);
}

/** Readings settledPace drives nextPace with, after as many to forget where it started. */
const SETTLING_READINGS = 20_000;

/**
 * Where nextPace settles when `softShare` of the guard readings are over soft, found by driving
 * it with that share of soft readings in a fixed pseudo-random order (the same share, the same
 * answer): `writing`, the share of time a partition writes; `allWriting`, the share of readings
 * after which every partition writes at once (full pace). A tenth soft still writes about 97 %
 * of the time, but all at once only about a third; a third soft, under half the time.
 */
export function settledPace(softShare: number): { writing: number; allWriting: number } {
  if (softShare <= 0) return { writing: 1, allWriting: 1 };
  let seed = 1;
  const uniform = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
  let pace = FULL_PACE;
  let writing = 0;
  let allWriting = 0;
  for (let i = 0; i < 2 * SETTLING_READINGS; i++) {
    pace = nextPace(pace, uniform() < softShare);
    if (i < SETTLING_READINGS) continue;
    writing += Math.min(1, pace);
    if (pace >= FULL_PACE) allWriting++;
  }
  return { writing: writing / SETTLING_READINGS, allWriting: allWriting / SETTLING_READINGS };
}

export interface ChunkSizeLimits {
  chunkSize: number;
  targetChunkSeconds?: number;
  minChunkSize?: number;
  maxChunkSize?: number;
}

/**
 * Additive increase, multiplicative decrease towards chunks of targetChunkSeconds: a fast
 * chunk grows the next by a tenth of the configured size, a slow one halves it, within
 * [minChunkSize, maxChunkSize] (by default a tenth and ten times the configured size).
 */
export function nextChunkSize(current: number, ms: number, limits: ChunkSizeLimits): number {
  const target = (limits.targetChunkSeconds ?? 1) * 1000;
  const min = limits.minChunkSize ?? Math.max(100, Math.floor(limits.chunkSize / 10));
  const max = limits.maxChunkSize ?? limits.chunkSize * 10;
  const next = ms > target ? Math.floor(current / 2) : ms < target * 0.8 ? current + Math.max(1, Math.floor(limits.chunkSize / 10)) : current;
  return Math.min(max, Math.max(min, next));
}
