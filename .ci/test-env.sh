#!/usr/bin/env bash
# Sets up everything the tests need on this machine and prints the lines
#   export NAME=value
# for the caller to eval:
#   eval "$(bash .ci/test-env.sh)" && go test -race ./... ./server/...
# It installs bubblewrap (the command agent's sandbox) and Chromium (the
# dashboard's browser tests) when missing, checks that bubblewrap can make
# the namespaces the sandbox uses, and starts a throwaway PostgreSQL cluster
# (.ci/postgres.sh). Progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=apt.sh
. .ci/apt.sh

command -v bwrap >/dev/null || apt_install bubblewrap
# The sandbox tests skip only where the kernel forbids user namespaces. When
# this machine allows them, they are required: a skip would then hide a
# broken sandbox, so the tests fail instead.
if bwrap --unshare-all --die-with-parent --ro-bind / / -- true 2>/dev/null; then
  echo "export DOCSAPI_TEST_SANDBOX=required"
else
  echo "bubblewrap cannot make namespaces here (user namespaces are off?): the sandbox tests will skip" >&2
fi

# The dashboard's browser tests find chromium, chromium-browser or
# google-chrome on PATH, and skip without one; where one is installed they
# are required, so that a skip fails instead.
has_browser() { command -v chromium || command -v chromium-browser || command -v google-chrome; } >/dev/null
has_browser || apt_install chromium
echo "export DOCSAPI_TEST_BROWSER=required"

# The npm client test (server/assistant) reads the assistant's stream with
# the ai package on Node.js: Debian's nodejs and npm where no node is
# installed, and the packages the committed lock pins (npm ci checks their
# hashes, and prefers its cache to the registry). Where they are installed
# the test is required, so that a skip fails instead.
command -v node >/dev/null || apt_install nodejs npm
command -v npm >/dev/null || apt_install npm
(cd server/assistant/testdata/aiclient && npm ci --prefer-offline --no-audit --no-fund >&2)
echo "export DOCSAPI_TEST_NODE=required"

# The race detector waits a second as each test binary exits, for races in
# goroutines still running then. The tests' races are reported as they
# run, and go test starts a binary per package: the waits add up.
echo "export GORACE=\"${GORACE:+$GORACE }atexit_sleep_ms=0\""

bash .ci/postgres.sh
