/**
 * The numbers a run's limits are checked against: the spec's schema (limits-schema.ts) and
 * the validation of live changes (limits.ts) both read them from here.
 */
export const LIMIT_BOUNDS = {
  concurrency: { min: 1, max: 500 },
  chunkSize: { min: 1, max: 1_000_000 },
  // below one row a second the waits between chunks outgrow what a timer can hold
  rowsPerSecond: { min: 1, max: 100_000_000 },
  statementTimeoutSeconds: { min: 1, max: 86_400 },
} as const;

/** The most partitions one run may plan: beyond it the ledger, the run's state and the Web UI stop being useful. */
export const MAX_PARTITIONS = 100_000;

/** Sessions a check reads with at once, at most: the run's concurrency up to this (the final check's lanes, a ramp stage's check). */
export const MAX_CHECK_CONCURRENCY = 8;

/** How long one statement of a chunk (the transform included) may run before PostgreSQL cancels it. */
export const DEFAULT_STATEMENT_TIMEOUT_SECONDS = 900;

export const DEFAULT_LIMITS = { chunkSize: 5000, concurrency: 4 } as const;
