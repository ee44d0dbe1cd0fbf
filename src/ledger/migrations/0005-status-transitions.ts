import type { Migration } from './migration';

/**
 * The ledger refuses any status change that is not an arrow of the transition tables in
 * src/domain/statuses.ts, whoever writes it (this engine, a script, a hand-edit). The
 * arrows live in backfill.status_transitions, which migrateLedger fills from those tables
 * on every start, so the code's tables and the database's check cannot drift apart.
 */
export const m0005StatusTransitions: Migration = {
  version: 5,
  name: 'status-transitions',
  sql: `
CREATE TABLE backfill.status_transitions (
  entity       text NOT NULL CHECK (entity IN ('run', 'partition')),
  from_status  text NOT NULL,
  to_status    text NOT NULL,
  PRIMARY KEY (entity, from_status, to_status)
);

CREATE FUNCTION backfill.check_status_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM backfill.status_transitions
                  WHERE entity = TG_ARGV[0] AND from_status = OLD.status AND to_status = NEW.status) THEN
    RAISE EXCEPTION '% status cannot change from % to %', TG_ARGV[0], OLD.status, NEW.status
      USING ERRCODE = 'check_violation', HINT = 'allowed changes are the arrows in backfill.status_transitions';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER runs_status_transition BEFORE UPDATE OF status ON backfill.runs
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION backfill.check_status_transition('run');
CREATE TRIGGER partitions_status_transition BEFORE UPDATE OF status ON backfill.partitions
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION backfill.check_status_transition('partition');
`,
};
