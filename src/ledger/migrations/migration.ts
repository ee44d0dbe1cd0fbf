/** One numbered ledger migration: applied once, in order, inside the ledger's migration lock. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
