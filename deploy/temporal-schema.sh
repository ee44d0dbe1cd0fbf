#!/bin/sh
# Creates and migrates Temporal's two PostgreSQL databases (persistence and SQL visibility) with
# temporal-sql-tool. One source for every deployment that runs the production server:
# docker-compose.yml's temporal-admin-tools runs it, and so does the production-server test tier
# (src/dev/temporal-server-build.ts) with the binaries it builds. Idempotent: a database or schema
# that exists is kept and only updated.
#
# Environment: PG_HOST, PG_PORT (5432), PG_USER, PG_PASSWORD (empty: none), TEMPORAL_DB (temporal),
# VISIBILITY_DB (temporal_visibility), SQL_TOOL (temporal-sql-tool), SCHEMA_DIR
# (/etc/temporal/schema/postgresql/v12, as in the admin-tools image).
set -eu
: "${PG_HOST:?PG_HOST must name the PostgreSQL host}"
: "${PG_USER:?PG_USER must name a role that may create databases}"
PG_PORT=${PG_PORT:-5432}
SQL_TOOL=${SQL_TOOL:-temporal-sql-tool}
SCHEMA_DIR=${SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}

sql() {
  db=$1
  shift
  if [ -n "${PG_PASSWORD:-}" ]; then
    "$SQL_TOOL" --plugin postgres12 --ep "$PG_HOST" -p "$PG_PORT" -u "$PG_USER" --pw "$PG_PASSWORD" --db "$db" "$@"
  else
    "$SQL_TOOL" --plugin postgres12 --ep "$PG_HOST" -p "$PG_PORT" -u "$PG_USER" --db "$db" "$@"
  fi
}

for pair in "${TEMPORAL_DB:-temporal}:temporal" "${VISIBILITY_DB:-temporal_visibility}:visibility"; do
  db=${pair%%:*}
  schema=${pair##*:}
  sql "$db" create-database 2>/dev/null || true # exists already
  sql "$db" setup-schema -v 0.0 2>/dev/null || true # versioned already
  sql "$db" update-schema -d "$SCHEMA_DIR/$schema/versioned"
done
