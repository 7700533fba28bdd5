#!/usr/bin/env bash
# Builds the bench protocol decoder fuzzer with clang/libFuzzer (no CMake) and runs it on a
# scratch copy of the seed corpus, so the checked-in corpus never changes.
#
#   tools/fuzz_decoder.sh [SECONDS]      default 60 (or $FUZZ_SECONDS)
#   FUZZ_BUILD_DIR=dir                   output directory, default <repo>/build-fuzz
#   CXX=clang++-14                       compiler, default clang++
#
# Exit status: 0 if clean or if clang++ is not installed (skipped), non-zero on a build
# failure or a finding; crash inputs are left in $FUZZ_BUILD_DIR/artifacts/.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-${FUZZ_SECONDS:-60}}"
build_dir="${FUZZ_BUILD_DIR:-$repo/build-fuzz}"
cxx="${CXX:-clang++}"

if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [[ "$seconds" -eq 0 ]]; then
  echo "fuzz_decoder.sh: SECONDS must be a positive integer, got '$seconds'" >&2
  exit 2
fi
# A CXX pointing at g++ cannot build libFuzzer targets, so only clang counts.
if ! command -v "$cxx" >/dev/null 2>&1 || ! "$cxx" --version 2>/dev/null | grep -qi clang; then
  echo "fuzz_decoder.sh: SKIPPED, no clang++ available (CXX=$cxx)"
  exit 0
fi

mkdir -p "$build_dir"
binary="$build_dir/decoder_fuzz"
echo "fuzz_decoder.sh: building $binary with $cxx"
"$cxx" -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I"$repo/drivers/include" \
  "$repo/tests/drivers/fuzz/decoder_fuzz.cpp" \
  "$repo/drivers/src/bench_protocol.cpp" \
  "$repo/drivers/src/crc32c.cpp" \
  "$repo/drivers/src/sequence_tracker.cpp" \
  -o "$binary"

work_corpus="$build_dir/corpus"
artifacts="$build_dir/artifacts"
rm -rf "$work_corpus"
mkdir -p "$work_corpus" "$artifacts"
cp "$repo"/tests/drivers/corpus/decoder/* "$work_corpus"/

echo "fuzz_decoder.sh: fuzzing for ${seconds}s on a copy of the corpus in $work_corpus"
status=0
# max_len above the largest valid datagram (156) so oversize inputs are explored too.
"$binary" -max_total_time="$seconds" -max_len=512 -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "$work_corpus" || status=$?

if [[ $status -ne 0 ]]; then
  echo "fuzz_decoder.sh: FAILED (exit $status); reproducer(s) in $artifacts:" >&2
  ls -l "$artifacts" >&2 || true
  exit "$status"
fi
echo "fuzz_decoder.sh: OK, no findings in ${seconds}s"
