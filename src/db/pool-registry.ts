/**
 * One pg.Pool per database a worker serves, keyed by the name of the environment
 * variable a spec's `database` field names. Workers never see URLs in specs or in
 * Temporal history: only variable names travel, and only names on the worker's
 * allow-list are ever read (anyone who can start a workflow chooses the name).
 */
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { databaseAllowed, databaseRefusal, DEFAULT_DATABASES } from '../security/worker-trust';
import { FailureType } from '../shared/failures';
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
        throw ApplicationFailure.nonRetryable(databaseRefusal({ databases: this.databases }, databaseVar), FailureType.SpecInvalid);
      }
      pool = createPool(databaseUrlFrom(databaseVar, this.options.env ?? process.env), { max: this.options.max });
      this.pools.set(databaseVar, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.end()));
    this.pools.clear();
  }
}
