#!/usr/bin/env bash
# Runs rsync's own testsuite (runtests.py and testsuite/*_test.py from an
# rsync source tree) with syq standing in for rsync: a link named "rsync"
# to a syq built from this checkout. With --baseline the same tests also
# run against the rsync built from that tree, and the tests that pass there
# but not with syq are listed: those are syq's differences, the rest are
# the machine's (a missing feature of the kernel, no unshare, ...).
#
# The rsync tree is needed for its tests and for the C helper programs
# they call (tls, getgroups, trimslash, ...); it is built once in
# OUTDIR/rsync-build (configure, make, make check-progs; as root the build
# dependencies are installed when missing). RSYNC_SOURCE may be a source
# tree or a bare git repository (its HEAD is exported).
#
# Not part of scripts/test.sh: it needs rsync's source, which a fresh
# machine does not have, and takes several minutes on two cores.
#
# usage: scripts/rsync-testsuite.sh [-j N] [--baseline] [--race-timeout S]
#            RSYNC_SOURCE OUTDIR [TEST-GLOB...]
set -euo pipefail

jobs=2
baseline=0
race=3
while [ $# -gt 0 ]; do
	case "$1" in
	-j) jobs=$2; shift 2 ;;
	--baseline) baseline=1; shift ;;
	--race-timeout) race=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "rsync-testsuite: unknown option $1" >&2; exit 1 ;;
	*) break ;;
	esac
done
if [ $# -lt 2 ]; then
	echo "usage: $0 [-j N] [--baseline] [--race-timeout S] RSYNC_SOURCE OUTDIR [TEST-GLOB...]" >&2
	exit 1
fi
src=$(realpath "$1")
out=$(realpath -m "$2")
shift 2
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/bin"

build="$out/rsync-build"
if [ ! -x "$build/rsync" ] || [ ! -x "$build/tls" ]; then
	need=()
	for tool in autoconf:autoconf aclocal:automake make:make gcc:gcc python3:python3; do
		command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
	done
	for hdr in acl/libacl.h:libacl1-dev attr/libattr.h:libattr1-dev popt.h:libpopt-dev; do
		[ -e "/usr/include/${hdr%%:*}" ] || need+=("${hdr#*:}")
	done
	if [ ${#need[@]} -gt 0 ]; then
		if [ "$(id -u)" != 0 ]; then
			echo "rsync-testsuite: missing build dependencies (run as root to install): ${need[*]}" >&2
			exit 1
		fi
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq "${need[@]}" >/dev/null
	fi
	rm -rf "$build"
	mkdir -p "$build"
	if [ -f "$src/HEAD" ] && [ -d "$src/objects" ]; then
		git --git-dir="$src" archive HEAD | tar -x -C "$build"
	else
		cp -a "$src/." "$build/"
	fi
	echo "rsync-testsuite: building rsync and its test programs in $build"
	(cd "$build" &&
		./configure --disable-openssl --disable-xxhash --disable-zstd \
			--disable-lz4 --disable-md2man >"$out/build.log" 2>&1 &&
		make -j"$jobs" rsync >>"$out/build.log" 2>&1 &&
		make check-progs >>"$out/build.log" 2>&1) || {
		echo "rsync-testsuite: building rsync failed, see $out/build.log" >&2
		exit 1
	}
fi

(cd "$repo" && CGO_ENABLED=0 go build -o "$out/bin/syq" ./cmd/syq)
ln -sf syq "$out/bin/rsync"

# run BIN LABEL: runtests.py against BIN, output in OUTDIR/LABEL.out. Its
# exit status (failures) is not this script's: the summary below is.
run() {
	local bin=$1 label=$2
	shift 2
	echo "rsync-testsuite: $label: running ($bin)"
	(cd "$build" && ./runtests.py -j "$jobs" --race-timeout "$race" \
		--rsync-bin "$bin" "$@" >"$out/$label.out" 2>&1) || true
}
results() { # LABEL: "RESULT name" lines, sorted by name
	grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL)[[:space:]]' "$out/$1.out" | awk '{print $2, $1}' | sort
}
summary() {
	printf '%s: %s passed, %s failed, %s skipped\n' "$1" \
		"$(results "$1" | grep -c ' PASS$' || true)" \
		"$(results "$1" | grep -cE ' (FAIL|ERROR)$' || true)" \
		"$(results "$1" | grep -c ' SKIP$' || true)"
}

run "$out/bin/rsync" syq "$@"
summary syq
if [ "$baseline" = 1 ]; then
	run "$build/rsync" rsync "$@"
	summary rsync
	join <(results rsync) <(results syq) |
		awk '$2 == "PASS" && $3 != "PASS" {print "  " $1 ": rsync PASS, syq " $3}' >"$out/differences.txt"
	echo "tests rsync passes and syq does not ($out/differences.txt):"
	cat "$out/differences.txt"
else
	echo "failed with syq:"
	results syq | awk '$2 == "FAIL" || $2 == "ERROR" {print "  " $1 ": " $2}'
fi
