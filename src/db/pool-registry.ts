/**
 * One pg.Pool per database a worker serves, keyed by the name of the environment
 * variable a spec's `database` field names. Workers never see URLs in specs or in
 * Temporal history: only variable names travel, and only names on the worker's
 * allow-list are ever read (anyone who can start a workflow chooses the name).
 */
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { databaseAllowed, databaseRefusal, DEFAULT_DATABASES, servedDatabases } from '../security/worker-trust';
import { FailureType } from '../domain/failures';
import { createPool, databaseUrlFrom } from './pool';

export class PoolRegistry {
  private readonly pools = new Map<string, pg.Pool>();
  private readonly databases: readonly string[];

  constructor(private readonly options: { max?: number; env?: NodeJS.ProcessEnv; databases?: readonly string[] } = {}) {
    this.databases = options.databases ?? DEFAULT_DATABASES;
  }

  get(databaseVar: string): pg.Pool {
    let pool = this.pools.get(databaseVar);
    if (!pool) {
      if (!databaseAllowed({ databases: this.databases }, databaseVar)) {
        // routing hands a run's work only to workers that serve its variable (domain/ids.ts
        // databaseTaskQueue); work that reaches this one anyway (a run started before routing, on
        // the common queue) is given back for a worker that does serve it, never failed here
        throw ApplicationFailure.create({
          type: FailureType.WrongDatabase,
          nonRetryable: false,
          nextRetryDelay: '2 seconds',
          message: databaseRefusal({ databases: this.databases }, databaseVar),
        });
      }
      pool = createPool(databaseUrlFrom(databaseVar, this.options.env ?? process.env), { max: this.options.max });
      this.pools.set(databaseVar, pool);
    }
    return pool;
  }

  /** The variables this worker serves that are set in its environment (`NAME_*` entries expanded). */
  servedVariables(): string[] {
    return servedDatabases(this.databases, this.options.env ?? process.env);
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.end()));
    this.pools.clear();
  }
}
