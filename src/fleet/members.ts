/**
 * A fleet's members, resolved once from its spec and this environment: `databases` expanded
 * (a family `TENANT_*` to every set variable of that prefix, in name order), each member put in
 * its wave, and its single-database spec made — the fleet's fields, its variable as `database`,
 * its limits as `fleet.members` overrides them — and validated as any spec is. Pure but for the
 * environment it is given.
 */
import { limitsSchema } from '../domain/limits-schema';
import type { SpecProblem } from '../specs/errors';
import { specSchema, type Spec } from '../specs/schema';
import type { FleetSpec, FleetWave } from './fleet-schema';

export interface FleetMember {
  /** The environment variable holding its URL: the member's name everywhere. */
  variable: string;
  /** 1-based. */
  wave: number;
  spec: Spec;
}

export type Members = { ok: true; members: FleetMember[] } | { ok: false; problems: SpecProblem[] };

export function fleetMembers(fleet: FleetSpec, env: Record<string, string | undefined>): Members {
  const problems: SpecProblem[] = [];
  const names = expand(fleet.databases, env, problems);
  const waves = assignWaves(names, fleet.fleet?.waves ?? [], problems);
  for (const named of Object.keys(fleet.fleet?.members ?? {}))
    if (!names.includes(named))
      problems.push({ path: `fleet.members.${named}`, message: `names ${named}, which is not a member (databases: ${names.join(', ') || 'none'})` });
  if (problems.length > 0) return { ok: false, problems };
  const members: FleetMember[] = [];
  for (const variable of names) {
    const spec = memberSpec(fleet, variable, problems);
    if (spec) members.push({ variable, wave: waves.get(variable)!, spec });
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, members };
}

function expand(entries: string[], env: Record<string, string | undefined>, problems: SpecProblem[]): string[] {
  const names: string[] = [];
  entries.forEach((entry, i) => {
    const family = entry.endsWith('*') ? entry.slice(0, -1) : undefined;
    const found =
      family !== undefined
        ? Object.keys(env)
            .filter((k) => k.startsWith(family) && env[k])
            .sort()
        : [entry];
    if (family !== undefined && found.length === 0)
      problems.push({
        path: `databases.${i}`,
        message: `is the family ${entry}, but no environment variable starting with ${family} is set here; set them, or name the members`,
      });
    for (const name of found) {
      if (family !== undefined && !/^postgres(ql)?:\/\//.test(env[name]!))
        problems.push({
          path: `databases.${i}`,
          message: `is the family ${entry}, which takes in ${name}, whose value is not a PostgreSQL URL (postgres://…); name the members, or a narrower family`,
        });
      else if (family === undefined && !env[name])
        problems.push({ path: `databases.${i}`, message: `names ${name}, which is not set in this environment; set it to the member's URL` });
      else if (names.includes(name)) problems.push({ path: `databases.${i}`, message: `names ${name} again (each member once)` });
      else names.push(name);
    }
  });
  return names;
}

/**
 * Each wave reaches a number of members in all (a count, a share rounded up, or the members it
 * names, taken out of the order); the members no wave reached make a last wave of their own.
 */
export function assignWaves(members: string[], waves: FleetWave[], problems: SpecProblem[] = []): Map<string, number> {
  const assigned = new Map<string, number>();
  const inOrder = () => members.filter((m) => !assigned.has(m));
  waves.forEach((w, i) => {
    const number = i + 1;
    if (Array.isArray(w)) {
      for (const m of w) {
        if (!members.includes(m)) problems.push({ path: `fleet.waves.${i}`, message: `names ${m}, which is not a member` });
        else if (!assigned.has(m)) assigned.set(m, number);
      }
      return;
    }
    const reach = typeof w === 'number' ? w : Math.ceil((members.length * Number(w.slice(0, -1))) / 100);
    for (const m of inOrder().slice(0, Math.max(0, reach - assigned.size))) assigned.set(m, number);
  });
  // with no waves, that is every member, in wave 1
  for (const m of inOrder()) assigned.set(m, waves.length + 1);
  // a wave that reached no member of its own (1, then "10%" of three) is no wave: numbers close up
  const used = [...new Set(assigned.values())].sort((a, b) => a - b);
  return new Map([...assigned].map(([m, w]) => [m, used.indexOf(w) + 1]));
}

/** The member's own spec: what a single-database run of it would be given. */
function memberSpec(fleet: FleetSpec, variable: string, problems: SpecProblem[]): Spec | undefined {
  const { databases: _databases, fleet: block, ...fields } = fleet;
  const override = block?.members?.[variable]?.limits;
  if (override) {
    const limits = limitsSchema.safeParse({ ...fleet.limits, ...override });
    if (!limits.success) {
      for (const issue of limits.error.issues)
        problems.push({ path: ['fleet', 'members', variable, 'limits', ...issue.path.map(String)].join('.'), message: issue.message });
      return undefined;
    }
  }
  const parsed = specSchema.safeParse({ ...fields, database: variable, limits: { ...fleet.limits, ...override } });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push({ path: `fleet.members.${variable}.${issue.path.join('.')}`, message: issue.message });
    return undefined;
  }
  return parsed.data;
}
