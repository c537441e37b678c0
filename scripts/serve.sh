#!/usr/bin/env bash
# Serves Proofmark with the demo data: the database of DATABASE_URL (default SQLite in the run
# folder), a Celery worker and celery beat on the broker of CELERY_BROKER_URL (default the
# filesystem broker in the run folder; beat sends the jobs sweep), and Django's development server.
# Everything it writes (database, logs, media, broker folders) goes to PROOFMARK_RUN_DIR (default
# .run). PROOFMARK_T0 (nanoseconds since the epoch, set by `make run`) is when the run started:
# the time until the first page answered is printed from it.
set -euo pipefail
cd "$(dirname "$0")/.."
T0=${PROOFMARK_T0:-$(date +%s%N)}
since() { awk -v ns="$(( $(date +%s%N) - T0 ))" 'BEGIN { printf "%.1f", ns / 1e9 }'; }
PY=.venv/bin/python
RUN_DIR=${PROOFMARK_RUN_DIR:-$PWD/.run}
mkdir -p "$RUN_DIR/media"
export PROOFMARK_RUN_DIR=$RUN_DIR
echo "Database: ${DATABASE_URL:-SQLite in $RUN_DIR/proofmark.sqlite3}; broker: ${CELERY_BROKER_URL:-filesystem, in $RUN_DIR/broker}"
echo "Packages in place after $(since) s"
$PY manage.py migrate --no-input -v 0
echo "Database migrated after $(since) s"
$PY manage.py demo_setup
echo "Demo loaded after $(since) s"
# niced: they start while the web server does, which answers first
nice -n 10 $PY -m celery -A config worker --pool=threads --concurrency=2 --loglevel=WARNING \
  --without-heartbeat --without-gossip --without-mingle > "$RUN_DIR/worker.log" 2>&1 &
WORKER=$!
nice -n 10 $PY -m celery -A config beat --loglevel=WARNING > "$RUN_DIR/beat.log" 2>&1 &
BEAT=$!
PORT=${PORT:-8000}
# Waits for the first page (the log-in page) and says how long it took since the start.
$PY - "$PORT" "$T0" <<'EOF' &
import sys, time, urllib.request

port, t0 = sys.argv[1], int(sys.argv[2])
for _ in range(1200):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=2):
            print(f"First page answered {(time.time_ns() - t0) / 1e9:.1f} s after the start", flush=True)
            break
    except OSError:
        time.sleep(0.1)
EOF
PROBE=$!
trap 'kill $WORKER $BEAT $PROBE 2>/dev/null || true' EXIT INT TERM
echo "Background worker (pid $WORKER, log in $RUN_DIR/worker.log) and beat (pid $BEAT, $RUN_DIR/beat.log) started"
echo "Serving on http://127.0.0.1:$PORT (Ctrl-C stops)"
$PY manage.py runserver --skip-checks "127.0.0.1:$PORT"  # migrate has just run them
