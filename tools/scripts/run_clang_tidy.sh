#!/usr/bin/env bash
# clang-tidy (Debian's clang-tidy-14, with the repository's .clang-tidy files) over every
# project source file in BUILD_DIR/compile_commands.json: runtime/, subsystems/, drivers/,
# rt_config/, tools/ and tests/. Headers of those folders are checked through the files that
# include them (HeaderFilterRegex); system and third-party headers are not. One clang-tidy per
# file, $(nproc) at a time; the output of each file with a finding is printed, and any finding
# fails the run.
#   tools/scripts/run_clang_tidy.sh [BUILD_DIR]       (default build/, configured by CMake)
# Exit codes: 0 no finding, 1 findings, 2 bad input (no compile_commands.json, no clang-tidy).
#
# A file takes 5-60 s (its headers are parsed and matched every time), the whole tree about
# 14 min on 2 cores. So a clean result is remembered under COSIM_TIDY_CACHE (default
# ~/.cache/cosim-clang-tidy; "off" disables it), keyed by the SHA-256 of everything the
# result depends on: the clang-tidy version, every .clang-tidy file, the compile command and
# the file preprocessed with comments kept (-E -C: all included headers' text, NOLINTs too).
# A file is skipped only when that key had a clean run; findings are never cached.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$root/build}" 2>/dev/null && pwd)" || {
  echo "run_clang_tidy: build directory ${1:-$root/build} does not exist" >&2
  exit 2
}
db="$build/compile_commands.json"
if [ ! -f "$db" ]; then
  echo "run_clang_tidy: $db missing: configure that directory with CMake first" \
    "(CMAKE_EXPORT_COMPILE_COMMANDS is on in CMakeLists.txt)" >&2
  exit 2
fi
tidy="${CLANG_TIDY:-clang-tidy-14}"
if ! command -v "$tidy" >/dev/null; then
  echo "run_clang_tidy: $tidy not found (Debian package clang-tidy, see install_deps.sh)" >&2
  exit 2
fi
cache_home="${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}"
cache="${COSIM_TIDY_CACHE:-${cache_home:+$cache_home/cosim-clang-tidy}}"
[ "$cache" = off ] && cache=""

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# CMake writes each entry as "directory", "command", "file" lines. One line per project file
# (nothing generated in the build directory): FILE <tab> DIRECTORY <tab> COMMAND, still
# JSON-escaped.
sed -n 's/^[[:space:]]*"\(directory\|command\|file\)": "\(.*\)",\{0,1\}$/\1 \2/p' "$db" |
  awk -v root="$root" '
    $1 == "directory" { dir = substr($0, 11) }
    $1 == "command" { cmd = substr($0, 9) }
    $1 == "file" {
      f = substr($0, 6)
      if (index(f, root "/") == 1 && substr(f, length(root) + 2) ~ /^(runtime|subsystems|drivers|rt_config|tools|tests)\//)
        print f "\t" dir "\t" cmd
    }' | sort -u -t $'\t' -k1,1 >"$out/entries"
count=$(wc -l <"$out/entries")
if [ "$count" -eq 0 ]; then
  echo "run_clang_tidy: no project source file in $db" >&2
  exit 2
fi

if [ -n "$cache" ]; then
  mkdir -p "$cache" 2>/dev/null || {
    echo "run_clang_tidy: cannot create $cache: every file is checked" >&2
    cache=""
  }
fi
if [ -n "$cache" ]; then
  find "$cache" -type f -mtime +30 -delete  # keys unused for a month
  {
    "$tidy" --version
    find "$root" \( -name 'build*' -prune \) -o -name .clang-tidy -print | sort |
      while read -r c; do
        echo "$c"
        cat "$c"
      done
  } >"$out/common"
fi

# One file: leaves NAME.log, plus NAME.fail when clang-tidy found something (WarningsAsErrors
# is '*') or could not parse the file, or NAME.hit when the cache says it is clean.
check_one() {
  local f="$1" dir="$2" cmd="$3" name key=""
  name="$out/$(echo "$f" | tr / _)"
  if [ -n "$cache" ]; then
    # JSON unescaping (\\ and \"), then the shell words CMake wrote, minus -o X and -c.
    cmd="$(printf '%s' "$cmd" | sed 's/\\\\/\x01/g; s/\\"/"/g; s/\x01/\\/g')"
    eval "set -- $cmd"
    local args=() skip=0 a
    for a in "$@"; do
      if [ $skip -eq 1 ]; then skip=0; elif [ "$a" = -o ]; then skip=1;
      elif [ "$a" != -c ]; then args+=("$a"); fi
    done
    if key="$({ cat "$out/common"; echo "$cmd"; (cd "$dir" && "${args[@]}" -E -C 2>/dev/null); } |
      sha256sum | cut -d' ' -f1)" && [ -e "$cache/$key" ]; then
      touch "$cache/$key" "$name.hit"
      return
    fi
  fi
  local t0=$SECONDS
  if "$tidy" -p "$build" --quiet "$f" >"$name.log" 2>&1; then
    if [ -n "$key" ]; then : >"$cache/$key"; fi
  else
    touch "$name.fail"
  fi
  echo "$((SECONDS - t0)) $f" >"$name.time"
}
export -f check_one
export out cache tidy build

start=$(date +%s)
seq "$count" | xargs -P "$(nproc)" -I{} bash -c '
  set -o pipefail
  IFS=$'"'\t'"' read -r f d c < <(sed -n "$1p" "$out/entries")
  check_one "$f" "$d" "$c"' _ {}

failed=0 hits=0
while IFS=$'\t' read -r f _; do
  name="$out/$(echo "$f" | tr / _)"
  [ -e "$name.hit" ] && hits=$((hits + 1))
  if [ -e "$name.fail" ]; then
    failed=$((failed + 1))
    echo "---- ${f#"$root"/}"
    # Drop clang's "N warnings generated." counts of the suppressed (system header) ones.
    grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' "$name.log" || true
  fi
done <"$out/entries"
# The slowest files, to watch the stage's share of the CI budget.
if compgen -G "$out/*.time" >/dev/null; then
  echo "run_clang_tidy: slowest files (s):"
  # sed reads to the end: with `head`, sort can die of SIGPIPE and pipefail fails the stage.
  sort -rn "$out"/*.time | sed -n "1,8{s|$root/|  |;p}"
fi
echo "run_clang_tidy: $count files, $failed with findings, $hits unchanged since a clean" \
  "check (${cache:-no cache}), $(($(date +%s) - start)) s"
[ "$failed" -eq 0 ] || exit 1
