#!/usr/bin/env bash
# Benchmark entry point: builds scripts/bench once and runs it as root.
#
#   scripts/bench.sh --scale small --publish docs  # all cells, minutes; report into docs/benchmarks.md + docs/bench/*.svg
#   scripts/bench.sh --scale full --publish docs   # the real numbers (quiet machine!)
#   scripts/bench.sh --scale tiny                  # CI smoke (what TestBenchSmoke runs)
#   scripts/bench.sh --cells small,noop --reps 5
#   scripts/bench.sh --cells ssh --scale full      # remote cells over the bench's own sshd on 127.0.0.1
#   scripts/bench.sh --cells wan,nfs,rails         # stand cells (scripts/netstand: WAN relay, sshfs, tbf rails); only when named
#   scripts/bench.sh --syq /path/to/syq --out /tmp/results
#   scripts/bench.sh --report-from /tmp/results --publish docs   # rewrite the report from a run's JSON
#
# Every run writes env.json, summary.json, runs.jsonl, report.md and one
# SVG chart per cell into its --out directory.
#
# Flags: see `scripts/bench.sh -h`. Needs: rsync, rclone, cp, tar, mkfs.ext4,
# mkfs.xfs, losetup; the ssh-* cells also sshd, ssh, ssh-keygen. Images and mount points live in /var/tmp/syq-bench
# (override with --workdir); the images are kept between runs on purpose.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
tmp="$(mktemp -d /tmp/syq-bench-build.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bench" ./scripts/bench
"$tmp/bench" --repo "$repo" "$@"
