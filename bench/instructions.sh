#!/bin/bash
# Instructions per corpus pass of the rewrite, against a bare '<' scan, for one or more
# builds of internal/rewrite's test binary: the steady companion of BenchmarkCorpus's
# thread-CPU ratio, which swings by a fifth between runs on a shared 2-core machine.
# Counts come from valgrind's cachegrind (no cache simulation), which counts the same for
# the same binary and input whatever else the machine runs, so a change of 1 % shows. Each
# figure is (run of 5 iterations − run of 1) / 4, which takes out start-up and the corpus
# load. Valgrind's CPU model has no AVX-512 (the builds' AVX2 paths run, as on most hosts)
# and counts an instruction as one whatever it costs: a vector compare of 32 bytes and a
# byte compare weigh the same, so the ratio guides, and BenchmarkCorpus decides.
# A measuring tool, never in CI. Needs valgrind (apt-get install -y valgrind).
# usage: bench/instructions.sh /path/to/corpus TEST_BINARY...
#   (cd "$BEFORE" && go test -c -o /tmp/before.test ./internal/rewrite/)
#   go test -c -o /tmp/after.test ./internal/rewrite/
#   bench/instructions.sh /path/to/corpus /tmp/before.test /tmp/after.test
set -eu
corpus=${1:?corpus folder}; shift
[ $# -gt 0 ] || { echo "usage: $0 CORPUS TEST_BINARY..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install -y valgrind)" >&2; exit 2; }
cd "$(dirname "$0")/../internal/rewrite" # the benchmark's own folder, as go test runs it
# One sub-benchmark, N iterations: the instruction count of the whole process. Go's
# asynchronous preemption signals upset valgrind, and one P and no GC keep the count steady.
count() {
  GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 GOGC=off SSATD_CORPUS="$corpus" \
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$1" -test.run '^$' -test.bench "BenchmarkCorpus/impl=$2\$" -test.benchtime "${3}x" 2>&1 >/dev/null |
    awk '/I *refs/ {gsub(",", "", $NF); print $NF}'
}
printf '%-28s %14s %14s %9s %14s %9s\n' binary scan rewrite ratio rewrite_no_url ratio
for bin in "$@"; do
  row=()
  for impl in scan rewrite rewrite_no_url; do
    one=$(count "$bin" $impl 1); five=$(count "$bin" $impl 5)
    row+=($(( (five - one) / 4 )))
  done
  awk -v b="$bin" -v s="${row[0]}" -v r="${row[1]}" -v n="${row[2]}" \
    'BEGIN {printf "%-28s %14d %14d %8.3fx %14d %8.3fx\n", b, s, r, r/s, n, n/s}'
done
