#!/usr/bin/env bash
# Compares the reply path of two builds on this machine: the working tree
# against OLD (a git revision), through the built binaries, alternating
# old and new PAIRS times so both meet the same minutes of a noisy
# machine, and prints each run and the medians.
#
#   scripts/bench-ab.sh OLD [PAIRS] [BENCHTIME]
#
# Each run is BenchmarkReplyBinary (make bench-reply) with NEO_TEST_BINARY
# set to one build. Needs node_modules (npm ci) for the MCP server.
set -euo pipefail
old=${1:?usage: scripts/bench-ab.sh OLD-REVISION [PAIRS] [BENCHTIME]}
pairs=${2:-6}
benchtime=${3:-2000x}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/old" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git -C "$root" worktree add --quiet --detach "$work/old" "$old"
(cd "$work/old" && go build -o "$work/neobot-old" ./cmd/neobot)
(cd "$root" && go build -o "$work/neobot-new" ./cmd/neobot)
(cd "$root" && go test -c -o "$work/bench.test" ./cmd/neobot)

cd "$root/cmd/neobot"
for i in $(seq "$pairs"); do
  for build in old new; do
    NEO_TEST_BINARY="$work/neobot-$build" "$work/bench.test" -test.run '^$' \
      -test.bench ReplyBinary -test.benchtime="$benchtime" -test.timeout 20m |
      awk -v b="$build" '/^BenchmarkReplyBinary/ {
        for (i = 5; i < NF; i += 2) m[$(i+1)] = $i
        printf "%s cpu-per-reply-ms %s reply-p50-ms %s first-status-p50-ms %s ack-p99-ms %s\n", b,
          m["cpu-per-reply-ms"], m["reply-p50-ms"], m["first-status-p50-ms"], m["ack-p99-ms"]
      }'
  done
done | tee "$work/runs"

echo "medians over $pairs runs each (old = $old, new = working tree):"
for build in old new; do
  for col in 3 5 7 9; do
    grep "^$build " "$work/runs" | awk -v c="$col" '{print $c}' | sort -n |
      awk '{v[NR] = $1} END {printf "%s ", (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'
  done | awk -v b="$build" '{printf "%s: cpu-per-reply %s ms, reply p50 %s ms, first status p50 %s ms, ack p99 %s ms\n", b, $1, $2, $3, $4}'
done
