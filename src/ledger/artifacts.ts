/**
 * The ledger's copy of each module transform's bundle (see transforms/artifact.ts), stored
 * once per code hash when a run using it is registered, read by every worker that runs it.
 */
import type { TransformArtifact } from '../transforms/artifact';
import type pg from 'pg';

type Queryable = pg.Pool | pg.PoolClient;

export interface StoredArtifact extends TransformArtifact {
  sourcePath: string;
}

export async function storeArtifact(db: Queryable, artifact: TransformArtifact, sourcePath: string): Promise<void> {
  await db.query(
    `INSERT INTO backfill.transform_artifacts (code_hash, source_path, code, inputs, builtins, bundler)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (code_hash) DO NOTHING`,
    [artifact.codeHash, sourcePath, artifact.code, JSON.stringify(artifact.inputs), JSON.stringify(artifact.builtins), artifact.bundler],
  );
}

export async function getArtifact(db: Queryable, codeHash: string): Promise<StoredArtifact | undefined> {
  const { rows } = await db.query<{ code_hash: string; source_path: string; code: string; inputs: string[]; builtins: string[]; bundler: string }>(
    'SELECT code_hash, source_path, code, inputs, builtins, bundler FROM backfill.transform_artifacts WHERE code_hash = $1',
    [codeHash],
  );
  const r = rows[0];
  return r && { codeHash: r.code_hash, sourcePath: r.source_path, code: r.code, inputs: r.inputs, builtins: r.builtins, bundler: r.bundler };
}
