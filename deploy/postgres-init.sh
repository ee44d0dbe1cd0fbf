#!/bin/sh
# Runs once, when the postgres image initialises an empty data directory (docker-compose.yml mounts
# it into /docker-entrypoint-initdb.d): the roles the stack's services connect as, each with its
# own password from .env. Temporal's role may create its two databases and nothing else; the
# application's database belongs to its own owner, who migrates the ledger. The superuser is used
# for nothing after this but creating the workers' least-privilege role (deploy/worker-role.sql).
set -eu
: "${TEMPORAL_DB_PASSWORD:?set TEMPORAL_DB_PASSWORD in .env}"
: "${BACKFILL_OWNER_PASSWORD:?set BACKFILL_OWNER_PASSWORD in .env}"
psql --set=ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  --set=temporal_password="$TEMPORAL_DB_PASSWORD" --set=owner_password="$BACKFILL_OWNER_PASSWORD" <<'SQL'
CREATE ROLE temporal LOGIN CREATEDB PASSWORD :'temporal_password';
CREATE ROLE backfill_owner LOGIN PASSWORD :'owner_password';
ALTER DATABASE backfill OWNER TO backfill_owner;
SQL
