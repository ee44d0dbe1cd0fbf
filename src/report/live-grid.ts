/**
 * `backfill report <run> --serve`: the run's partitions as a live grid on this machine only
 * (127.0.0.1): one page (live-grid-page.ts) that reads `state.json` every second and colours each
 * partition by its state, each cell linking to its partition's workflow in the Temporal Web UI,
 * a failure's message and key range on hover, the run's rows/s and guard readings over the last
 * minutes. Reads the ledger; writes nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { liveGridPage } from './live-grid-page';
import { liveState } from './live-state';

export interface LiveGrid {
  url: string;
  close(): Promise<void>;
}

export interface LiveGridOptions {
  /** 0: any free port. */
  port: number;
  webUi: (workflowId: string) => string;
  /** Said once per failed read of the ledger (the page keeps its last picture and says it is stale). */
  onError?: (err: Error) => void;
}

export async function serveLiveGrid(pool: pg.Pool, run: { runId: string; name: string }, options: LiveGridOptions): Promise<LiveGrid> {
  const page = liveGridPage(run);
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') return void res.writeHead(405, { Allow: 'GET' }).end();
    if (path === '/') return void res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(page);
    if (path === '/state.json') {
      liveState(pool, run.runId, options.webUi).then(
        (state) => res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(JSON.stringify(state)),
        (err: Error) => {
          options.onError?.(err);
          res.writeHead(503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: `the ledger could not be read: ${err.message}` }));
        },
      );
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found: the grid is at /\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // this machine only: the page shows the run's partitions and errors to whoever can reach it
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
