#!/usr/bin/env bash
# From nothing to a running example: installs the build dependencies, builds, runs the quickstart.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
echo
./build/examples/quickstart
