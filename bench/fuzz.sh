#!/usr/bin/env bash
# bench/fuzz.sh [SECONDS] [TARGET...]
#   Builds the libFuzzer targets (clang, ASan+UBSan, in build-fuzz/) and runs each for SECONDS
#   (default 600) from its seeds (test/fuzz/seeds/TARGET/), then prints per target: executions, executions per
#   second, crashes (inputs kept in build-fuzz/fuzz-artifacts/TARGET/). Exit status 1 if any
#   target crashed, leaked or timed out.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_EACH=${1:-600}
shift || true
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(fuzz_session fuzz_bts fuzz_dbt_ring fuzz_svr4 fuzz_valgrind_replies fuzz_agent fuzz_elf_symbols)
FUZZ_DIR=${FUZZ_DIR:-$ROOT/build-fuzz}

if [[ ! -f $FUZZ_DIR/build.ninja ]]; then
  CXX=clang++ CC=clang meson setup "$FUZZ_DIR" "$ROOT" -Dfuzz=true -Dtests=false >/dev/null || exit 1
fi
ninja -C "$FUZZ_DIR" "${TARGETS[@]/#/test/fuzz/}" >/dev/null || { echo "fuzz: build failed" >&2; exit 1; }

status=0
printf '%-22s %8s %14s %10s %8s\n' target seconds executions "exec/s" crashes
for target in "${TARGETS[@]}"; do
  corpus=$(mktemp -d)
  if [[ -d $ROOT/test/fuzz/seeds/$target ]]; then
    cp "$ROOT/test/fuzz/seeds/$target"/* "$corpus/"
  fi
  artifacts=$FUZZ_DIR/fuzz-artifacts/$target
  mkdir -p "$artifacts"
  log=$FUZZ_DIR/fuzz-artifacts/$target.log
  "$FUZZ_DIR/test/fuzz/$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1
  rc=$?
  rm -rf "$corpus"
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  runs=${runs:-0}
  crashes=$(find "$artifacts" -type f | wc -l)
  ((rc != 0 && crashes == 0)) && crashes=1
  printf '%-22s %8s %14s %10s %8s\n' "$target" "$SECONDS_EACH" "$runs" "$((runs / SECONDS_EACH))" "$crashes"
  if ((rc != 0)); then
    status=1
    echo "  $target failed (exit $rc): see $log" >&2
  fi
done
exit $status
