#!/usr/bin/env bash
# Sets up everything the tests need on this machine and prints the lines
#   export NAME=value
# for the caller to eval:
#   eval "$(bash .ci/test-env.sh)" && go test -race ./...
# It installs bubblewrap (the command agent's sandbox) when missing, checks
# that it can make the namespaces the sandbox uses, and starts a throwaway
# PostgreSQL cluster (.ci/postgres.sh). Progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v bwrap >/dev/null; then
  echo "installing bubblewrap" >&2
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap) >&2
  else
    (sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap) >&2
  fi
fi
# The sandbox tests skip only where the kernel forbids user namespaces. When
# this machine allows them, they are required: a skip would then hide a
# broken sandbox, so the tests fail instead.
if bwrap --unshare-all --die-with-parent --ro-bind / / -- true 2>/dev/null; then
  echo "export DOCSAPI_TEST_SANDBOX=required"
else
  echo "bubblewrap cannot make namespaces here (user namespaces are off?): the sandbox tests will skip" >&2
fi

bash .ci/postgres.sh
