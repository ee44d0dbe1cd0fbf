/**
 * How runs and transforms are named in every message, log line, ledger event and UI text,
 * so an operator can grep for one spelling. Workflow-safe.
 */

/** `orders-usd-fix/20261130-0245-447f` */
export function runLabel(name: string, runId: string): string {
  return `${name}/${runId}`;
}

export interface TransformIdentity {
  name: string;
  version: number;
  kind?: 'sql' | 'module';
  codeHash?: string;
}

/** `orders-usd@2`, or with the kind and code: `orders-usd@2 (sql, code 1a2b3c4d5e6f)` */
export function transformLabel(t: TransformIdentity): string {
  const ref = `${t.name}@${t.version}`;
  if (!t.kind || !t.codeHash) return ref;
  return `${ref} (${t.kind}, code ${shortHash(t.codeHash)})`;
}

export function shortHash(hash: string): string {
  return hash.slice(0, 12);
}

export interface ActiveRunFacts {
  runId: string;
  status: string;
  startedBy?: string;
  createdAt?: Date | string;
}

/** The one answer to "start (or retry) while another run of this spec is active". */
export function alreadyActiveMessage(name: string, active: ActiveRunFacts): string {
  const since =
    active.startedBy && active.createdAt
      ? `, started by ${active.startedBy} at ${typeof active.createdAt === 'string' ? active.createdAt : active.createdAt.toISOString()}`
      : '';
  return (
    `backfill ${name} already has an active run ${active.runId} (${active.status}${since}); ` +
    `wait for it, or cancel it with: backfill cancel ${active.runId} --reason "…"`
  );
}

/** The run that already holds a run id, as the ledger records it. */
export interface RunIdHolder {
  name: string;
  workflowId: string;
  status: string;
  startedBy: string;
  createdAt: Date | string;
  specHash: string;
}

/**
 * The one answer to "this run id is taken": says which run holds it, so a collision, a reused
 * --run-id and a second start of one workflow can be told apart from the message alone.
 */
export function runIdTakenMessage(runId: string, holder: RunIdHolder, refused?: { name: string; specHash: string }): string {
  const at = typeof holder.createdAt === 'string' ? holder.createdAt : holder.createdAt.toISOString();
  const held =
    `run id ${runId} is already taken in this ledger by a run of ${holder.name} ` +
    `(workflow ${holder.workflowId}, ${holder.status}, started by ${holder.startedBy} at ${at}, spec hash ${shortHash(holder.specHash)})`;
  const what = refused ? `; this run of ${refused.name} (spec hash ${shortHash(refused.specHash)}) was not registered` : '';
  return `${held}${what}: a run id names one run only; start again without --run-id to get a new one`;
}

/** Another run (of any name) is writing the same target table. */
export function targetBusyMessage(target: string, active: ActiveRunFacts & { name: string }): string {
  return (
    `${target} is the target of active run ${active.runId} (${active.name}, ${active.status}); two runs on one target would mix their results chunk by chunk: ` +
    `wait for it, or cancel it with: backfill cancel ${active.runId} --reason "…"`
  );
}
