/**
 * Reading and writing saved plans (see preflight/saved-plan.ts): `plan --save` writes what it
 * checked; `start --plan` reads it back, makes the plan again and refuses any difference.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { PLAN_FORMAT, planDifferences, summarizePartitions, type SavedPlan } from '../preflight/saved-plan';
import { engineVersion } from '../util/engine-version';
import type { CheckedSpec } from './check-spec';
import { UsageError } from '../domain/usage-error';

export function savedPlanOf(checked: CheckedSpec, by: string, at = new Date()): SavedPlan {
  const { loaded } = checked;
  return {
    format: PLAN_FORMAT,
    name: loaded.spec.name,
    specHash: loaded.specHash,
    transform: { ...loaded.transform, ...(loaded.artifact ? { bundled: loaded.artifact.inputs } : {}) },
    database: checked.database,
    partitions: summarizePartitions(checked.partitions),
    inputs: checked.inputs,
    planned: { at: at.toISOString(), by, engine: engineVersion() },
  };
}

export function writeSavedPlan(file: string, plan: SavedPlan): void {
  try {
    writeFileSync(file, `${JSON.stringify(plan, null, 2)}\n`);
  } catch (err) {
    throw new UsageError(`--save ${file}: cannot write it (${(err as Error).message})`);
  }
}

const fingerprint = z.object({
  name: z.string(),
  kind: z.enum(['table', 'view', 'materialized view', 'foreign table', 'partitioned table', 'function']),
  definition: z.string(),
  rows: z.number().optional(),
  content: z.string().optional(),
  uncovered: z.string().optional(),
});

export const savedPlanSchema = z.object({
  format: z.literal(PLAN_FORMAT),
  name: z.string(),
  specHash: z.string().regex(/^[0-9a-f]{64}$/),
  transform: z.object({
    name: z.string(),
    version: z.number(),
    kind: z.enum(['sql', 'module']),
    codeHash: z.string().regex(/^[0-9a-f]{64}$/),
    modulePath: z.string().optional(),
    bundled: z.array(z.string()).optional(),
  }),
  database: z.object({ variable: z.string(), identity: z.string(), serverVersion: z.string() }),
  partitions: z.object({ count: z.number().int(), first: z.string(), last: z.string(), digest: z.string().regex(/^[0-9a-f]{64}$/) }),
  inputs: z.array(fingerprint),
  planned: z.object({ at: z.string(), by: z.string(), engine: z.string() }),
  estimate: z.unknown().optional(),
});

export function readSavedPlan(file: string): SavedPlan {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`--plan ${file}: cannot be read as JSON (${(err as Error).message}); pass the file written by backfill plan --save`);
  }
  const parsed = savedPlanSchema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new UsageError(
      `--plan ${file}: is not a saved plan (${first.path.join('.') || 'file'}: ${first.message}); pass the file written by backfill plan --save`,
    );
  }
  return parsed.data as SavedPlan;
}

/** Refuses, naming every difference, unless `checked` is the approved plan. */
export function refuseUnlessApproved(file: string, approved: SavedPlan, checked: CheckedSpec): void {
  const differences = planDifferences(approved, savedPlanOf(checked, approved.planned.by));
  if (differences.length === 0) return;
  throw new UsageError(
    [
      `${checked.loaded.file} is not the plan approved in ${file} (made by ${approved.planned.by} at ${approved.planned.at}); nothing was started:`,
      ...differences.map((d) => `  - ${d}`),
      'Review the change, then make and approve a new plan: backfill plan --save',
    ].join('\n'),
  );
}
