/**
 * Spec SQL is someone else's text: the transform's SELECT, the `where` filter and guard
 * queries are parsed with the real PostgreSQL parser (libpg-query) before anything runs
 * them, and refused unless each is exactly what its field allows — one SELECT that only
 * reads, one boolean expression that cannot close its parentheses. Problems name what
 * was found, where (character position) and what is allowed. Also records which tables
 * and functions a transform reads, for the audit record.
 */
import { hasSqlDetails, loadModule, parseSync } from 'libpg-query';
import type { GuardsSpec } from '../domain/guards';
import { secretReadProblem } from './secret-reads';

let parserLoaded: Promise<void> | undefined;

/** The parser is WebAssembly: load it once per process before the first check. */
export function loadSqlParser(): Promise<void> {
  parserLoaded ??= loadModule();
  return parserLoaded;
}

/** What a transform reads, as written in it: relations (other than `chunk` and its own CTEs) and functions. */
export interface SqlReads {
  tables: string[];
  functions: string[];
  /** Operators, by name (`+`, `@>`), for the volatility check. */
  operators?: string[];
  /** Volatile functions the spec declared with transform.allowVolatile (recorded in the run). */
  volatile?: string[];
}

/** Functions and operators a tree calls, by the names written (`random`, `pg_catalog.now`, `+`). */
export function routinesIn(tree: unknown): { functions: string[]; operators: string[] } {
  const functions = new Set<string>();
  const operators = new Set<string>();
  const names = (list: unknown) => ((list as { String?: { sval: string } }[]) ?? []).map((p) => p.String?.sval ?? '?').join('.');
  for (const [kind, node] of walk(tree)) {
    if (kind === 'FuncCall') functions.add(names(node.funcname));
    if (kind === 'A_Expr' && node.name) operators.add(names(node.name));
  }
  return { functions: [...functions].sort(), operators: [...operators].sort() };
}

export type SqlVerdict<T = object> = ({ ok: true } & T) | { ok: false; message: string };

type Node = Record<string, unknown>;

const MODIFYING: Record<string, string> = {
  InsertStmt: 'INSERT',
  UpdateStmt: 'UPDATE',
  DeleteStmt: 'DELETE',
  MergeStmt: 'MERGE',
};

function parse(sql: string, offset = 0): { ok: true; stmts: Node[] } | { ok: false; message: string } {
  try {
    const result = parseSync(sql) as unknown as { stmts?: { stmt: Node }[] };
    const stmts = (result.stmts ?? []).map((s) => s.stmt);
    // nothing binds a spec's $n but the engine's own statements, whose values (a chunk's bounds) it would read
    const param = [...walk(stmts)].find(([kind]) => kind === 'ParamRef')?.[1];
    if (param) {
      const at = Math.max(1, Number(param.location ?? 0) - offset + 1);
      return {
        ok: false,
        message: `refers to a parameter ($${String(param.number)}) at character ${at}; spec SQL has no parameters to bind: write the value itself, or read it from a table`,
      };
    }
    return { ok: true, stmts };
  } catch (err) {
    if (hasSqlDetails(err) && err.sqlDetails) {
      // cursorPosition counts from 0; PostgreSQL's own messages count characters from 1
      const at = Math.max(1, err.sqlDetails.cursorPosition - offset + 1);
      return { ok: false, message: `does not parse: ${err.sqlDetails.message.split('\n')[0]} at character ${at}` };
    }
    return { ok: false, message: `does not parse: ${(err as Error).message}` };
  }
}

/** Every node of a parse tree, depth first, with its type name. */
function* walk(value: unknown): Generator<[string, Node]> {
  if (Array.isArray(value)) {
    for (const item of value) yield* walk(item);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value as Node)) {
    if (/^[A-Z]/.test(key) && child && typeof child === 'object' && !Array.isArray(child)) yield [key, child as Node];
    yield* walk(child);
  }
}

function kindOf(stmt: Node): string {
  return Object.keys(stmt)[0] ?? 'nothing';
}

function describeKind(kind: string): string {
  return (
    MODIFYING[kind] ??
    kind
      .replace(/Stmt$/, '')
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toUpperCase()
  );
}

/** Refuses anything in a SELECT's tree that writes or locks: data-modifying CTEs, SELECT INTO, FOR UPDATE/SHARE. */
function readOnlyProblem(tree: Node): string | undefined {
  for (const [kind, node] of walk(tree)) {
    if (MODIFYING[kind]) return `contains ${MODIFYING[kind]} (a data-modifying WITH); it may only read`;
    if (kind === 'SelectStmt' && node.intoClause) return 'is SELECT … INTO, which creates a table; remove INTO';
    if (kind === 'SelectStmt' && node.lockingClause) return 'locks rows (FOR UPDATE / FOR SHARE); remove the locking clause: chunks never lock source rows';
  }
  return undefined;
}

function oneSelect(sql: string, what: string): { ok: true; select: Node } | { ok: false; message: string } {
  const parsed = parse(sql);
  if (!parsed.ok) return parsed;
  if (parsed.stmts.length !== 1) return { ok: false, message: `must be exactly one statement, ${what} (found ${parsed.stmts.length})` };
  const kind = kindOf(parsed.stmts[0]);
  if (kind !== 'SelectStmt') return { ok: false, message: `must be ${what} (found ${describeKind(kind)})` };
  const problem = readOnlyProblem(parsed.stmts[0]) ?? secretReadProblem(parsed.stmts[0]);
  if (problem) return { ok: false, message: problem };
  return { ok: true, select: parsed.stmts[0].SelectStmt as Node };
}

/** transform.sql: one SELECT that reads `chunk` and nothing but reads. */
export function checkTransformSql(sql: string): SqlVerdict<{ reads: SqlReads }> {
  const verdict = oneSelect(sql, 'a SELECT over `chunk`');
  if (!verdict.ok) return verdict;
  const ctes = new Set<string>();
  const tables = new Set<string>();
  let chunk = false;
  for (const [kind, node] of walk(verdict.select)) {
    if (kind === 'CommonTableExpr') ctes.add(String(node.ctename));
    if (kind === 'RangeVar') {
      const name = [node.schemaname, node.relname].filter(Boolean).join('.');
      if (!node.schemaname && node.relname === 'chunk') chunk = true;
      else tables.add(name);
    }
  }
  if (!chunk)
    return {
      ok: false,
      message: 'never reads `chunk`; the transform must SELECT from the relation chunk (the source rows of one chunk), e.g. SELECT c.id, … FROM chunk c',
    };
  const { functions, operators } = routinesIn(verdict.select);
  return { ok: true, reads: { tables: [...tables].filter((t) => !ctes.has(t)).sort(), functions, ...(operators.length ? { operators } : {}) } };
}

const WHERE_PREFIX = 'SELECT 1 WHERE ';

/**
 * source.where: exactly one boolean expression. Parsed as written (not inside the parentheses
 * the engine adds), so `x) OR (true` and `true); COMMIT; …` cannot break out of them.
 */
export function checkWhere(where: string): SqlVerdict<{ routines: { functions: string[]; operators: string[] } }> {
  // the newline ends a trailing -- comment, as in the statements that run it
  const parsed = parse(`${WHERE_PREFIX}${where}\n`, WHERE_PREFIX.length);
  if (!parsed.ok) return parsed;
  const problem = "must be one condition on the source rows, such as created_at >= '2024-01-01'";
  if (parsed.stmts.length !== 1) return { ok: false, message: `${problem} (found ${parsed.stmts.length} statements)` };
  const select = parsed.stmts[0].SelectStmt as Node | undefined;
  if (select && select.op !== 'SETOP_NONE') return { ok: false, message: `${problem} (found ${String(select.op).replace('SETOP_', '')})` };
  const extra = select && Object.keys(select).filter((k) => !['targetList', 'whereClause', 'limitOption', 'op'].includes(k));
  if (!select || select.op !== 'SETOP_NONE' || (extra && extra.length > 0)) {
    return {
      ok: false,
      message: `${problem} (found ${extra?.length ? extra.map((k) => k.replace(/Clause$|Count$|Offset$/, '').toUpperCase()).join(', ') : 'more than a condition'})`,
    };
  }
  const refused = readOnlyProblem(select) ?? secretReadProblem(select);
  return refused ? { ok: false, message: refused } : { ok: true, routines: routinesIn(select.whereClause) };
}

/** Guard SQL: one SELECT returning one number, and nothing but reads. */
export function checkGuardSql(sql: string): SqlVerdict {
  const verdict = oneSelect(sql, 'a SELECT returning one number');
  return verdict.ok ? { ok: true } : verdict;
}

/** validate.invariants[].sql: one SELECT whose rows are the violations, and nothing but reads. */
export function checkInvariantSql(sql: string): SqlVerdict {
  const verdict = oneSelect(sql, 'a SELECT returning the rows that break the invariant');
  return verdict.ok ? { ok: true } : verdict;
}

/** What an `after: - action: sql` statement may be: it changes data downstream, nothing else. */
const AFTER_STATEMENTS = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt', 'RefreshMatViewStmt', 'SelectStmt']);

/**
 * after[].sql: exactly one statement that writes data or refreshes a view (INSERT, UPDATE,
 * DELETE, MERGE, REFRESH MATERIALIZED VIEW, or a SELECT calling a function). Never DDL,
 * grants, roles, session settings, COPY or transaction control.
 */
export function checkAfterSql(sql: string): SqlVerdict {
  const parsed = parse(sql);
  if (!parsed.ok) return parsed;
  if (parsed.stmts.length !== 1)
    return { ok: false, message: `must be exactly one statement (found ${parsed.stmts.length}); list several as separate actions` };
  const kind = kindOf(parsed.stmts[0]);
  if (!AFTER_STATEMENTS.has(kind)) {
    return {
      ok: false,
      message: `may be INSERT, UPDATE, DELETE, MERGE, REFRESH MATERIALIZED VIEW or SELECT (found ${describeKind(kind)}); use the analyze and refresh actions for those`,
    };
  }
  const select = parsed.stmts[0].SelectStmt as Node | undefined;
  if (select?.intoClause) return { ok: false, message: 'is SELECT … INTO, which creates a table; remove INTO' };
  // the audit record is not downstream: a spec must not be able to rewrite what it ran
  const ledger = relationsIn(parsed.stmts[0]).find((r) => r.schema?.toLowerCase() === 'backfill');
  if (ledger) return { ok: false, message: `touches the ledger (backfill.${ledger.name}); after-actions may not read or change the audit record` };
  const secret = secretReadProblem(parsed.stmts[0]);
  return secret ? { ok: false, message: secret } : { ok: true };
}

/** Every relation a tree names, wherever it sits (a statement's own target is a bare RangeVar, not a wrapped node). */
function relationsIn(value: unknown, found: { schema?: string; name: string }[] = []): { schema?: string; name: string }[] {
  if (Array.isArray(value)) {
    for (const item of value) relationsIn(item, found);
  } else if (value && typeof value === 'object') {
    const node = value as Node;
    if (typeof node.relname === 'string') found.push({ schema: typeof node.schemaname === 'string' ? node.schemaname : undefined, name: node.relname });
    for (const child of Object.values(node)) relationsIn(child, found);
  }
  return found;
}

/** Each guard's SQL with the spec field it comes from. */
export function guardSql(guards: GuardsSpec | undefined): [string, string][] {
  return [
    ...(guards?.probeMs ? [['limits.guards.probeMs.sql', guards.probeMs.sql] as [string, string]] : []),
    ...(guards?.custom ?? []).map((g, i) => [`limits.guards.custom.${i}.sql`, g.sql] as [string, string]),
  ];
}
