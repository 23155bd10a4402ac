#!/usr/bin/env bash
# Makes sure a Chromium for the page tests is on the machine: Debian's `chromium-headless-shell`
# package at /usr/bin/chromium-headless-shell (override with CHROMIUM_PATH, e.g. /usr/bin/chromium;
# test/helpers/browser.ts says why the headless shell). Installs it when missing and we are root with
# apt; otherwise says what to install. Never downloads a browser build of its own (no
# `playwright install`): playwright-core drives this system Chromium. Used by .ci/run.
set -euo pipefail

CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium-headless-shell}"

if [ -x "$CHROMIUM_PATH" ]; then
  echo "browser: $("$CHROMIUM_PATH" --version 2>/dev/null || echo chromium) at $CHROMIUM_PATH"
  exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "browser: installing chromium-headless-shell (Debian package)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends chromium-headless-shell fonts-liberation >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends chromium-headless-shell fonts-liberation >/dev/null; }
fi

if [ -x "$CHROMIUM_PATH" ]; then
  echo "browser: $("$CHROMIUM_PATH" --version 2>/dev/null || echo chromium) at $CHROMIUM_PATH"
else
  echo "browser: no Chromium at $CHROMIUM_PATH — install the Debian package 'chromium-headless-shell' (as root: apt-get install chromium-headless-shell) or set CHROMIUM_PATH" >&2
  exit 1
fi
