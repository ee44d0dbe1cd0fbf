import type { Migration } from './migration';

/**
 * The code a module-transform run executes, kept whole: the bundle of the module and all it
 * imports, addressed by its sha256 (the run's transform_hash). Workers run this, not the file
 * on their disk, and an audit can show byte for byte what computed the rows.
 */
export const m0009TransformArtifacts: Migration = {
  version: 9,
  name: 'transform-artifacts',
  sql: `
CREATE TABLE backfill.transform_artifacts (
  code_hash    text PRIMARY KEY CHECK (code_hash ~ '^[0-9a-f]{64}$'),
  -- where it was bundled from, on the worker that registered the first run using it
  source_path  text NOT NULL,
  code         text NOT NULL,
  -- the files inside the bundle (relative to the module) and the Node built-ins it requires
  inputs       jsonb NOT NULL,
  builtins     jsonb NOT NULL,
  bundler      text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
`,
};
