import { temporalClient } from '../../client';
import { temporalConfig, webUiUrl } from '../../config';
import { openLedgerPool } from '../ledger-access';
import { emit, type OutputOptions } from '../output';
import { startRun } from '../start-run';
import { renderStatus, statusReport } from '../status';
import { watchRun } from '../watch';
import { getRun } from '../../ledger/runs';
import { loadSpecFile } from '../../spec/load';

export async function startCommand(specFile: string, opts: OutputOptions & { runId?: string; wait?: boolean; actor?: string }): Promise<void> {
  const config = temporalConfig();
  // a bad spec is bad input (exit 2) whether or not Temporal is up: read it before connecting
  const { spec } = loadSpecFile(specFile);
  const { client, close } = await temporalClient();
  try {
    const started = await startRun({ specFile, client, taskQueue: config.taskQueue, runId: opts.runId, actor: opts.actor });
    const ui = webUiUrl(config.address, config.namespace, started.workflowId);
    const info = { runId: started.runId, name: started.name, workflowId: started.workflowId, partitions: started.partitions, webUi: ui, warnings: started.warnings };
    if (opts.output !== 'json') for (const w of started.warnings) process.stderr.write(`warning: ${w}\n`);
    if (!opts.wait) {
      emit(opts, info, (i) => `Started ${i.name}/${i.runId}: ${i.partitions} partitions\n  workflow: ${i.workflowId}\n  Web UI:   ${i.webUi}\n  follow:   backfill status ${i.runId}`);
      return;
    }
    if (opts.output !== 'json') process.stderr.write(`Started ${info.name}/${info.runId}: ${info.partitions} partitions\nWeb UI: ${ui}\n`);
    const pool = openLedgerPool(spec.database);
    try {
      const status = await watchRun(pool, started.runId);
      const report = await statusReport(pool, (await getRun(pool, started.runId))!);
      emit(opts, report, renderStatus);
      if (status !== 'succeeded') process.exitCode = 1;
    } finally {
      await pool.end();
    }
  } finally {
    await close();
  }
}
