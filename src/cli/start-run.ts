/**
 * Starting a run: load and check the spec, plan it, refuse a second active run of the
 * same spec, then start the run workflow. Nothing is written before every check has
 * passed. Shared by `backfill start`, `backfill demo` and the tests.
 */
import os from 'node:os';
import path from 'node:path';
import { Client, WorkflowFailedError, type WorkflowHandle, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type pg from 'pg';
import { createPool, databaseUrlFrom } from '../db/pool';
import { readSourceFacts } from '../db/source-facts';
import { chunkAccessWarnings } from '../engine/chunk-access';
import { inspectSpec } from '../engine/inspect';
import { findActiveRun, getRun } from '../ledger/runs';
import { planPartitions, PlanError } from '../planner/partitions';
import { FailureType } from '../shared/failures';
import { RUN_ID_PATTERN, runWorkflowId } from '../shared/ids';
import type { PlannedPartition } from '../shared/types';
import { SpecError } from '../spec/errors';
import { loadSpecFile, type LoadedSpec } from '../spec/load';
import type { RunResult, RunWorkflowInput } from '../workflows/backfill-run';
import { BackfillName, BackfillRunId, BackfillStatus, SEARCH_ATTRIBUTES } from '../workflows/search-attributes';
import { ledgerExists } from './ledger-access';
import { UsageError } from './output';

export interface CheckedSpec {
  loaded: LoadedSpec;
  partitions: PlannedPartition[];
  /** Nothing wrong, but likely slow or surprising: shown by plan and start, never blocking. */
  warnings: string[];
}

/** Everything `plan` shows and `start` relies on; throws SpecError (exit 2) on any problem. */
export async function checkSpec(specFile: string, pool?: pg.Pool): Promise<CheckedSpec> {
  const loaded = loadSpecFile(specFile);
  const { spec } = loaded;
  let url: string;
  try {
    url = databaseUrlFrom(spec.database);
  } catch (err) {
    throw new SpecError(specFile, [{ path: 'database', message: (err as Error).message.replace(/^environment variable \S+ \(named by the spec's database field\) /, `names ${spec.database}, which `) }]);
  }
  const own = pool ? undefined : createPool(url, { max: 2, applicationName: 'backfill-cli' });
  const db = pool ?? own!;
  try {
    const inspected = await inspectSpec(db, spec, loaded.transform).catch((err: Error) => {
      throw new SpecError(specFile, [{ path: 'database', message: `cannot be reached through ${spec.database}: ${err.message}` }]);
    });
    if (!inspected.ok) throw new SpecError(specFile, inspected.problems);
    let partitions: PlannedPartition[];
    try {
      partitions = planPartitions(spec.partition, await readSourceFacts(db, spec));
    } catch (err) {
      if (err instanceof PlanError) throw new SpecError(specFile, [{ path: err.field, message: err.message }]);
      throw err;
    }
    return { loaded, partitions, warnings: await chunkAccessWarnings(db, spec, inspected.shape, partitions) };
  } finally {
    await own?.end();
  }
}

export interface StartRunOptions {
  specFile: string;
  client: Client;
  taskQueue: string;
  runId?: string;
  actor?: string;
  /** Test knobs, passed through to the workflow. */
  maxHistoryEvents?: number;
  partitionHeartbeatTimeoutMs?: number;
  reconcileIntervalMs?: number;
}

export interface StartedRun {
  runId: string;
  workflowId: string;
  name: string;
  partitions: number;
  warnings: string[];
  handle: WorkflowHandleWithFirstExecutionRunId;
}

export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 13).toLowerCase();
  return `${stamp}-${Math.random().toString(16).slice(2, 6)}`;
}

export function defaultActor(): string {
  return process.env.BACKFILL_ACTOR || os.userInfo().username;
}

export async function startRun(options: StartRunOptions): Promise<StartedRun> {
  const runId = options.runId ?? newRunId();
  if (!RUN_ID_PATTERN.test(runId)) throw new UsageError(`--run-id must match ${RUN_ID_PATTERN.source} (got "${runId}")`);
  const { loaded, partitions, warnings } = await checkSpec(options.specFile);
  const { spec } = loaded;
  const pool = createPool(databaseUrlFrom(spec.database), { max: 2, applicationName: 'backfill-cli' });
  try {
    if (await ledgerExists(pool)) {
      if (await getRun(pool, runId)) throw new UsageError(`run id ${runId} is already used in this ledger; pick another --run-id or omit it`);
      const active = await findActiveRun(pool, spec.name);
      if (active) throw alreadyActive(spec.name, active.run_id, active.status, active.started_by, active.created_at);
    }
    await ensureSearchAttributes(options.client);
    const workflowId = runWorkflowId(spec.name, runId);
    const input: RunWorkflowInput = {
      runId,
      spec,
      specFile: path.resolve(options.specFile),
      specHash: loaded.specHash,
      transform: loaded.transform,
      startedBy: options.actor ?? defaultActor(),
      maxHistoryEvents: options.maxHistoryEvents,
      partitionHeartbeatTimeoutMs: options.partitionHeartbeatTimeoutMs,
      reconcileIntervalMs: options.reconcileIntervalMs,
    };
    const handle = await options.client.workflow.start('backfillRunWorkflow', {
      workflowId,
      taskQueue: options.taskQueue,
      args: [input],
      typedSearchAttributes: [
        { key: BackfillName, value: spec.name },
        { key: BackfillRunId, value: runId },
        { key: BackfillStatus, value: 'pending' },
      ],
      memo: { database: spec.database },
      // one line, at most 200 bytes in the UI: name, reason, scope
      staticSummary: oneLine(`${spec.name}: ${spec.reason} — ${spec.source.table}${spec.source.where ? ` where ${spec.source.where}` : ''}, ${partitions.length} partitions`),
      staticDetails: [
        `**${spec.name}** run \`${runId}\` — ${spec.reason}`,
        '',
        `- source \`${spec.source.table}\`${spec.source.where ? ` where \`${spec.source.where}\`` : ''}, key \`${spec.source.key}\``,
        `- ${partitions.length} partitions by ${spec.partition.by} on \`${spec.partition.column}\``,
        `- transform \`${spec.transform.name}@${spec.transform.version}\` (${loaded.transform.kind}, code ${loaded.transform.codeHash.slice(0, 12)})`,
        `- target \`${spec.target.table}\` (${spec.target.mode}, key ${spec.target.key.join(', ')})`,
        `- spec hash \`${loaded.specHash.slice(0, 12)}\``,
        '',
        '```json',
        JSON.stringify(spec, null, 2).slice(0, 15_000),
        '```',
      ].join('\n'),
    });
    await waitForRegistration(pool, handle, runId);
    return { runId, workflowId, name: spec.name, partitions: partitions.length, warnings, handle };
  } finally {
    await pool.end();
  }
}

/** Returns once the run is in the ledger; turns a refused registration (lost race, bad spec) into the operator's error. */
async function waitForRegistration(pool: pg.Pool, handle: WorkflowHandle, runId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if ((await ledgerExists(pool)) && (await getRun(pool, runId))) return;
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') {
      try {
        await handle.result();
      } catch (err) {
        const cause = (err instanceof WorkflowFailedError ? (err.cause?.cause ?? err.cause) : undefined) as { type?: string; message: string } | undefined;
        if (cause && (cause.type === FailureType.RunAlreadyActive || cause.type === FailureType.SpecInvalid)) throw new UsageError(cause.message);
        throw err;
      }
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${runId} did not register within 60s; is a worker running on the task queue? (backfill worker)`);
}

function alreadyActive(name: string, runId: string, status: string, by: string, at: Date): UsageError {
  return new UsageError(
    `backfill ${name} already has an active run ${runId} (${status}, started by ${by} at ${at.toISOString()}); ` +
      `wait for it, or cancel it with: backfill cancel ${runId} --reason "…"`,
  );
}

/** Registers the run workflow's search attributes on namespaces that lack them (the dev server has them already). */
export async function ensureSearchAttributes(client: Client): Promise<void> {
  const namespace = client.options.namespace;
  const existing = await client.connection.operatorService.listSearchAttributes({ namespace });
  const have = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = SEARCH_ATTRIBUTES.filter((k) => !have.has(k.name));
  if (missing.length === 0) return;
  const { IndexedValueType } = temporal.api.enums.v1;
  const types: Record<string, temporal.api.enums.v1.IndexedValueType> = {
    [SearchAttributeType.KEYWORD]: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    [SearchAttributeType.INT]: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  };
  await client.connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((k) => [k.name, types[k.type]])),
  });
}

export async function waitForResult(handle: WorkflowHandle): Promise<RunResult> {
  return (await handle.result()) as RunResult;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return Buffer.byteLength(flat) <= 200 ? flat : `${Buffer.from(flat).subarray(0, 196).toString().replace(/\uFFFD+$/, '')}…`;
}
