/**
 * A fleet's saved plan (`plan fleet.yaml --save fleet-plan.json`): what a reviewer approves for
 * the whole fleet — the fleet spec's hash, every member's own saved plan (its spec hash,
 * partitions, input fingerprints, the database it was made against), and the members left out
 * and why. `start fleet.yaml --plan fleet-plan.json --approved-by …` plans the fleet again and
 * refuses, naming each member and each difference, unless it is the same; each member's worker
 * checks its partitions and inputs once more when its run registers, as for one database.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { planDifferences, type SavedPlan } from '../preflight/saved-plan';
import { UsageError } from '../domain/usage-error';
import { savedPlanSchema } from '../operations/saved-plans';
import type { FleetPlan } from './plan-fleet';

export const FLEET_PLAN_FORMAT = 'backfill-fleet-plan/1';

export interface SavedFleetPlan {
  format: typeof FLEET_PLAN_FORMAT;
  name: string;
  fleetHash: string;
  members: { variable: string; wave: number; plan: SavedPlan }[];
  excluded: { variable: string; reason: string }[];
  planned: { at: string; by: string };
}

const savedFleetPlanSchema = z.object({
  format: z.literal(FLEET_PLAN_FORMAT),
  name: z.string(),
  fleetHash: z.string().regex(/^[0-9a-f]{64}$/),
  members: z.array(z.object({ variable: z.string(), wave: z.number().int(), plan: savedPlanSchema })),
  excluded: z.array(z.object({ variable: z.string(), reason: z.string() })),
  planned: z.object({ at: z.string(), by: z.string() }),
});

export function savedFleetPlanOf(plan: FleetPlan, by: string, at = new Date()): SavedFleetPlan {
  return {
    format: FLEET_PLAN_FORMAT,
    name: plan.name,
    fleetHash: plan.fleetHash,
    members: plan.members.filter((m) => !m.excluded).map((m) => ({ variable: m.variable, wave: m.wave, plan: m.savedPlan! })),
    excluded: plan.members.filter((m) => m.excluded).map((m) => ({ variable: m.variable, reason: m.excluded!.reason })),
    planned: { at: at.toISOString(), by },
  };
}

export function writeSavedFleetPlan(file: string, plan: SavedFleetPlan): void {
  try {
    writeFileSync(file, `${JSON.stringify(plan, null, 2)}\n`);
  } catch (err) {
    throw new UsageError(`--save ${file}: cannot write it (${(err as Error).message})`);
  }
}

/** Whether a saved plan file is a fleet's (start --plan takes either). */
export function isSavedFleetPlan(file: string): boolean {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { format?: string }).format === FLEET_PLAN_FORMAT;
  } catch {
    return false;
  }
}

export function readSavedFleetPlan(file: string): SavedFleetPlan {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`--plan ${file}: cannot be read as JSON (${(err as Error).message}); pass the file written by backfill plan fleet.yaml --save`);
  }
  const parsed = savedFleetPlanSchema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new UsageError(
      `--plan ${file}: is not a fleet's saved plan (${first.path.join('.') || 'file'}: ${first.message}); pass the file written by backfill plan fleet.yaml --save`,
    );
  }
  return parsed.data as SavedFleetPlan;
}

/** Every way the fleet planned now differs from the approved one, member by member; empty when it is the same. */
export function fleetPlanDifferences(approved: SavedFleetPlan, now: SavedFleetPlan): string[] {
  const out: string[] = [];
  if (approved.fleetHash !== now.fleetHash)
    out.push(`the fleet spec changed: hash ${approved.fleetHash.slice(0, 12)} approved, ${now.fleetHash.slice(0, 12)} now`);
  const names = (ms: { variable: string }[]) => ms.map((m) => m.variable);
  for (const v of names(approved.members)) if (!names(now.members).includes(v)) out.push(`${v}: a member in the approved plan, not now`);
  for (const v of names(now.members)) if (!names(approved.members).includes(v)) out.push(`${v}: a member now, not in the approved plan`);
  for (const m of now.members) {
    const was = approved.members.find((a) => a.variable === m.variable);
    if (!was) continue;
    if (was.wave !== m.wave) out.push(`${m.variable}: wave ${m.wave} now, ${was.wave} approved`);
    out.push(...planDifferences(was.plan, m.plan).map((d) => `${m.variable}: ${d}`));
  }
  return out;
}
