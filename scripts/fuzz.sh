#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for SECONDS each (default 60), one after another,
# under `nice -n 19`. Needs a nightly toolchain and cargo-fuzz:
#   rustup toolchain install nightly && cargo install cargo-fuzz
# New corpus entries go to fuzz/corpus/<target> (not committed); the committed seeds are in
# fuzz/seeds/<target>. A crash leaves its input in fuzz/artifacts/<target>/ and stops the
# script with a non-zero status (docs/reliability.md: how to report it).
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz.sh: no nightly toolchain (rustup toolchain install nightly); nothing fuzzed" >&2
    exit 2
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: cargo-fuzz is missing (cargo install cargo-fuzz); nothing fuzzed" >&2
    exit 2
fi
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list --fuzz-dir fuzz)
fi
cargo +nightly fuzz build --fuzz-dir fuzz
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/seeds/$t"
    echo "fuzz.sh: $t for ${seconds}s"
    # One input's time limit: `play` runs whole scripts of up to 48 steps (an ASan build on
    # a loaded machine took up to 48 s on one, with no hang: docs/reliability.md, round 3).
    timeout=30
    if [ "$t" = play ]; then timeout=120; fi
    nice -n 19 cargo +nightly fuzz run --fuzz-dir fuzz "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout="$timeout" -print_final_stats=1
done
echo "fuzz.sh: every target ran ${seconds}s clean: ${targets[*]}"
