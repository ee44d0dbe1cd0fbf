/** `backfill status`: the ledger's view of one run (or, with --all, of recent runs). */
import { Command } from 'commander';
import { endedWorkflow } from '../../operations/control';
import { runWorkerGap, type WorkerGap } from '../../operations/database-workers';
import { listRunSummaries, statusReport } from '../../operations/status';
import type { RunRow } from '../../ledger/runs';
import { ACTIVE_RUN_STATUSES } from '../../shared/statuses';
import { connectClient } from '../../temporal/connect';
import { temporalConfig } from '../../temporal/config';
import { databaseOption, outputOption } from '../options';
import { emit, UsageError, type OutputOptions } from '../output';
import { renderRunList } from '../render/run-list';
import { renderStatus } from '../render/status';
import { withLedger } from '../session';
import { runLink, runListLink, withLinks } from '../web-ui-links';

async function status(ref: string | undefined, opts: OutputOptions & { database: string; all?: boolean }): Promise<void> {
  if (!ref && !opts.all) throw new UsageError('name a run (backfill status <run>) or list runs with: backfill list');
  await withLedger(opts.database, async ({ pool, findRun }) => {
    if (opts.all || !ref) return emit(opts, withLinks(await listRunSummaries(pool)), (list) => renderRunList(list, runListLink()));
    const run = await findRun(ref);
    const report = { ...(await statusReport(pool, run)), webUi: runLink(run.workflow_id) };
    const temporal = ACTIVE_RUN_STATUSES.includes(run.status) ? await askTemporal(run) : {};
    emit(opts, { ...report, ...temporal }, renderStatus);
  });
}

/**
 * An active run whose workflow has ended is stuck for good, and one whose database no worker
 * serves waits: the ledger can know neither. Ask Temporal, briefly; unreachable, both are left
 * out: status is the ledger's view.
 */
async function askTemporal(run: RunRow): Promise<{ workflowEnded?: { status: string; why: string }; waitingForWorker?: WorkerGap }> {
  const connected = await connectClient(temporalConfig(), { connectTimeout: '2s' }).catch(() => undefined);
  if (!connected) return {};
  try {
    const ended = await endedWorkflow(connected.client, run);
    if (ended) return { workflowEnded: ended };
    const gap = await runWorkerGap(connected.client.workflow, run.workflow_id).catch(() => undefined);
    return gap ? { waitingForWorker: gap } : {};
  } finally {
    await connected.close();
  }
}

export function command(): Command {
  return new Command('status')
    .description("a run's partitions, rows, failures and recent events, from the ledger")
    .argument('[run]', 'run id or workflow id (omit with --all)')
    .option('--all', 'list recent runs')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(status);
}
