/**
 * A saved plan (`backfill plan --save plan.json`) is what a reviewer approves: the spec's hash,
 * the transform's frozen code hash, the partitions (count, first, last and a digest of every
 * id and bound), the fingerprints of what the transform reads, and the database it was made
 * against. `start --plan` makes the plan again and refuses, naming each difference, unless it
 * is the same; the worker that registers the run checks the partitions and inputs once more.
 */
import type { PlannedPartition } from '../domain/types';
import type { FrozenTransform } from '../specs/load';
import { inputChanges, type InputFingerprint } from './input-fingerprints';
import { canonicalJson } from '../util/canonical-json';
import { sha256 } from '../util/hash';

export const PLAN_FORMAT = 'backfill-plan/1';

export interface SavedPlan {
  format: typeof PLAN_FORMAT;
  name: string;
  specHash: string;
  transform: FrozenTransform & { bundled?: string[] };
  database: { variable: string; identity: string; serverVersion: string };
  partitions: PlanPartitions;
  inputs: InputFingerprint[];
  planned: { at: string; by: string; engine: string };
  /** What plan measured and projected (informational; not compared by start --plan). */
  estimate?: unknown;
}

export interface PlanPartitions {
  count: number;
  first: string;
  last: string;
  /** sha256 over every partition's id and bounds, in plan order. */
  digest: string;
}

export function summarizePartitions(partitions: readonly PlannedPartition[]): PlanPartitions {
  return {
    count: partitions.length,
    first: partitions[0]?.id ?? '',
    last: partitions[partitions.length - 1]?.id ?? '',
    digest: sha256(canonicalJson(partitions.map((p) => [p.id, p.bounds]))),
  };
}

/** Each way `now` differs from the approved plan, as a sentence an operator can act on; empty when it is the same plan. */
export function planDifferences(approved: SavedPlan, now: SavedPlan): string[] {
  const out: string[] = [];
  if (approved.name !== now.name) out.push(`the spec is now ${now.name}, the plan is for ${approved.name}`);
  if (approved.transform.codeHash !== now.transform.codeHash) {
    const files = now.transform.bundled ? ` (bundled from ${now.transform.bundled.join(', ')})` : '';
    out.push(`the transform's code changed: ${short(approved.transform.codeHash)} approved, ${short(now.transform.codeHash)} now${files}`);
  }
  if (approved.specHash !== now.specHash && approved.transform.codeHash === now.transform.codeHash) {
    out.push(`the spec changed: hash ${short(approved.specHash)} approved, ${short(now.specHash)} now`);
  }
  out.push(...partitionDifferences(approved.partitions, now.partitions));
  out.push(...inputChanges(approved.inputs, now.inputs, 'in the approved plan').map((c) => `input ${c}`));
  if (approved.database.identity !== now.database.identity) {
    out.push(
      `the database is another one: the plan was made against ${approved.database.identity}, ${now.database.variable} now reaches ${now.database.identity}`,
    );
  }
  if (approved.database.serverVersion !== now.database.serverVersion) {
    out.push(`the PostgreSQL server changed version: ${approved.database.serverVersion} approved, ${now.database.serverVersion} now`);
  }
  return out;
}

export function partitionDifferences(approved: PlanPartitions, now: PlanPartitions): string[] {
  if (approved.digest === now.digest) return [];
  if (approved.count !== now.count)
    return [
      `the plan has ${now.count} partitions now, ${approved.count} approved (${now.first} … ${now.last} now, ${approved.first} … ${approved.last} approved)`,
    ];
  return [
    `the ${now.count} partitions have other bounds than the approved ones (${now.first} … ${now.last} now, ${approved.first} … ${approved.last} approved)`,
  ];
}

const short = (hash: string) => hash.slice(0, 12);
