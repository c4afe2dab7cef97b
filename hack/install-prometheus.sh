#!/usr/bin/env bash
# Install Prometheus for the e2e tests (test/e2e/bandwidth_test.go starts it
# through internal/promtest) and the demo's bandwidth part, from the
# distribution's `prometheus` package.
#
# Idempotent: only says which binary it found when `prometheus` is already on $PATH (or
# $PROMETHEUS_BINARY names an executable). Otherwise it must run as root on a
# Debian-family machine with apt-get; anywhere else it fails with a message
# saying what to do instead.
#
# The tests start their own server on a loopback port, so the service the
# package sets up is stopped and disabled: a stray Prometheus on :9090 would
# only use memory and disk. Recommended packages (node_exporter and friends)
# are not installed for the same reason.
set -euo pipefail

log() { printf 'install-prometheus: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

if [[ -n "${PROMETHEUS_BINARY:-}" ]]; then
	[[ -x "$PROMETHEUS_BINARY" ]] || die "PROMETHEUS_BINARY=$PROMETHEUS_BINARY is not an executable file"
	log "using $PROMETHEUS_BINARY (PROMETHEUS_BINARY)"
	exit 0
fi
if command -v prometheus >/dev/null 2>&1; then
	log "using $(command -v prometheus)"
	exit 0
fi

command -v apt-get >/dev/null 2>&1 ||
	die "prometheus is not installed and apt-get is not available: install Prometheus (https://prometheus.io/download/) and put it on PATH, or set PROMETHEUS_BINARY"
[[ "$(id -u)" -eq 0 ]] ||
	die "prometheus is not installed; run this script as root (sudo $0), or install the 'prometheus' package yourself"

log "installing the prometheus package"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends prometheus >/dev/null

# Stop and disable the service the package may have started.
if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
	systemctl disable --now prometheus.service >/dev/null 2>&1 || true
elif command -v systemctl >/dev/null 2>&1; then
	# No running systemd (a container): only drop the boot-time links.
	systemctl disable prometheus.service >/dev/null 2>&1 || true
fi
if [[ -x /etc/init.d/prometheus ]]; then
	/etc/init.d/prometheus stop >/dev/null 2>&1 || true
	command -v update-rc.d >/dev/null 2>&1 && update-rc.d prometheus disable >/dev/null 2>&1 || true
fi

command -v prometheus >/dev/null 2>&1 || die "the prometheus package is installed but no prometheus is on PATH"
log "installed: $(prometheus --version 2>&1 | head -n 1)"
