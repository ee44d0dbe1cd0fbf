#!/bin/sh
# The `default` namespace and Backfill's search attributes on a fresh Temporal, as
# docker-compose.yml's temporal-setup-namespace runs it. Idempotent: what exists is kept. Any
# failure ends it non-zero, so the workers (which depend on it) do not start half set up.
set -eu
: "${TEMPORAL_ADDRESS:?TEMPORAL_ADDRESS must name the Temporal frontend}"
NAMESPACE=${NAMESPACE:-default}

tries=0
until temporal operator namespace describe --namespace "$NAMESPACE" >/dev/null 2>&1; do
  temporal operator namespace create --namespace "$NAMESPACE" --retention 72h >/dev/null 2>&1 || true
  tries=$((tries + 1))
  if [ "$tries" -ge 30 ]; then
    echo "namespace $NAMESPACE could not be created on $TEMPORAL_ADDRESS" >&2
    temporal operator namespace create --namespace "$NAMESPACE" --retention 72h # its own error, then exit
    exit 1
  fi
  sleep 2
done

existing=$(temporal operator search-attribute list --namespace "$NAMESPACE")
for pair in BackfillName:Keyword BackfillRunId:Keyword BackfillStatus:Keyword BackfillPercent:Int BackfillRowsWritten:Int; do
  name=${pair%%:*}
  type=${pair##*:}
  if printf '%s\n' "$existing" | grep -qw "$name"; then
    echo "search attribute $name exists"
  else
    temporal operator search-attribute create --namespace "$NAMESPACE" --name "$name" --type "$type"
  fi
done
