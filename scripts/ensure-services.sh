#!/usr/bin/env bash
# Makes sure what the tests need is here and running, on a fresh machine of this kind
# (Debian 12, root): a PostgreSQL server with the jobdeck role, Debian's Chromium for the
# browser tests, Debian's Prometheus for the metrics test, Python 3 with pip for the Python
# client's tests and Podman for the container tests. Idempotent: does nothing that is
# already done. Used by `npm test` and .ci/run.
set -euo pipefail

PG_URL="${JOBDECK_TEST_PG_URL:-postgresql://jobdeck:jobdeck@127.0.0.1:5432/jobdeck}"
as_postgres() { if command -v runuser >/dev/null 2>&1; then runuser -u postgres -- "$@"; else su postgres -c "$(printf '%q ' "$@")"; fi; }

pg_ready() {
  if command -v psql >/dev/null 2>&1; then psql "$PG_URL" -qtAc 'select 1' >/dev/null 2>&1; return; fi
  node -e "const c=new (require('pg').Client)({connectionString:process.argv[1]});c.connect().then(()=>c.end()).then(()=>process.exit(0),()=>process.exit(1))" "$PG_URL" 2>/dev/null
}

apt_install() {
  [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1 || return 1
  # Only reached when something is missing; lists may be stale on a fresh machine.
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if ! pg_ready; then
  if ! command -v pg_lsclusters >/dev/null 2>&1 || [ -z "$(pg_lsclusters --no-header 2>/dev/null)" ]; then
    if ! command -v pg_lsclusters >/dev/null 2>&1; then
      echo "ensure-services: installing PostgreSQL"
      apt_install postgresql || { echo "ensure-services: PostgreSQL is not installed and cannot be (apt-get install postgresql as root)" >&2; exit 1; }
    fi
    if [ -z "$(pg_lsclusters --no-header 2>/dev/null)" ]; then
      ver=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
      echo "ensure-services: creating PostgreSQL cluster $ver/main"
      pg_createcluster "$ver" main >/dev/null
    fi
  fi
  if command -v pg_lsclusters >/dev/null 2>&1; then
    read -r ver name _ < <(pg_lsclusters --no-header | head -n 1) || true
    if [ -n "${ver:-}" ]; then
      echo "ensure-services: starting PostgreSQL cluster $ver/$name"
      pg_ctlcluster "$ver" "$name" start 2>/dev/null || true
    fi
    for _ in $(seq 1 30); do as_postgres psql -qtAc 'select 1' >/dev/null 2>&1 && break; sleep 0.5; done
    as_postgres psql -qtAc "select 1 from pg_roles where rolname='jobdeck'" | grep -q 1 \
      || as_postgres psql -qc "create role jobdeck login createdb password 'jobdeck'"
    as_postgres psql -qtAc "select 1 from pg_database where datname='jobdeck'" | grep -q 1 \
      || as_postgres psql -qc "create database jobdeck owner jobdeck"
  fi
  pg_ready || { echo "ensure-services: PostgreSQL is not reachable at $PG_URL (install postgresql, or set JOBDECK_TEST_PG_URL)" >&2; exit 1; }
fi
echo "ensure-services: PostgreSQL ready"

if [ "${JOBDECK_SKIP_E2E:-0}" != "1" ] && [ ! -x /usr/bin/chromium ]; then
  echo "ensure-services: installing Debian's chromium for the browser tests"
  if ! apt_install chromium; then
    echo "ensure-services: /usr/bin/chromium is missing: apt-get install -y chromium (or JOBDECK_SKIP_E2E=1)" >&2
    exit 1
  fi
fi
[ -x /usr/bin/chromium ] && echo "ensure-services: chromium ready"

# Debian's Prometheus for the metrics test (a real server scraping /metrics). Only the binary is
# needed: the test starts its own with a temporary config; the package's own service is not used.
# In CI (CI=true) a tool the tests need that cannot be installed fails the run: a test that
# skips for want of it would pass without testing anything.
missing_tool() { # message
  echo "ensure-services: $1" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
}
if ! command -v prometheus >/dev/null 2>&1; then
  echo "ensure-services: installing Debian's prometheus for the metrics test"
  apt_install --no-install-recommends prometheus || \
    missing_tool "prometheus is missing and could not be installed (apt-get install -y --no-install-recommends prometheus); the Prometheus test will fail"
fi
command -v prometheus >/dev/null 2>&1 && echo "ensure-services: prometheus ready"
if ! command -v rg >/dev/null 2>&1; then
  echo "ensure-services: installing Debian's ripgrep for the cross-job log search"
  apt_install --no-install-recommends ripgrep || \
    missing_tool "ripgrep is missing and could not be installed (apt-get install -y --no-install-recommends ripgrep); the log search tests will fail (the server itself falls back to its Node scan)"
fi
command -v rg >/dev/null 2>&1 && echo "ensure-services: ripgrep ready"
if ! command -v strace >/dev/null 2>&1; then
  echo "ensure-services: installing Debian's strace for the launcher test (which process syncs an exit record)"
  apt_install --no-install-recommends strace || \
    missing_tool "strace is missing and could not be installed (apt-get install -y --no-install-recommends strace); the launcher's durability test will fail"
fi

# Podman (rootful) with runc, and Debian's static busybox, for the container tests (image_id:
# docker:…): tests/helpers/container-image.ts builds their small image offline from /bin/busybox.
# A missing one fails the run here — a container test never skips.
if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1 || [ ! -x /bin/busybox ]; then
  echo "ensure-services: installing Debian's podman, runc and busybox-static for the container tests"
  apt_install podman runc busybox-static || { echo "ensure-services: podman, runc or busybox-static is missing: apt-get install -y podman runc busybox-static" >&2; exit 1; }
fi
echo "ensure-services: podman ready"

# Python 3 with pip for the Python client's tests (tests/integration/clients.test.ts installs
# clients/python with `pip install --no-index` and runs its unittest suite).
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null || ! python3 -m pip --version >/dev/null 2>&1; then
  echo "ensure-services: installing Debian's python3 and pip for the Python client's tests"
  apt_install --no-install-recommends python3 python3-pip || { echo "ensure-services: python3 (≥ 3.9) with pip is missing: apt-get install -y python3 python3-pip" >&2; exit 1; }
fi
echo "ensure-services: python3 ready"

# A one-node Slurm cluster for the Slurm executor's tests, and an emulated three-node one (its own
# controller, one slurmd per network namespace) for its multi-node tests (both idempotent and
# fast when already up: ~50 ms and ~0.1 s).
if [ "${JOBDECK_SKIP_SLURM:-0}" != "1" ]; then
  bash "$(dirname "$0")/slurm-up.sh" || { echo "ensure-services: Slurm could not be started (see above; or JOBDECK_SKIP_SLURM=1)" >&2; exit 1; }
  bash "$(dirname "$0")/slurm-multi-up.sh" 3 || { echo "ensure-services: the multi-node Slurm cluster could not be started (see above; or JOBDECK_SKIP_SLURM=1)" >&2; exit 1; }
fi
exit 0
