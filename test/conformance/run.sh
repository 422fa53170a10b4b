#!/usr/bin/env bash
# The official MCP conformance suite (pinned in package.json) against
# `pml connect --headless`: every auth scenario of spec 2025-11-25 or
# earlier, except the one docs/configuration.md "OAuth upstreams" lists with its reason.
# Usage: test/conformance/run.sh PML_BINARY   (after `npm ci` here)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pml=$(realpath "$1")
# The suite needs Node 22 or later; the pinned `node` package brings it.
export PATH="$here/node_modules/.bin:$PATH"
cmd="node $here/client.mjs $pml"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" # the suite writes its results under the current directory
status=0
# --suite auth holds the 2025-06-18 and 2025-11-25 scenarios; the 2025-03-26
# ones are run by name.
timeout 300 conformance client --suite auth --command "$cmd" || status=1
timeout 120 conformance client --scenario auth/2025-03-26-oauth-endpoint-fallback --command "$cmd" || status=1
exit $status
