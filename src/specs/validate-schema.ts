/**
 * The spec's proof and follow-up sections: `validate` (canary, invariants, the whole-run
 * check) and `after` (what runs once every gate passed), with `downstream` (who consumes the
 * changed columns). Separate from schema.ts so the run's core contract stays readable.
 */
import { z } from 'zod';
import { identifier } from './names';

const gateName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, { message: 'must be lowercase letters, digits, _ - (it names the gate in status and the report)' });

/** `3` partitions, or `"5%"` of the plan (at least one). */
const canaryCount = z.union([
  z.number().int({ message: 'must be a whole number of partitions or a share such as "5%"' }).positive({ message: 'must be at least 1' }),
  z.string().regex(/^(100|[1-9]?[0-9](\.[0-9]+)?)%$/, { message: 'must be a whole number of partitions or a share such as "5%"' }),
]);

export const canarySchema = z.strictObject({
  partitions: canaryCount,
  /** Hold after a passing canary until `backfill approve <run> --reason …`. */
  approve: z.boolean().optional(),
});

export const invariantSchema = z.strictObject({
  name: gateName,
  /**
   * One SELECT returning the rows that break the invariant (zero rows: it holds). It may read
   * `source_rows`: the partition's source rows in scope (scope: partition) or the whole run's
   * (scope: run), and any table by name. Runs read-only.
   */
  sql: z.string().min(1),
  scope: z.enum(['partition', 'run'], { message: 'must be partition or run' }).optional(),
});

const share = (what: string) => z.number({ message: `must be a number: ${what}` }).min(0, { message: 'must be 0 or more' });

/**
 * A column of the target whose shape must not drift more than declared: captured over the whole
 * target table before the run writes and again at the end; a change beyond a tolerance fails the
 * gate. Each tolerance is optional; give at least one.
 */
export const distributionSchema = z
  .strictObject({
    column: identifier,
    /** Largest change of the share of NULLs, absolute (0.01 = one percentage point). */
    nullRate: share('the largest change of the NULL share, e.g. 0.01').optional(),
    /** Largest relative change of the mean (numeric columns): 0.05 = 5 %. */
    mean: share('the largest relative change of the mean, e.g. 0.05').optional(),
    /** Largest relative change of the number of distinct values. */
    distinct: share('the largest relative change of the distinct count, e.g. 0.1').optional(),
    /** Largest relative change of the 10th, 50th and 90th percentiles (numeric columns). */
    quantiles: share('the largest relative change of p10, p50 and p90, e.g. 0.1').optional(),
  })
  .refine((d) => d.nullRate !== undefined || d.mean !== undefined || d.distinct !== undefined || d.quantiles !== undefined, {
    message: 'needs at least one tolerance: nullRate, mean, distinct or quantiles',
  });

export const validateSchema = z.strictObject({
  canary: canarySchema.optional(),
  invariants: z
    .array(invariantSchema)
    .max(50, { message: 'must list at most 50 invariants' })
    .optional()
    .refine((list) => !list || new Set(list.map((i) => i.name)).size === list.length, { message: 'names must be unique' }),
  /**
   * After the canary, release the plan in stages — "10%", "50%" of its partitions, in plan order —
   * each checked (sampled comparison, partition invariants) before the next may start.
   */
  ramp: z
    .array(z.string().regex(/^(100|[1-9]?[0-9](\.[0-9]+)?)%$/, { message: 'must be shares of the plan such as "10%"' }))
    .min(1)
    .max(10)
    .optional(),
  distributions: z
    .array(distributionSchema)
    .max(20, { message: 'must list at most 20 columns' })
    .optional()
    .refine((list) => !list || new Set(list.map((d) => d.column)).size === list.length, { message: 'columns must be unique' }),
  /**
   * The whole-run check before the run may end succeeded: the transform recomputed for a
   * deterministic slice of 1/16 of every partition's keys (`sample`, the default), every key
   * (`all`), or not at all (`off`, recorded).
   */
  finalCheck: z.enum(['sample', 'all', 'off'], { message: 'must be sample, all or off' }).optional(),
});

const afterAction = z.discriminatedUnion(
  'action',
  [
    z.strictObject({ action: z.literal('analyze') }),
    z.strictObject({
      action: z.literal('refresh'),
      view: z
        .string()
        .regex(/^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,62}$/, { message: 'must be a materialized view name like public.daily_totals' }),
    }),
    z.strictObject({ action: z.literal('sql'), sql: z.string().min(1) }),
    z.strictObject({
      action: z.literal('notify'),
      channel: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, { message: 'must be a plain channel name' }),
    }),
    z.strictObject({
      action: z.literal('webhook'),
      url: z
        .string()
        .url({ message: 'must be an http(s) URL' })
        .refine((u) => /^https?:\/\//.test(u), { message: 'must be an http(s) URL' }),
    }),
  ],
  { message: 'action must be one of analyze, refresh, sql, notify, webhook' },
);

export const afterSchema = z.array(afterAction).max(20, { message: 'must list at most 20 actions' });
export type AfterAction = z.infer<typeof afterAction>;

export const downstreamSchema = z.strictObject({
  /** Who reads the changed columns: dashboards, services, teams. Shown in status and the report. */
  consumers: z.array(z.string().min(1).max(200)).max(50).optional(),
  /** The change alters what the values mean (not only corrects them): consumers must be told. */
  changesSemantics: z.boolean().optional(),
});

export type ValidateSpec = z.infer<typeof validateSchema>;
export type Invariant = z.infer<typeof invariantSchema>;
export type DistributionCheck = z.infer<typeof distributionSchema>;
