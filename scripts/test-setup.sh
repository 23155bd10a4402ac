#!/usr/bin/env bash
# `npm test`'s own set-up (npm runs it as `pretest`), as `npm start` does its own: Redis and MariaDB
# up (scripts/services.sh), a Chromium for the sale-page suite (scripts/browser.sh) and Prometheus
# with promtool for the alert rules and the watching suite (scripts/prometheus.sh). Each only
# checks when everything is there (well under a second); installs Debian packages when missing and
# run as root with apt; otherwise stops with a message saying what to install.
# TEST_SKIP_SERVICES=1 skips the services (tests pointed elsewhere with TEST_REDIS_URL /
# TEST_MYSQL_SERVER_URL).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${TEST_SKIP_SERVICES:-0}" != 1 ]; then bash scripts/services.sh; fi
bash scripts/browser.sh
bash scripts/prometheus.sh
