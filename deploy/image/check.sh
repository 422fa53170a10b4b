#!/usr/bin/env bash
# Builds the gateway's container image without a daemon and checks it
# (docs/deploy.md): a static binary of this checkout with its commit and
# date, the image under 50 MB, non-root, no shell, and `pml version` run
# from the image's filesystem. Writes the image to $1 (default: a temp file).
#
# Usage: deploy/image/check.sh [OUT.tar]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
pkg=github.com/pml-go/pml/internal/buildinfo
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X $pkg.commit=$commit -X $pkg.date=$date" -o "$tmp/pml" ./cmd/pml
(cd deploy/image && PML_IMAGE_BINARY="$tmp/pml" PML_REQUIRE_IMAGE=1 go test -count=1 -v ./... | grep -E '^(---|ok|FAIL|\s+image_test|\s+(pml|commit|built|go|engine)\b)')
if [ -n "$out" ]; then
  (cd deploy/image && go run . -binary "$tmp/pml" -tag "pml:$(git describe --tags --always 2>/dev/null || echo dev)" -out "$out")
  echo "image: $out"
fi
