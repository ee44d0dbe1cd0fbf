/**
 * `plan` of a fleet spec: every member checked and planned as a single-database spec is
 * (operations/plan-spec.ts), a few at a time, into one table — member, wave, identity, rows in
 * scope, partitions, estimate, warnings — with the totals. A member the spec does not fit (a
 * column missing, another type, no unique index, a database it cannot reach) is named with its
 * problems and the plan refused, unless it is excluded on purpose (`--exclude NAME --reason`);
 * two members that are one database (the same identity) are refused. Writes nothing but, with
 * `measureGuards`, the commitMs probe row in each member's ledger (operations/plan-spec.ts).
 */
import { UsageError } from '../domain/usage-error';
import { inParallel } from '../util/in-parallel';
import { SpecError, type SpecProblem } from '../specs/errors';
import type { FrozenTransform } from '../specs/load';
import type { SavedPlan } from '../preflight/saved-plan';
import { planLoaded, type PlanOptions } from '../operations/plan-spec';
import type { GuardCalibration } from '../preflight/guard-calibration';
import { loadFleetSpecFile, type LoadedFleet } from './load-fleet';

/** Members planned at once: each plan holds a few connections to its own database. */
const AT_ONCE = 4;

export interface MemberPlan {
  variable: string;
  wave: number;
  /** Left out on purpose, and why (`--exclude`): not checked, not planned. */
  excluded?: { reason: string };
  /** The database it reached (db/identity.ts) and its server. */
  identity?: string;
  serverVersion?: string;
  rows?: number;
  rowsExact?: boolean;
  partitions?: number;
  durationSeconds?: number;
  /** The duration leaves out the writes (plan --measure-writes measures them). */
  lowerBound?: boolean;
  warnings: string[];
  /** With `measureGuards`: what its guards read (the guards' advice is among its warnings). */
  guards?: GuardCalibration;
  /** What keeps the spec from running on it; the fleet plan is refused while any member has one. */
  problems: SpecProblem[];
  /** Its plan as `plan --save` keeps it (a fleet's saved plan, start --plan). */
  savedPlan?: SavedPlan;
}

export interface FleetPlan {
  name: string;
  fleetHash: string;
  transform: FrozenTransform;
  waves: number;
  members: MemberPlan[];
  totals: { members: number; planned: number; excluded: number; refused: number; rows: number; partitions: number };
  /** No member has a problem: the fleet may start. */
  ok: boolean;
}

export interface FleetPlanOptions extends Pick<PlanOptions, 'measureWrites' | 'measureGuards' | 'keepSavedPlan' | 'actor'> {
  /** Members left out on purpose, with why (recorded in the plan). */
  exclude?: string[];
  reason?: string;
  env?: Record<string, string | undefined>;
}

export async function planFleet(file: string, options: FleetPlanOptions = {}): Promise<FleetPlan> {
  return planLoadedFleet(loadFleetSpecFile(file, options.env), options);
}

/** The plan of a fleet spec already read (start plans the fleet it is about to start). */
export async function planLoadedFleet(loaded: LoadedFleet, options: FleetPlanOptions = {}): Promise<FleetPlan> {
  const exclude = new Set(options.exclude ?? []);
  const names = loaded.members.map((m) => m.variable);
  for (const x of exclude) if (!names.includes(x)) throw new UsageError(`--exclude ${x}: not a member of ${loaded.fleet.name} (members: ${names.join(', ')})`);
  if (exclude.size > 0 && !options.reason?.trim()) throw new UsageError('--exclude needs --reason: why a member is left out is kept with the plan');
  const members = await inParallel(loaded.members, AT_ONCE, (m) =>
    exclude.has(m.variable) ? Promise.resolve(excludedMember(m, options.reason!)) : planMember(m, options),
  );
  sameDatabaseTwice(members);
  const planned = members.filter((m) => !m.excluded);
  return {
    name: loaded.fleet.name,
    fleetHash: loaded.fleetHash,
    transform: loaded.transform,
    waves: Math.max(0, ...members.map((m) => m.wave)),
    members,
    totals: {
      members: members.length,
      planned: planned.length,
      excluded: members.length - planned.length,
      refused: planned.filter((m) => m.problems.length > 0).length,
      rows: planned.reduce((n, m) => n + (m.rows ?? 0), 0),
      partitions: planned.reduce((n, m) => n + (m.partitions ?? 0), 0),
    },
    ok: planned.every((m) => m.problems.length === 0),
  };
}

type Member = LoadedFleet['members'][number];

function excludedMember(m: Member, reason: string): MemberPlan {
  return { variable: m.variable, wave: m.wave, excluded: { reason }, warnings: [], problems: [] };
}

async function planMember(m: Member, options: FleetPlanOptions): Promise<MemberPlan> {
  const base = { variable: m.variable, wave: m.wave };
  try {
    const p = await planLoaded(m.loaded, {
      measureWrites: options.measureWrites,
      measureGuards: options.measureGuards,
      keepSavedPlan: options.keepSavedPlan,
      actor: options.actor,
    });
    return {
      ...base,
      identity: p.database.identity,
      serverVersion: p.database.serverVersion,
      rows: p.estimate.scope.rows,
      rowsExact: p.estimate.scope.exact,
      partitions: p.partitions.length,
      durationSeconds: p.estimate.projected.durationSeconds,
      lowerBound: p.estimate.projected.lowerBound,
      warnings: p.warnings,
      problems: [],
      ...(p.guards ? { guards: p.guards } : {}),
      ...(p.savedPlan ? { savedPlan: p.savedPlan } : {}),
    };
  } catch (err) {
    if (err instanceof SpecError) return { ...base, warnings: [], problems: err.problems };
    return { ...base, warnings: [], problems: [{ path: 'database', message: `cannot be planned: ${(err as Error).message}` }] };
  }
}

/** Two variables naming one database would run the backfill twice on it, at once. */
function sameDatabaseTwice(members: MemberPlan[]): void {
  const byIdentity = new Map<string, MemberPlan[]>();
  for (const m of members) if (m.identity) byIdentity.set(m.identity, [...(byIdentity.get(m.identity) ?? []), m]);
  for (const same of byIdentity.values()) {
    if (same.length < 2) continue;
    for (const m of same) {
      const others = same.filter((o) => o !== m).map((o) => o.variable);
      m.problems.push({
        path: 'databases',
        message: `${m.variable} is the same database as ${others.join(', ')} (identity ${m.identity}): list each database once`,
      });
    }
  }
}
