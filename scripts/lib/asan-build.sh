# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: the clang ASan + UBSan + libFuzzer build of
# the planner, simulator, CLI, their tests and the fuzz targets (no engine: LibTorch is not built
# with ASan; no GUI). One build serves both scripts.
# Env: SPPLAN_SANITIZE_DIR (default build-asan), SPPLAN_JOBS (default 2), CMAKE_CXX_COMPILER_LAUNCHER.

spplan_asan_dir=${SPPLAN_SANITIZE_DIR:-build-asan}

# Configures and builds into $spplan_asan_dir; exits 2 without clang.
spplan_asan_build() {
  if ! command -v clang++ >/dev/null; then
    echo "$1: clang++ not found (scripts/install-deps.sh installs clang and libFuzzer: libclang-rt-dev)" >&2
    exit 2
  fi
  local flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
  local start=$SECONDS
  cmake -S . -B "$spplan_asan_dir" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DSPPLAN_BUILD_ENGINE=OFF -DSPPLAN_BUILD_GUI=OFF -DSPPLAN_BUILD_BENCH=OFF -DSPPLAN_BUILD_FUZZ=ON >/dev/null
  cmake --build "$spplan_asan_dir" -j "${SPPLAN_JOBS:-2}"
  echo "$1: build took $((SECONDS - start)) s"
}

# Any report is a failure: UBSan's too (-fno-sanitize-recover), and leaks at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Fills folder $2 with fuzz target $1's seeds (real files, fuzz/seeds/) and every input that once
# made it fail (fuzz/regressions/NAME/), so each run starts from what is known to matter.
spplan_fuzz_seed_corpus() {
  local name=$1 corpus=$2 seed
  mkdir -p "$corpus"
  "$spplan_asan_dir/fuzz/spplan_fuzz_seeds" "$name" . | while read -r seed; do cp "$seed" "$corpus/"; done
  if [ -d "fuzz/regressions/$name" ]; then cp fuzz/regressions/"$name"/* "$corpus/"; fi
}

# Runs fuzz target $1 on corpus $2 with the libFuzzer options that follow; the log goes to $3.
# -timeout: one input running longer is a hang; -close_fd_mask=1: the CLI's tables on stdout.
spplan_fuzz_run() {
  local name=$1 corpus=$2 log=$3
  shift 3
  local failures="$spplan_asan_dir/fuzz-failures/$name"
  mkdir -p "$failures"
  "$spplan_asan_dir/fuzz/fuzz_$name" -timeout=10 -rss_limit_mb=2048 -close_fd_mask=1 \
    -artifact_prefix="$failures/" -print_final_stats=1 "$@" "$corpus" >"$log" 2>&1
}

# The number of inputs a finished run executed, from its log.
spplan_fuzz_inputs() {
  grep -o 'stat::number_of_executed_units: *[0-9]*' "$1" | grep -o '[0-9]*$' || echo "?"
}
