import { rmSync } from 'node:fs';
import type { DevServer } from '../../src/dev/temporal-server';
import type { LocalPostgres } from '../../src/dev/postgres';

export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as Record<string, unknown>).__backfillServices as { server: DevServer; postgres: LocalPostgres; tmp: string } | undefined;
  if (!services) return;
  await services.server.stop();
  await services.postgres.stop();
  rmSync(services.tmp, { recursive: true, force: true });
}
