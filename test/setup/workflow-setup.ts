/**
 * The workflow tier's services: a Temporal dev server only (headless, in memory, with the
 * project's search attributes). Its tests run the real workflow code against a model ledger
 * held in the test process, so no PostgreSQL is started.
 */
import { ensureTemporalCli } from '../../src/dev/temporal-cli';
import { startDevServer } from '../../src/dev/temporal-server';

export default async function workflowSetup(): Promise<void> {
  const say = (line: string) => process.stderr.write(`[workflow setup] ${line}\n`);
  const cliPath = await ensureTemporalCli(say);
  const server = await startDevServer({ cliPath, uiPort: null, logLevel: 'error' });
  process.env.BACKFILL_WORKFLOW_TEMPORAL_ADDRESS = server.address;
  (globalThis as Record<string, unknown>).__backfillWorkflowServer = server;
}
