/**
 * What is wrong with a change of limits before it is sent (`set-limits`): its values against
 * their bounds, and new guards' SQL through the PostgreSQL parser, as for a spec. The run
 * workflow's update validator says the same; asking here first answers without a round trip.
 */
import { limitsChangeProblem } from '../domain/limits';
import type { LimitsChange } from '../domain/types';
import { checkGuardSql, guardSql, loadSqlParser } from '../preflight/spec-sql';

/** The first problem, or undefined; `source` names where the guards came from (`--guards <file>`). */
export async function limitsChangeRefusal(change: LimitsChange, source: string): Promise<string | undefined> {
  const problem = limitsChangeProblem(change);
  if (problem || !change.guards) return problem;
  await loadSqlParser();
  for (const [path, sql] of guardSql(change.guards)) {
    const verdict = checkGuardSql(sql);
    if (!verdict.ok) return `${source}: ${path.replace(/^limits\.guards\./, '')} ${verdict.message}`;
  }
  return undefined;
}
