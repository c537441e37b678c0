#!/usr/bin/env bash
# Serves Proofmark embedded: SQLite, a Celery worker on the filesystem broker, demo data.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
mkdir -p .run/broker/out .run/broker/processed .run/media
unset DATABASE_URL CELERY_BROKER_URL
$PY manage.py migrate --no-input -v 0
$PY manage.py demo_setup
$PY -m celery -A config worker --pool=threads --concurrency=2 --loglevel=WARNING \
  --without-heartbeat --without-gossip --without-mingle > .run/worker.log 2>&1 &
WORKER=$!
trap 'kill $WORKER 2>/dev/null || true' EXIT INT TERM
echo "Background worker started (pid $WORKER, log in .run/worker.log)"
PORT=${PORT:-8000}
echo "Serving on http://127.0.0.1:$PORT (Ctrl-C stops)"
$PY manage.py runserver "127.0.0.1:$PORT"
