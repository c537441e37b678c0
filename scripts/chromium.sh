#!/usr/bin/env bash
# Browser tests drive Debian's Chromium (Playwright cannot download its own browser here).
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
if command -v apt-get >/dev/null && [ "$(id -u)" = "0" ]; then
  echo "Installing Debian's chromium for the browser tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "Chromium is missing at /usr/bin/chromium: install it with 'apt-get install -y chromium' (as root)." >&2
  exit 1
fi
