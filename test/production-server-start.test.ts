/**
 * The production server and the Web UI server the production tier starts, on a busy machine: a
 * port found free can be taken by another process before the server binds it. Each says so in
 * its log and exits; the start tries again on fresh ports instead of failing the tier.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Connection } from '@temporalio/client';
import { freePort } from '../src/dev/free-port';
import { bringUpProductionTemporal, type ProductionServer } from '../src/dev/temporal-production';
import { ensureTemporalUi, startTemporalUi, type RunningUi } from '../src/dev/temporal-ui';
import { describeWithServer } from './helpers/production';
import { firstChoiceTaken, takenPort } from './helpers/taken-port';
import { uniqueName } from './helpers/unique';

describeWithServer('a port taken between its choice and the bind', () => {
  const databases = { main: uniqueName('temporal'), visibility: uniqueName('temporal_visibility') };
  let server: ProductionServer | undefined;
  afterAll(async () => {
    await server?.stop();
    const admin = new pg.Client({ connectionString: process.env.BACKFILL_TEST_PG_URL });
    await admin.connect();
    for (const db of Object.values(databases)) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
  });

  test('the production server starts again on other ports, and its frontend answers', async () => {
    const taken = await takenPort();
    const said: string[] = [];
    const { choosePort, chosen } = firstChoiceTaken(taken.port, freePort);
    try {
      server = await bringUpProductionTemporal({
        pgUrl: process.env.BACKFILL_TEST_PG_URL!,
        databases,
        root: mkdtempSync(path.join(os.tmpdir(), 'backfill-temporal-')),
        say: (line) => said.push(line),
        choosePort,
      });
    } finally {
      await taken.release();
    }
    expect(said.join('\n')).toMatch(/Temporal: the Temporal server at 127\.0\.0\.1:\d+ exited.*address already in use.*; starting it again on other ports/);
    // the first try chose seven ports (four services' gRPC, the frontend's HTTP, metrics, pprof)
    expect(chosen[0]).toBe(taken.port);
    expect(server.address).toBe(`127.0.0.1:${chosen[7]}`);
    const connection = await Connection.connect({ address: server.address });
    try {
      const info = await connection.workflowService.getSystemInfo({});
      expect(info.serverVersion).toBeTruthy();
    } finally {
      await connection.close();
    }
  }, 240_000);

  test('the Web UI server starts again on another port and serves its page', async () => {
    const taken = await takenPort();
    const said: string[] = [];
    const { choosePort, chosen } = firstChoiceTaken(taken.port, freePort);
    let ui: RunningUi | undefined;
    try {
      ui = await startTemporalUi(await ensureTemporalUi(), server!.address, mkdtempSync(path.join(os.tmpdir(), 'backfill-ui-')), {
        say: (line) => said.push(line),
        choosePort,
      });
      expect(ui.url).toBe(`http://127.0.0.1:${chosen[1]}`);
      expect((await fetch(ui.url)).ok).toBe(true);
      expect(said.join('\n')).toMatch(
        new RegExp(`exited \\(\\d+\\) while starting on http://127\\.0\\.0\\.1:${taken.port}: .*; starting it again on another port`),
      );
    } finally {
      await ui?.stop();
      await taken.release();
    }
  }, 120_000);
});
