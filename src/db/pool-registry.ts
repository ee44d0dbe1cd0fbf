/**
 * One pg.Pool per database a worker serves, keyed by the name of the environment
 * variable a spec's `database` field names. Workers never see URLs in specs or in
 * Temporal history: only variable names travel.
 */
import type pg from 'pg';
import { createPool, databaseUrlFrom } from './pool';

export class PoolRegistry {
  private readonly pools = new Map<string, pg.Pool>();

  constructor(
    private readonly options: { max?: number; env?: NodeJS.ProcessEnv } = {},
  ) {}

  get(databaseVar: string): pg.Pool {
    let pool = this.pools.get(databaseVar);
    if (!pool) {
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
