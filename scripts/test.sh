#!/usr/bin/env bash
# Runs every syq test on a fresh Debian machine: installs what the tests
# need (rsync as the reference, xfsprogs/btrfs-progs for the reflink tests,
# util-linux for unprivileged scenarios, openssh-server/-client for the
# remote-shell tests through scripts/sshtest) when missing, then runs the Go
# tests with the race detector, plus vet and gofmt.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v rsync >/dev/null || need+=(rsync)
command -v mkfs.xfs >/dev/null || need+=(xfsprogs)
command -v mkfs.btrfs >/dev/null || need+=(btrfs-progs)
command -v filefrag >/dev/null || need+=(e2fsprogs)
command -v setpriv >/dev/null || need+=(util-linux)
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null || need+=(openssh-client)
command -v ip >/dev/null || need+=(iproute2)       # scripts/netstand's namespaces
command -v ping >/dev/null || need+=(iputils-ping) # scripts/netstand measures its links' round trip
command -v rclone >/dev/null || need+=(rclone)     # the benchmark smoke run's other arm
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "installing test dependencies: ${need[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq "${need[@]}" >/dev/null
	else
		echo "missing test dependencies (run as root to install): ${need[*]}" >&2
		exit 1
	fi
fi

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt needed on: $unformatted" >&2
	exit 1
fi
go vet ./...
go test -race -count=1 -timeout 20m ./... "$@"

# A short fuzz run of every wire decoder target (their seed corpora already
# ran above as plain tests): 60,000 inputs each, a few seconds. A count,
# not a time: a time limit sometimes ends a clean run with a spurious
# "context deadline exceeded" failure.
for target in $(go test ./wire -list '^Fuzz' | grep '^Fuzz'); do
	go test ./wire -run '^$' -fuzz "^${target}\$" -fuzztime=60000x
done

# The benchmark end to end at its tiny scale (issue 8's smoke check): every
# cell verified, the JSON, report and SVG charts produced. Root only (it
# mounts file systems); it says so and skips otherwise.
SYQ_BENCH_SMOKE=1 go test -count=1 -timeout 15m -run '^TestBenchSmoke$' ./scripts/bench
