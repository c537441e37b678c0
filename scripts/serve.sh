#!/usr/bin/env bash
# Serves Proofmark embedded: SQLite, a Celery worker and celery beat on the filesystem broker
# (beat sends the jobs sweep), demo data.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
mkdir -p .run/media
unset DATABASE_URL CELERY_BROKER_URL
$PY manage.py migrate --no-input -v 0
$PY manage.py demo_setup
$PY -m celery -A config worker --pool=threads --concurrency=2 --loglevel=WARNING \
  --without-heartbeat --without-gossip --without-mingle > .run/worker.log 2>&1 &
WORKER=$!
$PY -m celery -A config beat --loglevel=WARNING > .run/beat.log 2>&1 &
BEAT=$!
trap 'kill $WORKER $BEAT 2>/dev/null || true' EXIT INT TERM
echo "Background worker (pid $WORKER, log in .run/worker.log) and beat (pid $BEAT, .run/beat.log) started"
PORT=${PORT:-8000}
echo "Serving on http://127.0.0.1:$PORT (Ctrl-C stops)"
$PY manage.py runserver "127.0.0.1:$PORT"
