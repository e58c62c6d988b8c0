#!/usr/bin/env bash
# Tuner sweep: fixed --syq-workers counts against the automatic tuner (its
# first run after `syq tuner reset`, then its second run) and reference
# binaries, on a local small-file copy. scripts/bench.sh compares tools;
# this compares settings of one tool, which the bench has no axis for.
#
#   go run ./scripts/gentree /dev/shm/tq/src          # 20k x 4 KiB in 256 dirs, on tmpfs
#   CGO_ENABLED=0 go build -o /tmp/syq-new ./cmd/syq
#   (cd ../main && CGO_ENABLED=0 go build -o /tmp/syq-main ./cmd/syq)
#   NEW=/tmp/syq-new REF=/tmp/syq-main REPS=5 scripts/tunersweep.sh
#
# Arms alternate order every round (METHOD.md rule 1); every destination is
# checked (file count and diff -r against the source); each line is
# "ARM SECONDS load=LOAD1 ok|INVALID-...". The cache lives in a temporary
# XDG_CACHE_HOME, never the user's.
set -euo pipefail
NEW=${NEW:?the syq binary under test}
REF=${REF:-}
SRC=${SRC:-/dev/shm/tq/src}
DST=${DST:-/dev/shm/tq/dst}
REPS=${REPS:-3}
ARMS=(${ARMS:-ref w1 w2 w4 w6 w8 w12 w16 w32 auto})
XDG_CACHE_HOME=$(mktemp -d /tmp/syq-tunersweep.XXXXXX)
export XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT
log=$XDG_CACHE_HOME/stderr

want_files=$(find "$SRC" -type f | wc -l)
verify() {
	[ "$want_files" -gt 0 ] || { echo INVALID-empty-source; return; }
	local n; n=$(find "$DST" -type f | wc -l)
	[ "$n" -eq "$want_files" ] || { echo "INVALID-count-$n"; return; }
	diff -r -q "$SRC" "$DST" >/dev/null || { echo INVALID-content; return; }
	echo ok
}
timed() { # ARM COMMAND...
	rm -rf "$DST"; sync
	local load t0 t1 rc=0
	load=$(cut -d' ' -f1 /proc/loadavg)
	t0=$(date +%s.%N)
	"${@:2}" >/dev/null 2>"$log" || rc=$?
	t1=$(date +%s.%N)
	[ "$rc" -eq 0 ] || { echo "$1: exit $rc"; cat "$log"; }
	printf '%s %.3f load=%s %s\n' "$1" "$(echo "$t1 - $t0" | bc)" "$load" "$(verify)"
}
for ((r = 0; r < REPS; r++)); do
	order=("${ARMS[@]}")
	if ((r % 2)); then mapfile -t order < <(printf '%s\n' "${ARMS[@]}" | tac); fi
	for a in "${order[@]}"; do
		case $a in
		ref) [ -n "$REF" ] && timed ref "$REF" rsync -a "$SRC/" "$DST/" ;;
		w*) timed "$a" "$NEW" rsync -a --syq-workers "${a#w}" "$SRC/" "$DST/" ;;
		auto)
			"$NEW" tuner reset >/dev/null
			timed auto1 env SYQ_DEBUG=1 "$NEW" rsync -a "$SRC/" "$DST/"
			grep -h 'tuner: cache:' "$log" || true
			timed auto2 env SYQ_DEBUG=1 "$NEW" rsync -a "$SRC/" "$DST/"
			grep -h 'tuner: cache:' "$log" || true
			;;
		esac
	done
done
