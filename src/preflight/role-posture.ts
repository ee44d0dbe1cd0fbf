/**
 * Who the connection is, and what that lets a spec do. A superuser, or a role with BYPASSRLS,
 * runs spec SQL with powers no backfill needs: `plan` and `start` say so, and with
 * BACKFILL_REQUIRE_LEAST_PRIVILEGE=1 (the compose worker sets it) they and the worker's
 * registration refuse. Row-level security is the other side: a source or target whose
 * policies apply to this role shows it a filtered table, and a run over it would call a
 * partial backfill complete; that is refused for every role.
 */
import type pg from 'pg';
import type { SpecProblem } from '../specs/errors';
import type { ResolvedSpec } from '../specs/resolve';
import { quoteTable } from '../db/sql';

export interface RolePosture {
  role: string;
  superuser: boolean;
  bypassRls: boolean;
}

type Queryable = Pick<pg.PoolClient, 'query'>;

export async function rolePosture(db: Queryable): Promise<RolePosture> {
  const { rows } = await db.query<{ role: string; superuser: boolean; bypass: boolean }>(
    'SELECT current_user AS role, rolsuper AS superuser, rolbypassrls AS bypass FROM pg_roles WHERE rolname = current_user',
  );
  return { role: rows[0].role, superuser: rows[0].superuser, bypassRls: rows[0].bypass };
}

/** What is too much about the role, in words, or undefined for a role with no such power. */
export function excessPrivilege(posture: RolePosture): string | undefined {
  // a superuser bypasses row-level security whatever its BYPASSRLS says
  const power = posture.superuser ? 'a superuser' : posture.bypassRls ? 'a role that bypasses row-level security (BYPASSRLS)' : undefined;
  if (!power) return undefined;
  return (
    `connected as ${posture.role}, ${power}: the spec's SQL would run with powers no backfill needs; ` +
    'run plan, start and the workers as a least-privilege role (docs/security.md, "A least-privilege role for workers")'
  );
}

/** The plan-time line for a privileged role: a warning, or (BACKFILL_REQUIRE_LEAST_PRIVILEGE=1) a refusal. */
export function privilegeProblem(posture: RolePosture, required: boolean): SpecProblem | undefined {
  const excess = excessPrivilege(posture);
  if (!excess || !required) return undefined;
  return { path: 'database', message: `${excess}; BACKFILL_REQUIRE_LEAST_PRIVILEGE=1 refuses it` };
}

/**
 * The source and target relations (a partitioned table's leaves included: `native`
 * partitions read them directly) whose row-level security applies to this role.
 */
export async function rowSecurityProblems(db: Queryable, spec: Pick<ResolvedSpec, 'source' | 'target'>, role: string): Promise<SpecProblem[]> {
  const problems: SpecProblem[] = [];
  for (const [path, table] of [
    ['source.table', spec.source.table],
    ['target.table', spec.target.table],
  ] as const) {
    const { rows } = await db.query<{ relation: string; policies: string | null }>(
      // pg_partition_tree lists nothing for a table that is not partitioned: the relation itself comes first
      `WITH tree AS (SELECT $1::regclass AS relid, 0 AS level UNION SELECT relid, level FROM pg_partition_tree($1::regclass))
       SELECT t.relid::regclass::text AS relation,
              (SELECT string_agg(polname, ', ' ORDER BY polname) FROM pg_policy WHERE polrelid = t.relid) AS policies
         FROM tree t
        WHERE row_security_active(t.relid)
        ORDER BY t.level, 1`,
      [quoteTable(table)],
    );
    if (rows.length === 0) continue;
    const named = rows.map((r) => `${r.relation}${r.policies ? ` (policies ${r.policies})` : ' (no policy: every row hidden)'}`).join(', ');
    const effect =
      path === 'source.table'
        ? 'the run would read only the rows its policies show and call the backfill complete'
        : 'the run would write, reconcile and verify only the rows its policies show';
    problems.push({
      path,
      message:
        `${table}: row-level security applies to ${role} on ${named}; ${effect}. ` +
        'Run as a role the policies do not filter (the table owner, without FORCE ROW LEVEL SECURITY), or give it a policy that shows every row',
    });
  }
  return problems;
}
