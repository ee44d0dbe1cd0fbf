/**
 * What activities depend on, injected once per worker by createActivities. Tests build
 * the same object against their own database and pass it to an in-process worker.
 */
import type { Logger } from 'pino';
import type { PoolRegistry } from '../db/pool-registry';

export interface ActivityDeps {
  pools: PoolRegistry;
  logger: Logger;
  /** How often a running partition polls the ledger while its run is paused. */
  pausePollMs?: number;
}
