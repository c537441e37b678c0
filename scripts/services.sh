#!/usr/bin/env bash
# Makes sure PostgreSQL and Redis answer on 127.0.0.1, starting them when installed and down.
set -euo pipefail

if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    echo "PostgreSQL is down: starting it"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  else
    echo "PostgreSQL is not installed: the tests need it on 127.0.0.1:5432 (user postgres, trust auth)." >&2
    echo "Install it with: apt-get install -y postgresql" >&2
    exit 1
  fi
fi
pg_isready -q -h 127.0.0.1 -p 5432 || { echo "PostgreSQL did not come up on 127.0.0.1:5432" >&2; exit 1; }

redis_up() { command -v redis-cli >/dev/null && [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = "PONG" ]; }
if ! redis_up; then
  if command -v redis-server >/dev/null; then
    echo "Redis is down: starting it"
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
    for _ in $(seq 1 30); do redis_up && break; sleep 0.5; done
  else
    echo "Redis is not installed: the tests need it on 127.0.0.1:6379." >&2
    echo "Install it with: apt-get install -y redis-server" >&2
    exit 1
  fi
fi
redis_up || { echo "Redis did not come up on 127.0.0.1:6379" >&2; exit 1; }
