/**
 * The one definition of a run's limits: their bounds, the zod schema the spec's `limits`
 * field is checked with, and the validation of live changes (the run workflow's setLimits
 * validator and the CLI), so the spec, `set-limits`, its help and the Web UI's handler
 * description all say the same thing. Workflow-safe (zod is plain JavaScript).
 */
import { z } from 'zod';
import type { Limits, LimitsChange } from './types';
import { windowProblem } from './window';

export const LIMIT_BOUNDS = {
  concurrency: { min: 1, max: 500 },
  chunkSize: { min: 1, max: 1_000_000 },
  // below one row a second the waits between chunks outgrow what a timer can hold
  rowsPerSecond: { min: 1, max: 100_000_000 },
  statementTimeoutSeconds: { min: 1, max: 86_400 },
} as const;

/** The most partitions one run may plan: beyond it the ledger, the run's state and the Web UI stop being useful. */
export const MAX_PARTITIONS = 100_000;

/** How long one statement of a chunk (the transform included) may run before PostgreSQL cancels it. */
export const DEFAULT_STATEMENT_TIMEOUT_SECONDS = 900;

export const DEFAULT_LIMITS = { chunkSize: 5000, concurrency: 4 } as const;

const bounded = (name: keyof typeof LIMIT_BOUNDS) => z.number().int().min(LIMIT_BOUNDS[name].min).max(LIMIT_BOUNDS[name].max);


export const windowSchema = z
  .strictObject({ start: z.string(), end: z.string(), timeZone: z.string().default('UTC') })
  .superRefine((w, ctx) => {
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
  probeMs: z.strictObject({ sql: z.string().min(1), ...threshold }).refine(hasThreshold, { message: 'needs soft, hard or both' }).optional(),
  custom: z
    .array(z.strictObject({ name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,40}$/, { message: 'must be lowercase letters, digits, _ -' }), sql: z.string().min(1), ...threshold }).refine(hasThreshold, { message: 'needs soft, hard or both' }))
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
  /** Allowed hours: outside them the run holds and continues by itself when the window opens. */
  window: windowSchema.optional(),
  /** Adaptive chunk size: aim for chunks of this many seconds (additive increase, multiplicative decrease). */
  targetChunkSeconds: z.number().positive().optional(),
  minChunkSize: z.number().int().min(1).optional(),
  maxChunkSize: bounded('chunkSize').optional(),
  /** Health guards, read before every chunk. */
  guards: guardsSchema.optional(),
});

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
    const parsed = guardsSchema.safeParse(guards);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return `guards.${issue.path.join('.')} ${issue.message}`;
    }
  }
  if (window) {
    const problem = windowProblem({ ...window, timeZone: window.timeZone ?? 'UTC' });
    if (problem) return `window.${problem.field} ${problem.message}`;
  }
  for (const [name, value] of [['concurrency', concurrency], ['chunkSize', chunkSize]] as const) {
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
  const guards = change.guards === undefined ? current.guards : change.guards;
  if (guards) next.guards = guardsSchema.parse(guards);
  return next;
}
