/**
 * The demo's moving parts on embedded defaults: Temporal and PostgreSQL (started if
 * absent), the demo dataset, and a worker started exactly as `backfill worker` starts
 * one. `backfill demo` (src/cli/commands/demo.ts) runs the backfill on top of this and
 * renders it; `stop()` takes everything down again, in reverse order.
 */
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { createPool } from '../db/pool';
import { findActiveRun } from '../ledger/runs';
import { temporalConfig, webUiUrl, type TemporalConfig } from '../temporal/config';
import { connectClient } from '../temporal/connect';
import { ensureDemoData } from './demo-data';
import { DEMO_ROLE, ensureDemoRole, grantDemoTables } from './demo-role';
import { projectRoot } from './paths';
import { ensureDatabase } from './postgres';
import { startLocalServices } from './services';

export interface Demo {
  config: TemporalConfig;
  client: Client;
  /** The demo database (also exported as DEMO_DATABASE_URL, which the demo spec names). */
  pool: pg.Pool;
  databaseUrl: string;
  specFile: string;
  uiUrl(workflowId?: string): string;
  stop(): Promise<void>;
}

export async function prepareDemo(say: (line: string) => void): Promise<Demo> {
  // the demo's data is made once both servers are up (services.ts says why not sooner)
  const services = await startLocalServices(say, async (postgres, alsoStop) => {
    const ownerUrl = await ensureDatabase(postgres.url, 'backfill_demo');
    const owner = createPool(ownerUrl, { max: 2, applicationName: 'backfill-demo-setup' });
    alsoStop(() => owner.end());
    // an embedded server is the demo's own: its runs connect as the least-privilege role that
    // docs/security.md recommends. A DATABASE_URL is the user's choice of role, used as given.
    // The role first: the worker needs no more to start, and starts while the data is made.
    const url = postgres.embedded ? await ensureDemoRole(owner, ownerUrl) : ownerUrl;
    const data = (async () => {
      const made = await ensureDemoData(owner, say);
      say(`Demo data: ${made.rows.toLocaleString('en-US')} orders in demo.orders${made.created ? '' : ' (already there)'}`);
      if (!postgres.embedded) return;
      await grantDemoTables(owner);
      say(`Demo role: runs connect as ${DEMO_ROLE}, with only the grants a backfill needs (docs/security.md)`);
    })();
    data.catch(() => undefined); // awaited by prepareDemo, after the worker's start
    return { url, data };
  });
  const stops: (() => Promise<unknown>)[] = [services.stop];
  try {
    const config = { ...temporalConfig(), address: services.temporalAddress };
    const { url: databaseUrl, data } = services.prepared;
    process.env.DEMO_DATABASE_URL = databaseUrl;
    const pool = createPool(databaseUrl, { max: 4, applicationName: 'backfill-demo' });
    stops.push(() => pool.end());

    process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'warn';
    // the worker runtime loads with the demo, not with every command that imports this module
    const { startWorker } = await import('../worker');
    const worker = await startWorker({ temporal: config, trust: { databases: ['DEMO_DATABASE_URL'] } });
    stops.push(worker.stop);
    const { client, close } = await connectClient(config);
    stops.push(close);
    await data;
    return {
      config,
      client,
      pool,
      databaseUrl,
      specFile: path.join(projectRoot(), 'examples', 'orders-usd.yaml'),
      uiUrl: (workflowId) => webUiUrl(config.address, config.namespace, workflowId, { ...process.env, TEMPORAL_UI_URL: services.uiUrl }),
      stop: () => stopAll(stops),
    };
  } catch (err) {
    await stopAll(stops);
    throw err;
  }
}

async function stopAll(stops: (() => Promise<unknown>)[]): Promise<void> {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
}

/**
 * A demo stopped mid-run (Ctrl-C, a killed terminal) leaves its run active, and a new run of
 * the same spec would be refused. Its workflow lives on in the dev server's file, and the
 * worker this demo started picks it up: follow that run instead of starting another.
 */
export async function interruptedDemoRun(
  pool: pg.Pool,
  client: Client,
  name: string,
): Promise<{ runId: string; name: string; workflowId: string } | undefined> {
  const active = await findActiveRun(pool, name).catch(() => undefined); // a first demo has no ledger yet
  if (!active) return undefined;
  const running = await client.workflow
    .getHandle(active.workflow_id)
    .describe()
    .then((d) => d.status.name === 'RUNNING')
    .catch(() => false);
  return running ? { runId: active.run_id, name, workflowId: active.workflow_id } : undefined;
}
