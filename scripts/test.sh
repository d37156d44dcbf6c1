#!/usr/bin/env bash
# Install everything the test suite needs into .venv (and Debian's chromium for the real-browser test when
# it is missing and we may install it), then run every test. The README's second command; .ci/run runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
python -m pip install --quiet --upgrade pip
python -m pip install --quiet -r requirements-dev.txt
python -m pip install --quiet --no-deps -e .  # the package itself: the requirements files list plain dependencies
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "note: /usr/bin/chromium is absent and cannot be installed here; the real-browser test will skip" >&2
  fi
fi
# The store tests run on PostgreSQL too: tests/conftest.py starts a throwaway server with initdb/pg_ctl (as the
# 'postgres' user when root) and skips those tests when the binaries are absent. Install Debian's server here.
if ! command -v initdb >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "note: PostgreSQL (initdb) is absent and cannot be installed here; the PostgreSQL store tests will skip" >&2
  fi
fi
# ESLint for the app's browser code (tests/test_keyqueue_static.py), at the versions of
# tools/eslint/package-lock.json, from the npm registry; Node also runs the key queue's arithmetic against the
# server (tests/test_keyqueue_live.py). Without Node and npm those tests skip.
if command -v node >/dev/null && command -v npm >/dev/null; then
  npm ci --prefix tools/eslint --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
else
  echo "note: node/npm are absent; the lint of empathy_app/static and the key queue's Node tests will skip" >&2
fi
# Two worker processes (the machines have 2 cores), a test file per worker at a time so that a module's fixtures
# (an app server, a Dask cluster) start once; EMPATHY_TEST_WORKERS=0 runs everything in this one process.
exec python -m pytest -n "${EMPATHY_TEST_WORKERS:-2}" --dist loadfile "$@"
