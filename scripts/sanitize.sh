#!/usr/bin/env bash
# The reliability job (docs/RELIABILITY.md):
#   1. the whole test suite built with AddressSanitizer + UBSan (LeakSanitizer
#      included) and run; the Python ctypes tests cannot load an ASan library and
#      the install check builds an uninstrumented consumer, so those two are left out,
#      and with them the fault-site coverage check, which needs the whole suite's
#      sites (the normal build's ctest runs it);
#   2. the threading tests built with ThreadSanitizer and run;
#   3. each libFuzzer target for CT_FUZZ_SECONDS (default 60) from the corpus in
#      fuzz/corpus/, the whole fuzz stage bounded by CT_FUZZ_TOTAL_SECONDS.
# Knobs: CC (default clang, else gcc: no fuzzing then), CT_SANITIZE_STAGES
# (default "asan tsan fuzz"), CT_SANITIZE_DIR (default build-sanitize).
set -euo pipefail
cd "$(dirname "$0")/.."

stages="${CT_SANITIZE_STAGES:-asan tsan fuzz}"
root="${CT_SANITIZE_DIR:-build-sanitize}"
fuzz_seconds="${CT_FUZZ_SECONDS:-60}"
fuzz_total="${CT_FUZZ_TOTAL_SECONDS:-$((2 * fuzz_seconds))}"
jobs="$(nproc)"
tsan_tests="test_threads test_backend test_cpu_ops test_cpu_mul_mat test_stress test_async"
fuzz_targets="fuzz_ops fuzz_quant"

if [ -z "${CC:-}" ]; then
  if command -v clang >/dev/null; then CC=clang; else CC=gcc; fi
fi
export CC
started=$(date +%s)
summary=()
log() { printf 'sanitize: %s\n' "$*"; }
has_stage() { case " $stages " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# The sanitizers' own settings: stop at the first report, with a stack.
# use_sigaltstack=0: PoCL's LLVM installs its own (malloc'd) alternate signal
# stack on the thread that compiles a program, which ASan would then try to unmap.
asan_default="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
asan_default="$asan_default:check_initialization_order=1:use_sigaltstack=0"
export ASAN_OPTIONS="${ASAN_OPTIONS:-$asan_default}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"
# Leaks inside the OpenCL driver (PoCL, its LLVM, their C++ runtime) are not
# ours; the library is C, so everything it allocates is still reported.
supp="$PWD/$root/lsan.supp"
mkdir -p "$root"
printf 'leak:libpocl\nleak:libLLVM\nleak:libOpenCL\nleak:libclang-cpp\nleak:libhwloc\nleak:libstdc++\n' >"$supp"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$supp:print_suppressions=0}"

configure() { # dir, extra cmake args...
  local dir="$1"; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCT_WERROR=ON "$@" >/dev/null
}

if has_stage asan; then
  t0=$(date +%s)
  log "AddressSanitizer + UBSan build of the whole suite ($CC)"
  configure "$root/asan" -DCT_SANITIZE=address,undefined
  cmake --build "$root/asan" -j"$jobs"
  asan_log="$root/asan/ctest.log"
  if ! ctest --test-dir "$root/asan" --output-on-failure -j"$jobs" -E '^(py_.*|install_consumer|fault_site_coverage)$' \
      2>&1 | tee "$asan_log"; then
    # LeakSanitizer's exit-time scan stops every thread of the process with a
    # tracer; now and then (about 1 run in 25 of the OpenCL tests with another
    # test beside them) the tracer itself faults on one of PoCL's worker threads
    # and LSan aborts without a report ("Tracer caught signal ... LeakSanitizer
    # has encountered a fatal error"). Only that failure, with no sanitizer
    # report and no failed check in the log, gets one rerun of the failed tests.
    if grep -q 'Tracer caught signal' "$asan_log" &&
        ! grep -Eq 'ERROR: (AddressSanitizer|LeakSanitizer: detected)|runtime error:|[1-9][0-9]* failed' "$asan_log"; then
      log "LeakSanitizer's tracer crashed at a test's exit (no report); rerunning the failed tests once"
      ctest --test-dir "$root/asan" --output-on-failure --rerun-failed
    else
      exit 1
    fi
  fi
  n=$(ctest --test-dir "$root/asan" -N -E '^(py_.*|install_consumer|fault_site_coverage)$' | sed -n 's/^Total Tests: //p')
  summary+=("ASan+UBSan: $n tests passed ($(( $(date +%s) - t0 )) s)")
fi

if has_stage tsan; then
  t0=$(date +%s)
  log "ThreadSanitizer build of the threading tests ($CC)"
  configure "$root/tsan" -DCT_SANITIZE=thread -DCT_BUILD_TOOLS=OFF
  # shellcheck disable=SC2086
  cmake --build "$root/tsan" -j"$jobs" --target $tsan_tests
  regex="^($(echo $tsan_tests | tr ' ' '|'))\$"
  ctest --test-dir "$root/tsan" --output-on-failure -j"$jobs" -R "$regex"
  summary+=("TSan: $(echo $tsan_tests | wc -w) tests passed ($(( $(date +%s) - t0 )) s)")
fi

if has_stage fuzz; then
  if ! "$CC" --version 2>/dev/null | grep -q clang; then
    log "fuzzing needs clang (libFuzzer); CC=$CC: skipped"
    summary+=("fuzz: skipped (no clang)")
  else
    log "libFuzzer targets, ${fuzz_seconds} s each, ${fuzz_total} s in all"
    configure "$root/fuzz" -DCT_SANITIZE=address,undefined -DCT_FUZZ=ON -DCT_BUILD_TESTS=OFF -DCT_BUILD_TOOLS=OFF
    # shellcheck disable=SC2086
    cmake --build "$root/fuzz" -j"$jobs" --target $fuzz_targets
    fuzz_end=$(( $(date +%s) + fuzz_total ))
    for t in $fuzz_targets; do
      left=$(( fuzz_end - $(date +%s) ))
      secs=$(( fuzz_seconds < left ? fuzz_seconds : left ))
      if [ "$secs" -le 0 ]; then
        summary+=("$t: skipped (fuzz time used up)")
        continue
      fi
      # New inputs go to a scratch corpus; the repository's is read only.
      work="$root/fuzz/corpus-$t"
      mkdir -p "$work" "$root/fuzz/artifacts"
      out="$root/fuzz/$t.log"
      if ! "$root/fuzz/fuzz/$t" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
          -artifact_prefix="$root/fuzz/artifacts/$t-" "$work" "fuzz/corpus/$t" >"$out" 2>&1; then
        tail -n 60 "$out"
        log "$t FAILED: the input is in $root/fuzz/artifacts/ (replay: $root/fuzz/fuzz/$t <file>)"
        exit 1
      fi
      execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out")
      summary+=("$t: $execs executions in $secs s, no crash, no leak")
    done
  fi
fi

for line in "${summary[@]}"; do log "$line"; done
log "done in $(( $(date +%s) - started )) s"
