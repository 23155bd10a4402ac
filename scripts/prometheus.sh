#!/usr/bin/env bash
# Makes sure Prometheus and promtool are on the machine for the alert-rule tests and the watching
# end-to-end test: Debian's `prometheus` package (Prometheus 2.42 with promtool; override the paths
# with PROMETHEUS_PATH / PROMTOOL_PATH). Installs it when missing and we are root with apt (the
# package starts no service in a container); otherwise says what to install. Like scripts/browser.sh.
set -euo pipefail

PROMETHEUS_PATH="${PROMETHEUS_PATH:-$(command -v prometheus || echo /usr/bin/prometheus)}"
PROMTOOL_PATH="${PROMTOOL_PATH:-$(command -v promtool || echo /usr/bin/promtool)}"

present() { [ -x "$PROMETHEUS_PATH" ] && [ -x "$PROMTOOL_PATH" ]; }
say() { echo "prometheus: $("$PROMETHEUS_PATH" --version 2>/dev/null | head -1) at $PROMETHEUS_PATH"; }

if present; then
  say
  exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "prometheus: installing prometheus (Debian package, brings promtool)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends prometheus >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends prometheus >/dev/null; }
  PROMETHEUS_PATH=/usr/bin/prometheus
  PROMTOOL_PATH=/usr/bin/promtool
fi

if present; then
  say
else
  echo "prometheus: no Prometheus/promtool at $PROMETHEUS_PATH / $PROMTOOL_PATH — install the Debian package 'prometheus' (as root: apt-get install prometheus) or set PROMETHEUS_PATH and PROMTOOL_PATH" >&2
  exit 1
fi
