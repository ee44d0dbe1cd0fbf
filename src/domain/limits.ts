/**
 * The one definition of a run's limits: their bounds (limit-bounds.ts, on which the spec's
 * zod schema in limits-schema.ts is built too) and the validation of live changes (the run workflow's
 * setLimits validator and the CLI), so the spec, `set-limits`, its help and the Web UI's
 * handler description all say the same thing. Workflow code imports this module; it loads zod
 * only for a live change that sets guards (see guardsSchema below).
 */
import { LIMIT_BOUNDS } from './limit-bounds';
import type { Limits, LimitsChange } from './types';
import { windowProblem } from './window';

export { DEFAULT_LIMITS, DEFAULT_STATEMENT_TIMEOUT_SECONDS, LIMIT_BOUNDS, MAX_CHECK_CONCURRENCY, MAX_PARTITIONS } from './limit-bounds';

/** Returns why the change is invalid, or undefined when it is valid. */
export function limitsChangeProblem(change: LimitsChange): string | undefined {
  const { concurrency, chunkSize, rowsPerSecond, window, targetChunkSeconds, guards } = change;
  if ([concurrency, chunkSize, rowsPerSecond, window, targetChunkSeconds, guards].every((v) => v === undefined)) {
    return 'no limit given; set at least one of concurrency, chunkSize, rowsPerSecond, window, targetChunkSeconds, guards';
  }
  if (targetChunkSeconds !== undefined && targetChunkSeconds !== null && !(targetChunkSeconds > 0)) {
    return `targetChunkSeconds must be a positive number, or null to turn adaptive sizing off (got ${targetChunkSeconds})`;
  }
  if (guards) {
    // the spec's own schema: a guard set live is checked exactly as one in a spec file
    const parsed = guardsSchema().safeParse(guards);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return `guards.${issue.path.join('.')} ${issue.message}`;
    }
  }
  if (window) {
    const problem = windowProblem({ ...window, timeZone: window.timeZone ?? 'UTC' });
    if (problem) return `window.${problem.field} ${problem.message}`;
  }
  for (const [name, value] of [
    ['concurrency', concurrency],
    ['chunkSize', chunkSize],
  ] as const) {
    if (value === undefined) continue;
    const { min, max } = LIMIT_BOUNDS[name];
    if (!Number.isInteger(value) || value < min || value > max) return `${name} must be an integer from ${min} to ${max} (got ${value})`;
  }
  if (rowsPerSecond !== undefined && rowsPerSecond !== null) {
    const { min, max } = LIMIT_BOUNDS.rowsPerSecond;
    if (!(typeof rowsPerSecond === 'number' && rowsPerSecond >= min && rowsPerSecond <= max)) {
      return `rowsPerSecond must be a number from ${min} to ${max}, or null to remove the cap (got ${rowsPerSecond}); to stop writing, pause the run`;
    }
  }
  return undefined;
}

export function applyLimitsChange(current: Limits, change: LimitsChange): Limits {
  const next: Limits = { concurrency: change.concurrency ?? current.concurrency, chunkSize: change.chunkSize ?? current.chunkSize };
  const rps = change.rowsPerSecond === undefined ? current.rowsPerSecond : change.rowsPerSecond;
  if (rps !== null && rps !== undefined) next.rowsPerSecond = rps;
  const window = change.window === undefined ? current.window : change.window;
  if (window) next.window = { ...window, timeZone: window.timeZone ?? 'UTC' };
  const target = change.targetChunkSeconds === undefined ? current.targetChunkSeconds : change.targetChunkSeconds;
  if (target) next.targetChunkSeconds = target;
  if (current.minChunkSize !== undefined) next.minChunkSize = current.minChunkSize;
  if (current.maxChunkSize !== undefined) next.maxChunkSize = current.maxChunkSize;
  if (current.statementTimeoutSeconds !== undefined) next.statementTimeoutSeconds = current.statementTimeoutSeconds;
  if (current.flushEveryChunk !== undefined) next.flushEveryChunk = current.flushEveryChunk;
  if (current.splitTail !== undefined) next.splitTail = current.splitTail;
  const guards = change.guards === undefined ? current.guards : change.guards;
  if (guards) next.guards = guardsSchema().parse(guards);
  return next;
}

/**
 * The spec's guards schema, loaded on first use: a workflow evaluates every module it imports
 * for each execution, and only a live change that sets guards needs zod.
 */
function guardsSchema(): typeof import('./limits-schema').guardsSchema {
  return (require('./limits-schema') as typeof import('./limits-schema')).guardsSchema;
}

/**
 * Whether every chunk's commit waits for its WAL to reach the disk: as limits.flushEveryChunk
 * says, and when it says nothing, whenever a commitMs guard times commits. The guard times a
 * durable commit before each chunk; after a chunk committed without waiting, that commit
 * flushes the whole chunk's WAL (8–22 ms against 1–2 ms for the next commit, on chunks of
 * 10,000 rows here), so the guard read the run's own chunk as the server being slow at every
 * chunk and held the run to a seventh of its speed (bench/RESULTS.md, "Live traffic").
 */
export function flushesEveryChunk(limits: Pick<Limits, 'flushEveryChunk' | 'guards'>): boolean {
  return limits.flushEveryChunk ?? limits.guards?.commitMs !== undefined;
}
