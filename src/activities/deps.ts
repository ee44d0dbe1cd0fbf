/**
 * What activities depend on, injected once per worker by createActivities. Tests build
 * the same object against their own database and pass it to an in-process worker.
 */
import type { Logger } from 'pino';
import type { PoolRegistry } from '../db/pool-registry';
import type { WorkerTrust } from '../security/worker-trust';
import type { NotifyTarget } from '../specs/notify-schema';
import type { WorkerDeployment } from '../temporal/worker-versioning';

export interface ActivityDeps {
  pools: PoolRegistry;
  logger: Logger;
  /** Where module transforms may come from (databases are checked by `pools`). */
  trust: Pick<WorkerTrust, 'transformDirs' | 'webhookUrls'>;
  /** How often a running partition polls the ledger while its run is paused. */
  pausePollMs?: number;
  /** BACKFILL_NOTIFY: the targets a run is told to when its spec names none. */
  notifyDefault?: NotifyTarget[];
  /** This worker's Temporal identity, logged with every chunk it writes. */
  workerIdentity?: string;
  /** Worker Versioning: the deployment and build this worker serves (a pinned run's partitions start on it). */
  deployment?: WorkerDeployment;
}
