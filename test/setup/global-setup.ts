/**
 * Starts the real services once for the whole test run: a Temporal dev server (headless,
 * in memory, with the project's search attributes) and PostgreSQL (DATABASE_URL, or an
 * embedded server in a temporary world-writable directory). Test files get their own
 * databases from test/helpers/db.ts.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPostgres } from '../../src/dev/postgres';
import { TASK_HANDOFF_SPEED } from '../../src/dev/services';
import { ensureTemporalCli } from '../../src/dev/temporal-cli';
import { ensureTemporalServer } from '../../src/dev/temporal-server-build';
import { ensureTemporalUi } from '../../src/dev/temporal-ui';
import { startDevServer } from '../../src/dev/temporal-server';
import { writeWorkflowBundles } from '../helpers/workflow-bundles';

export default async function globalSetup(): Promise<void> {
  const say = (line: string) => process.stderr.write(`[test setup] ${line}\n`);
  const cliPath = await ensureTemporalCli(say);
  // the production server's tier (test/production-*.test.ts) and the Web UI compose deploys: built once per machine, minutes the first time
  await Promise.all([ensureTemporalServer(say), ensureTemporalUi(say)]).catch((err: Error) => {
    if (process.env.CI) throw err;
    process.env.BACKFILL_TEST_NO_TEMPORAL_SERVER = err.message;
    say(`the production-server tests will be skipped: ${err.message}`);
  });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'backfill-test-'));
  chmodSync(tmp, 0o777);
  const bundles = writeWorkflowBundles(tmp);
  bundles.catch(() => undefined); // awaited below; a server failing first must not leave it unhandled
  // the task hand-offs of the dev server `demo` starts: runs in the tests move as fast as users' do
  const server = await startDevServer({ cliPath, uiPort: 'any', logLevel: 'error', extraArgs: TASK_HANDOFF_SPEED });
  // two files run at once (test/setup/take-turns.ts), each with its pools, workers and spawned CLIs
  const postgres = await startPostgres({ dataDir: path.join(tmp, 'pg'), port: 'any', say, settings: { max_connections: '300' } });
  await bundles;
  say(`Temporal ${server.address} (UI ${server.uiUrl}), PostgreSQL ${postgres.embedded ? 'embedded' : 'from DATABASE_URL'}`);

  process.env.BACKFILL_TEST_TEMPORAL_ADDRESS = server.address;
  process.env.BACKFILL_TEST_TEMPORAL_UI = server.uiUrl;
  process.env.BACKFILL_TEST_PG_URL = postgres.url;
  process.env.TEMPORAL_CLI = cliPath;
  writeFileSync(path.join(tmp, 'services.json'), JSON.stringify({ address: server.address, pg: postgres.url }));
  (globalThis as Record<string, unknown>).__backfillServices = { server, postgres, tmp };
}
