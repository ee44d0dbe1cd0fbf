/**
 * RunShape: the catalog facts a run is compiled against (key type, output columns, …),
 * read once at registration and stored with the run, so every worker builds the same
 * statements and a later schema change is detected rather than silently absorbed.
 */
export interface RunShape {
  /** format_type() of source.key (its first column), used to cast cursors: e.g. `bigint`, `text`, `uuid`. */
  keyType: string;
  /** format_type() of every source.key column, in key order: set for composite keys (absent: the one `keyType`). */
  keyTypes?: string[];
  /** format_type() of partition.column in the source. */
  partitionColumnType: string;
  /** Columns the transform produces, in order; all exist in the target. */
  outputColumns: string[];
  /** format_type() of the first target.key column; when it is orderable, writes bound the target scan by the chunk's key range. */
  targetKeyType?: string;
  /**
   * Each target.key column's collation as SQL (`pg_catalog."C"`), null where the type has none.
   * Rows computed from the source carry the source's collations; matching them to the target
   * names the target's, which keeps its index usable and avoids "could not determine which
   * collation to use" when the two differ. Equality is the same in every deterministic
   * collation. Absent in runs registered before it.
   */
  targetKeyCollations?: (string | null)[];
  /**
   * How chunks walk a partition: by source.key alone, or by (partition column, key…) — set for
   * time partitions and range partitions on another column, whose keys need not follow the
   * partition column: walking the column's own index finds each chunk without re-reading the
   * partition. Absent (key) in runs registered before it existed.
   */
  chunkOrder?: 'key' | 'column-key';
  /** Tables and functions a SQL transform reads, as written in it (from the PostgreSQL parser); absent for module transforms and older runs. */
  transformReads?: { tables: string[]; functions: string[] };
  /**
   * Replace mode: every column of the target, in order. What a replace partition deletes is
   * kept whole in its before-images (undo/image-statements.ts), by these names.
   */
  targetColumns?: string[];
  /** format_type() of target.partitionColumn (replace mode only). */
  targetPartitionColumnType?: string;
  /**
   * The target has user triggers or rules, which may rewrite what a chunk writes: every row of
   * every chunk is then reconciled, not a sample. Absent (false) in runs registered before it.
   */
  targetRewrites?: boolean;
  /**
   * Before-images keep an inserted row as its key, in one array per key column
   * (undo/image-statements.ts). Absent in runs registered before it, and where a key column has
   * an array type: those keep inserted rows as rows of the run's row type, like changed ones.
   */
  imageKeys?: boolean;
  /** A revert run (docs/undo.md): what its statements need from the images' catalog; absent for every other run. */
  revert?: RevertShape;
}

/** What a revert run needs beyond the original run's shape, read from the image table when it registers. */
export interface RevertShape {
  /** Replace mode: the columns a deleted row is inserted back into (every target column but generated ones). */
  insertColumns?: string[];
}
