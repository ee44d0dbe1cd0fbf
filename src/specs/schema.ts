/**
 * The spec contract (docs/spec.md): a zod schema, the single source of truth for
 * what a spec may say. Field names here are stable; new fields may be added.
 * Names are taken as the catalog has them and always quoted (specs/names.ts), so that
 * nothing but the `where` filter and the transform's SELECT can carry SQL, and those two
 * are checked against the database before a run starts.
 */
import { z } from 'zod';
import '../domain/schema-words';
import { DEFAULT_LIMITS, MAX_PARTITIONS } from '../domain/limits';
import { limitsSchema } from '../domain/limits-schema';
import { afterSchema, downstreamSchema, validateSchema } from './validate-schema';

import { identifier, tableName } from './names';
import { notifySchema } from './notify-schema';

export { identifier, tableName };

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name);
  } catch {
    return false;
  }
}

export const TIME_UNITS = ['minute', 'hour', 'day', 'week', 'month'] as const;
export type TimeUnit = (typeof TIME_UNITS)[number];
const INTERVAL = /^\s*(\d+)\s+(minute|hour|day|week|month)s?\s*$/;

export function parseInterval(text: string): { count: number; unit: TimeUnit } | null {
  const m = INTERVAL.exec(text);
  if (!m) return null;
  const count = Number(m[1]);
  return count > 0 ? { count, unit: m[2] as TimeUnit } : null;
}

const rangePartition = z
  .strictObject({
    by: z.literal('range'),
    column: identifier,
    /** A width in key units on an integer column: partitions aligned to multiples of it. */
    size: z
      .number({ message: "must be a positive integer for 'range' (a width in key units); use by: time for intervals" })
      .int({ message: "must be a positive integer for 'range'" })
      .positive({ message: "must be a positive integer for 'range'" })
      .optional(),
    /** Or this many partitions of about equal rows, on a column of any orderable type (uuid, text, a skewed integer). */
    count: z
      .number({ message: "must be a whole number of partitions for 'range'" })
      .int({ message: "must be a whole number of partitions for 'range'" })
      .min(1, { message: 'must be at least 1' })
      .max(MAX_PARTITIONS, { message: `must be at most ${MAX_PARTITIONS}` })
      .optional(),
  })
  .refine((p) => (p.size === undefined) !== (p.count === undefined), {
    message:
      'by: range takes size (a width in key units, integer columns) or count (partitions of about equal rows, any orderable column), not both and not neither',
    path: ['size'],
  });

const timePartition = z.strictObject({
  by: z.literal('time'),
  column: identifier,
  size: z.string({ message: 'must be an interval such as "1 day" for \'time\'' }).refine((s) => parseInterval(s) !== null, {
    message: 'must be an interval such as "1 day", "6 hours" or "1 month" for \'time\'',
  }),
  /** The calendar partitions follow (IANA name); a date or timestamp column holds that zone's local time. Default UTC. */
  timeZone: z.string().refine(isTimeZone, { message: 'must be an IANA time zone name such as "America/New_York" or "Europe/Berlin"' }).optional(),
});

const listPartition = z.strictObject({
  by: z.literal('list'),
  column: identifier,
  /** Omitted: the distinct values of the column in scope are discovered at plan time. */
  values: z
    .array(z.union([z.string().max(1000, { message: 'must be at most 1000 characters' }), z.number()]))
    .min(1, { message: 'must list at least one value, or be omitted to discover them' })
    .max(MAX_PARTITIONS, { message: `must list at most ${MAX_PARTITIONS} values (one partition each); omit it to discover the values, or partition by range` })
    .optional(),
});

/** One backfill partition per leaf partition of a declaratively partitioned source; `column` is its partition key. */
const nativePartition = z.strictObject({
  by: z.literal('native'),
  column: identifier,
  /**
   * About this many rows per backfill partition: a leaf holding more is cut into ranges of
   * source.key's first column, of about equal rows, so a few big leaves still keep every
   * concurrency slot busy. Omitted: one backfill partition per leaf, whatever its size.
   */
  rows: z
    .number({ message: "must be a whole number of rows for 'native'" })
    .int({ message: "must be a whole number of rows for 'native'" })
    .min(1000, { message: 'must be at least 1000 (rows per backfill partition; a chunk is up to limits.chunkSize of them)' })
    .optional(),
});

export const partitionSchema = z.discriminatedUnion('by', [rangePartition, timePartition, listPartition, nativePartition], {
  message: 'partition.by must be one of range, time, list, native',
});

export const transformSchema = z
  .strictObject({
    name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, { message: 'must be lowercase letters, digits, . _ -' }),
    version: z.number().int().positive({ message: 'must be a positive integer; bump it whenever the logic changes' }),
    sql: z.string().min(1).optional(),
    module: z.string().min(1).optional(),
    /**
     * The SQL transform calls volatile functions (random(), clock_timestamp(), nextval()) on
     * purpose: a re-run then writes different values. Refused unless declared; recorded in the run.
     */
    allowVolatile: z.boolean().optional(),
  })
  .refine((t) => (t.sql === undefined) !== (t.module === undefined), {
    message: 'needs exactly one of sql (a SELECT over `chunk`) or module (a TypeScript file)',
  });

export { guardsSchema, limitsSchema, windowSchema } from '../domain/limits-schema';

/**
 * Before-images (docs/undo.md): every row a run changes is kept as it was, so `backfill revert`
 * can put it back; kept `keep` after the run finishes (default 14 days). `off` for runs whose
 * target must not be copied (personal data under a deletion duty, say): recorded in the run.
 */
export const undoSchema = z.union(
  [
    z.literal('off'),
    z.strictObject({
      keep: z.string().refine((s) => parseInterval(s) !== null, { message: 'must be an interval such as "14 days", "12 hours" or "1 month"' }),
    }),
  ],
  { message: 'must be off, or { keep: "14 days" } (how long before-images are kept after the run)' },
);

export const DEFAULT_UNDO_KEEP = '14 days';

export const WRITE_MODES = ['upsert', 'update', 'replace'] as const;

/** The NAME of an environment variable holding a database URL: specs name databases, never hold their URLs. */
export const databaseVariable = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  message: 'must be the NAME of an environment variable holding the URL (e.g. DATABASE_URL), never the URL',
});

/** Every field of a spec but the database it runs on: a single-database spec and a fleet spec (src/fleet) share them. */
const specFields = {
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, { message: 'must match [a-z0-9-]+ (it is part of workflow ids)' }),
  reason: z.string().min(1, { message: 'must say why this backfill runs (it is kept in the audit record)' }),
  source: z.strictObject({
    table: tableName,
    // one column, or the columns of a composite unique key (in the order chunks walk them)
    key: z.union([identifier, z.array(identifier).min(1, { message: 'must name at least one column' })], {
      message: 'must be a column name, or a list of column names for a composite key ([id, occurred_at])',
    }),
    where: z.string().min(1).optional(),
  }),
  partition: partitionSchema,
  transform: transformSchema,
  target: z
    .strictObject({
      table: tableName,
      key: z.array(identifier).min(1, { message: 'must name at least one column' }),
      mode: z.enum(WRITE_MODES, { message: 'must be one of upsert, update, replace' }),
      partitionColumn: identifier.optional(),
    })
    .refine((t) => t.mode !== 'replace' || t.partitionColumn !== undefined, {
      message: "is required when mode is 'replace': the target column holding each partition's value (e.g. the day of a daily rollup)",
      path: ['partitionColumn'],
    }),
  limits: limitsSchema.default(DEFAULT_LIMITS),
  // optional, not defaulted: a spec without it hashes as before, and keeps images for DEFAULT_UNDO_KEEP
  undo: undoSchema.optional(),
  validate: validateSchema.optional(),
  after: afterSchema.optional(),
  downstream: downstreamSchema.optional(),
  notify: notifySchema.optional(),
};
export { specFields };

/** A tail split cannot apply to replace mode's whole-partition chunks. */
export function splitTailRefusal(spec: { limits: { splitTail?: boolean }; target: { mode: string } }): boolean {
  return !(spec.limits.splitTail && spec.target.mode === 'replace');
}
export const SPLIT_TAIL_REFUSAL = {
  message: "cannot be used with target.mode 'replace': a replace partition is computed whole, in one chunk, so it has no tail to split; leave it out",
  path: ['limits', 'splitTail'],
};

const { name, reason, ...afterDatabase } = specFields;
/** A spec of one database (docs/spec.md); the field order is the documented one. */
export const specSchema = z.strictObject({ name, reason, database: databaseVariable, ...afterDatabase }).refine(splitTailRefusal, SPLIT_TAIL_REFUSAL);

export type Spec = z.infer<typeof specSchema>;

export type SpecInput = z.input<typeof specSchema>;
export type PartitionSpec = Spec['partition'];
export type WriteMode = Spec['target']['mode'];
