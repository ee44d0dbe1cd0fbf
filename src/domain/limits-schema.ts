/**
 * The zod schemas of a spec's `limits` (window, guards, the limits themselves), built on the
 * bounds in limit-bounds.ts. Kept apart from it because workflow code imports limits.ts: a workflow
 * evaluates its imports anew for every execution, once per partition, and building zod and
 * these schemas there cost more CPU than the rest of a partition workflow (bench/RESULTS.md).
 */
import { z } from 'zod';
import './schema-words';
import { DEFAULT_LIMITS, LIMIT_BOUNDS } from './limit-bounds';
import { windowProblem } from './window';

const bounded = (name: keyof typeof LIMIT_BOUNDS) => z.number().int().min(LIMIT_BOUNDS[name].min).max(LIMIT_BOUNDS[name].max);

export const windowSchema = z.strictObject({ start: z.string(), end: z.string(), timeZone: z.string().default('UTC') }).superRefine((w, ctx) => {
  const problem = windowProblem(w);
  if (problem) ctx.addIssue({ code: 'custom', message: problem.message, path: [problem.field] });
});

const threshold = {
  soft: z.number().nonnegative().optional(),
  hard: z.number().nonnegative().optional(),
};
const hasThreshold = (t: { soft?: number; hard?: number }) => t.soft !== undefined || t.hard !== undefined;
const thresholdSchema = z.strictObject(threshold).refine(hasThreshold, { message: 'needs soft, hard or both' });

export const guardsSchema = z.strictObject({
  replicationLagSeconds: thresholdSchema.optional(),
  activeConnectionsRatio: thresholdSchema.optional(),
  lockWaits: thresholdSchema.optional(),
  autovacuum: thresholdSchema.optional(),
  commitMs: thresholdSchema.optional(),
  probeMs: z
    .strictObject({ sql: z.string().min(1), ...threshold })
    .refine(hasThreshold, { message: 'needs soft, hard or both' })
    .optional(),
  custom: z
    .array(
      z
        .strictObject({
          name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,40}$/, { message: 'must be lowercase letters, digits, _ -' }),
          sql: z.string().min(1),
          ...threshold,
        })
        .refine(hasThreshold, { message: 'needs soft, hard or both' }),
    )
    .optional(),
  holdTimeoutSeconds: z.number().positive().default(600),
});

export const limitsSchema = z.strictObject({
  chunkSize: bounded('chunkSize').default(DEFAULT_LIMITS.chunkSize),
  concurrency: bounded('concurrency').default(DEFAULT_LIMITS.concurrency),
  rowsPerSecond: z
    .number()
    .min(LIMIT_BOUNDS.rowsPerSecond.min, { message: `must be at least ${LIMIT_BOUNDS.rowsPerSecond.min} row a second; to stop writing, pause the run` })
    .max(LIMIT_BOUNDS.rowsPerSecond.max)
    .optional(),
  /** Each statement of a chunk runs under this statement_timeout (SET LOCAL in the chunk's transaction). */
  statementTimeoutSeconds: z.number().int().min(LIMIT_BOUNDS.statementTimeoutSeconds.min).max(LIMIT_BOUNDS.statementTimeoutSeconds.max).optional(),
  /**
   * Every chunk's commit waits for its WAL to reach the disk. Off, only a partition's last
   * chunk does; the others commit with synchronous_commit = off (chunk-transaction.ts). Unset:
   * on while a commitMs guard is set, off otherwise (flushesEveryChunk in limits.ts).
   */
  flushEveryChunk: z.boolean().optional(),
  /**
   * When a concurrency slot has no partition left to start, the running partition with the most
   * rows left is split at its middle key and the upper half starts in that slot: a run does not
   * end with one slot working and the others idle. Off by default: the ledger then holds more
   * partitions than the plan (each split is recorded as an event).
   */
  splitTail: z.boolean().optional(),
  /** Allowed hours: outside them the run holds and continues by itself when the window opens. */
  window: windowSchema.optional(),
  /** Adaptive chunk size: aim for chunks of this many seconds (additive increase, multiplicative decrease). */
  targetChunkSeconds: z.number().positive().optional(),
  minChunkSize: z.number().int().min(1).optional(),
  maxChunkSize: bounded('chunkSize').optional(),
  /** Health guards, read before every chunk. */
  guards: guardsSchema.optional(),
});
