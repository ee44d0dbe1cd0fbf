/**
 * A fleet spec (docs/fleets.md): one backfill over many databases. Every field of a spec but
 * `database`, which becomes `databases` — environment variable names and families of them
 * (`TENANT_*`) — and an optional `fleet:` block: how members start (waves), how many at once,
 * what a member's failure does, and per-member limits. URLs stay in the environment.
 */
import { z } from 'zod';
import { specFields, SPLIT_TAIL_REFUSAL, splitTailRefusal } from '../specs/schema';

const memberName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  message: 'must be the NAME of an environment variable holding a database URL (e.g. US_DB), never the URL',
});
const memberOrFamily = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, {
  message: 'must be the NAME of an environment variable holding a database URL (US_DB), or a family of them ending in * (TENANT_*); never a URL',
});

/** A wave reaches this many members in all: a count, a share of the members (`"10%"`), or the members it names. */
const wave = z.union(
  [
    z.number().int().min(1),
    z.string().regex(/^(100|[1-9]\d?)%$/, { message: 'must be a share of the members from 1% to 100% ("10%")' }),
    z.array(memberName).min(1),
  ],
  {
    message: 'must be a count of members (1), a share of them ("10%", "100%"), or a list of member names ([EU_DB])',
  },
);

export const fleetBlockSchema = z.strictObject({
  /** Members start in waves, in the order `databases` lists them (families in name order); default: one wave of all. */
  waves: z.array(wave).min(1, { message: 'must list at least one wave, or be omitted for one wave of every member' }).optional(),
  /** Members in flight at once (each keeps its own limits.concurrency); default 1. */
  concurrency: z.number().int().min(1).max(1000).optional(),
  /** stop (default): no new member starts once one failed; continue: the rest carry on, the fleet ends failed. */
  onError: z.enum(['stop', 'continue'], { message: 'must be stop or continue' }).optional(),
  /** A person approves each wave after the first (backfill approve), as for a canary. */
  approve: z.boolean().optional(),
  /** Per member: limits that replace the spec's for it (a big shard at a lower rowsPerSecond). */
  members: z.record(memberName, z.strictObject({ limits: z.record(z.string(), z.unknown()) })).optional(),
});

const { name, reason, ...afterDatabase } = specFields;

export const fleetSpecSchema = z
  .strictObject({
    name,
    reason,
    databases: z.array(memberOrFamily).min(1, { message: 'must name at least one database variable' }).max(1000, { message: 'must name at most 1000 entries' }),
    ...afterDatabase,
    fleet: fleetBlockSchema.optional(),
  })
  .refine(splitTailRefusal, SPLIT_TAIL_REFUSAL);

export type FleetSpec = z.infer<typeof fleetSpecSchema>;
export type FleetWave = NonNullable<NonNullable<FleetSpec['fleet']>['waves']>[number];
