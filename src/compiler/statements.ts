/**
 * Builds every SQL statement a chunk runs, from the spec and the run's shape. Pure and
 * deterministic, so it is unit-tested and the same on every worker.
 *
 * A chunk is the keyset range (cursor, hi] of source.key inside one partition — or of
 * (partition column, key…) when the run's shape says so; how chunks walk, and what a cursor
 * holds, is keyset.ts. The
 * transform never sees bounds: it reads the relation `chunk`, which the engine defines
 * as a CTE over exactly those rows. Its output goes to a per-session temp table typed
 * like the target, and the write compares like with like, so a row whose stored value
 * already equals the computed one (after the target's own rounding) is never rewritten.
 *
 * The statements come in families, each in its own module over one RunSql (run-sql.ts):
 * walking and filling chunks (chunk-statements.ts), writing them (write-statements.ts),
 * checking without writing (check-statements.ts), and the plan's scope (scope-statements.ts).
 */
import type { ResolvedSpec } from '../specs/resolve';
import { checkStatements } from './check-statements';
import { chunkStatements } from './chunk-statements';
import { runSql } from './run-sql';
import { scopeStatements } from './scope-statements';
import type { RunShape } from './shape';
import { writeStatements } from './write-statements';
import type { CompiledRun } from './compiled-run';

export { stripTrailingSemicolons } from './run-sql';
export { RECONCILE_SAMPLE } from './write-statements';

export type { CompiledRun, Statement } from './compiled-run';

export function compileRun(spec: ResolvedSpec, shape: RunShape): CompiledRun {
  const r = runSql(spec, shape);
  return { ...chunkStatements(r), ...writeStatements(r), ...checkStatements(r), ...scopeStatements(r) };
}
