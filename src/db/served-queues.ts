/**
 * The database task queues a worker polls (domain/ids.ts databaseTaskQueue): for each variable
 * it serves (BACKFILL_DATABASES, set in its environment), the queue of the database that variable
 * reaches, as the database says of itself. Called by the worker at start and then every few
 * seconds: a database that cannot be reached yet is tried again (its queue is polled once it
 * answers), and a variable that appears later (a test's new database) is picked up.
 */
import type { Logger } from 'pino';
import { databaseTaskQueue } from '../domain/ids';
import { databaseIdentity } from './identity';
import type { PoolRegistry } from './pool-registry';

export interface ServedQueue {
  queue: string;
  variable: string;
  /** `<database> on cluster <system identifier>`, for logs. */
  label: string;
}

/** How long a variable whose database did not answer waits before it is asked again. */
const RETRY_MS = 15_000;

export class ServedQueues {
  private readonly resolved = new Map<string, ServedQueue>();
  private readonly failing = new Map<string, { retryAt: number; warned: boolean }>();

  constructor(
    private readonly pools: PoolRegistry,
    private readonly baseQueue: string,
    private readonly logger: Logger,
  ) {}

  /** Every queue found so far. */
  all(): ServedQueue[] {
    return [...this.resolved.values()];
  }

  /** Forgets queues found but not polled (their worker could not be made): their variables are resolved again after the usual wait. */
  forget(queues: ServedQueue[], now = Date.now()): void {
    for (const q of queues) {
      this.resolved.delete(q.variable);
      this.failing.set(q.variable, { retryAt: now + RETRY_MS, warned: true });
    }
  }

  /** Resolves the variables not resolved yet (those that failed, once their wait is over); returns the queues new since the last call. */
  async refresh(now = Date.now()): Promise<ServedQueue[]> {
    const due = this.pools.servedVariables().filter((v) => !this.resolved.has(v) && (this.failing.get(v)?.retryAt ?? 0) <= now);
    const found = await Promise.all(due.map((variable) => this.resolve(variable, now)));
    return found.filter((q): q is ServedQueue => q !== undefined);
  }

  private async resolve(variable: string, now: number): Promise<ServedQueue | undefined> {
    try {
      const identity = await databaseIdentity(this.pools.get(variable));
      const served = { queue: databaseTaskQueue(this.baseQueue, variable, identity.id), variable, label: identity.label };
      this.resolved.set(variable, served);
      if (this.failing.get(variable)?.warned) this.logger.info({ database: variable, taskQueue: served.queue }, 'database answers now; serving its runs');
      this.failing.delete(variable);
      return served;
    } catch (err) {
      const before = this.failing.get(variable);
      // said once per outage, not every RETRY_MS
      if (!before?.warned) {
        this.logger.warn(
          { database: variable, error: (err as Error).message },
          `cannot reach ${variable}; its runs wait for this worker (or another that serves it) until it answers; trying again every ${RETRY_MS / 1000} s`,
        );
      }
      this.failing.set(variable, { retryAt: now + RETRY_MS, warned: true });
      return undefined;
    }
  }
}
