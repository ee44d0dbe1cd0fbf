-- The least-privilege role docker-compose.yml's worker connects as: the ledger part of the GRANTs
-- in docs/security.md ("A least-privilege role for workers"). Run with psql after the ledger's
-- owner has migrated it (`backfill migrate`), again after an upgrade that adds a ledger table;
-- running it twice changes nothing. Variables: role, password, database.
--   psql -v ON_ERROR_STOP=1 -v role=backfill_worker -v password=… -v database=backfill -f deploy/worker-role.sql
-- The tables a spec reads and writes are yours to grant, per spec:
--   GRANT USAGE ON SCHEMA app TO backfill_worker;
--   GRANT SELECT ON app.orders, app.fx TO backfill_worker;               -- the source, and what it joins
--   GRANT SELECT, INSERT, UPDATE ON app.orders_usd TO backfill_worker;   -- the target (and DELETE for mode: replace)
SELECT format('CREATE ROLE %I LOGIN', :'role') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec
ALTER ROLE :"role" LOGIN PASSWORD :'password' NOSUPERUSER NOBYPASSRLS;

-- the ledger: read and update its own records, never its structure
GRANT USAGE ON SCHEMA backfill TO :"role";
GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA backfill TO :"role";
GRANT USAGE ON ALL SEQUENCES IN SCHEMA backfill TO :"role";
-- a run's rate-limit bucket is removed once the run is verified (cleanup)
GRANT DELETE ON backfill.rate_limits TO :"role";
-- before-images (docs/undo.md): each run creates one table of what it overwrote there
GRANT USAGE, CREATE ON SCHEMA backfill_undo TO :"role";

-- a session-private table holds each chunk's output
GRANT TEMPORARY ON DATABASE :"database" TO :"role";
