#!/usr/bin/env bash
# Serves Proofmark with the demo data: the database of DATABASE_URL (default: an embedded
# PostgreSQL in the run folder, core/embedded_db.py, stopped again on exit), Django's development server, then a Celery worker and celery beat on the broker of
# CELERY_BROKER_URL (default the filesystem broker in the run folder; beat sends the jobs sweep).
# Everything it writes (database, logs, media, broker folders) goes to PROOFMARK_RUN_DIR (default
# .run). PROOFMARK_T0 (nanoseconds since the epoch, set by `make run`) is when the run started:
# each stage's time is printed from it, the last when a demo expert's log-in reached a page.
set -euo pipefail
cd "$(dirname "$0")/.."
T0=${PROOFMARK_T0:-$(date +%s%N)}
since() { awk -v ns="$(( $(date +%s%N) - T0 ))" 'BEGIN { printf "%.1f", ns / 1e9 }'; }
PY=.venv/bin/python
RUN_DIR=${PROOFMARK_RUN_DIR:-$PWD/.run}
mkdir -p "$RUN_DIR/media"
export PROOFMARK_RUN_DIR=$RUN_DIR
PORT=${PORT:-8000}
echo "Database: ${DATABASE_URL:-embedded PostgreSQL in $RUN_DIR/pg}; broker: ${CELERY_BROKER_URL:-filesystem, in $RUN_DIR/broker}"
echo "Packages in place after $(since) s"
EMBEDDED=
if [ -z "${DATABASE_URL:-}" ]; then
  EMBEDDED=1
  DATABASE_URL=$($PY -m core.embedded_db start "$RUN_DIR")
  export DATABASE_URL
  trap '$PY -m core.embedded_db stop "$RUN_DIR"' EXIT
  echo "Embedded PostgreSQL running after $(since) s (log in $RUN_DIR/pg/log)"
fi
$PY manage.py migrate --no-input -v 0
echo "Database migrated after $(since) s"

# In the background, while the web server starts (it reads nothing until asked for a page): the
# demo (kept as it is where an earlier run loaded it), then a wait for the first page (GET /,
# which leads to the log-in page naming the demo accounts) and a log-in as a demo expert that
# must reach a logged-in page, each with the time it came, then the worker and beat, niced, so
# that they take no CPU from the web server before it has answered. TERM (sent when the server
# stops) stops them.
(
  trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM
  $PY manage.py demo_setup --keep &
  wait $! || { echo "The demo did not load (above): the site is served without it" >&2; exit 1; }
  echo "Demo ready after $(since) s"
  $PY - "$PORT" "$T0" <<'EOF' &
import http.cookiejar, re, sys, time, urllib.parse, urllib.request

port, t0 = sys.argv[1], int(sys.argv[2])
base = f"http://127.0.0.1:{port}"
since = lambda: (time.time_ns() - t0) / 1e9
for _ in range(1200):
    try:
        with urllib.request.urlopen(base + "/", timeout=2) as answer:
            if answer.status == 200:
                break
    except OSError:
        pass
    time.sleep(0.1)
else:
    sys.exit("No page answered on port " + port + " within two minutes")
print(f"First page answered after {since():.1f} s (GET / from the start)", flush=True)
# A demo expert logs in as a newcomer would: the form's CSRF token, then the page it leads to.
jar = http.cookiejar.CookieJar()
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
login = base + "/accounts/login/?next=/annotation/"
form = opener.open(login, timeout=10).read().decode()
token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
fields = {"csrfmiddlewaretoken": token, "username": "expert1", "password": "expert1-demo-pass"}
sent = urllib.request.Request(
    login, data=urllib.parse.urlencode(fields).encode(), headers={"Referer": login}
)
with opener.open(sent, timeout=10) as answer:
    if "/accounts/login/" in answer.url:
        sys.exit("Logging in as expert1 failed: the log-in page came back (password changed?)")
print(f"Logging in works after {since():.1f} s (expert1 reached {answer.url[len(base):]})", flush=True)
EOF
  wait $! || exit 1
  # no --queues: the worker serves every queue of TASK_QUEUES (config/settings.py), the
  # webhooks' deliveries included
  nice -n 10 $PY -m celery -A config worker --pool=threads --concurrency=2 --loglevel=WARNING \
    --without-heartbeat --without-gossip --without-mingle > "$RUN_DIR/worker.log" 2>&1 &
  echo "Background worker started (pid $!, log in $RUN_DIR/worker.log)"
  nice -n 10 $PY -m celery -A config beat --loglevel=WARNING > "$RUN_DIR/beat.log" 2>&1 &
  echo "Beat started (pid $!, log in $RUN_DIR/beat.log)"
  wait
) &
BACKGROUND=$!
stop_all() {
  kill $BACKGROUND 2>/dev/null || true
  wait $BACKGROUND 2>/dev/null || true  # the worker and beat close their connections first
  if [ -n "$EMBEDDED" ]; then $PY -m core.embedded_db stop "$RUN_DIR" && echo "Embedded PostgreSQL stopped"; fi
}
trap stop_all EXIT INT TERM
echo "Serving on http://127.0.0.1:$PORT while the demo loads (Ctrl-C stops)"
$PY manage.py runserver --skip-checks "127.0.0.1:$PORT"  # migrate has just run them
