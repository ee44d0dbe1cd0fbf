/**
 * An embedded PostgreSQL on a busy machine: a port chosen free can be taken before the server
 * binds it. On 'any' port the start tries the next one; on a port given it fails, naming the
 * port and PostgreSQL's own reason (the package itself rejects with nothing).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runCli } from './helpers/cli';
import { startServerProcess } from './helpers/server-process';

interface Clash {
  taken: number;
  fixedError: string | null;
  said: string[];
  chosen: number[];
  port: number;
  listening: number;
}

test('a taken port: fails naming it and why when given, starts on the next when any port will do', async () => {
  const clash = await startServerProcess<Clash>(path.join(__dirname, 'helpers', 'postgres-port-clash.ts'));
  try {
    const { taken, fixedError, said, chosen, port, listening } = clash.value;
    expect(fixedError).toMatch(new RegExp(`exited while starting on port ${taken}: .*[Aa]ddress already in use`));
    expect(chosen).toEqual([taken, port]);
    expect(listening).toBe(port);
    expect(said.join('\n')).toMatch(new RegExp(`on port ${taken}: .*; starting it again on another port`));
  } finally {
    await clash.stop();
  }
});

test('demo with BACKFILL_PG_PORT held by another process: says so and what to do', async () => {
  const holder = net.createServer((c) => c.destroy());
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const taken = (holder.address() as net.AddressInfo).port;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'backfill-demo-port-'));
  chmodSync(dataDir, 0o777);
  try {
    // the suite's Temporal answers at TEMPORAL_ADDRESS, so the demo starts only its PostgreSQL
    const demo = await runCli(['demo', '--exit'], { BACKFILL_PG_PORT: String(taken), BACKFILL_DATA_DIR: dataDir, DATABASE_URL: '' });
    expect(demo.code).not.toBe(0);
    expect(demo.stderr).toMatch(
      new RegExp(`[Aa]ddress already in use.*Another process listens on port ${taken}: stop it, or set BACKFILL_PG_PORT to a free port`),
    );
    expect(demo.stderr).not.toMatch(/Run finished/);
  } finally {
    holder.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
