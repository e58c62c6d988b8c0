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
# With STAND=NAME (a stand scripts/netstand keeps up, e.g. `netstand up
# --name ls --no-wan --rails 1 --rail-rate 0`: one unlimited link, sshd in
# the far namespace) every arm pushes over ssh to the far side instead;
# the namespaces share this machine's files, so DST is checked the same
# way.
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

# to: the destination operand; via: what runs a copy (nsenter into the
# stand's near namespace, and -e with its ssh, when STAND is set).
to=$DST/
via=()
if [ -n "${STAND:-}" ]; then
	state=/tmp/syq-netstand-$STAND.json
	[ -s "$state" ] || { echo "no stand $STAND up ($state missing)" >&2; exit 1; }
	near=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["near_netns"])' "$state")
	read -r host port user key < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["ssh_host"], s["ssh_port"], s["ssh_user"], s["ssh_key"])' "$state")
	mkdir -p "$XDG_CACHE_HOME/remote"
	rsh="ssh -F /dev/null -p $port -i $key -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o GlobalKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o SetEnv=XDG_CACHE_HOME=$XDG_CACHE_HOME/remote"
	to=$user@$host:$DST/
	via=(nsenter --net=/run/netns/"$near")
	# The helper is installed once, untimed.
	"${via[@]}" "$NEW" rsync -a -e "$rsh" "$SRC/" "$to" >/dev/null
	syqrun() { "${via[@]}" "$@" -e "$rsh"; }
else
	syqrun() { "$@"; }
fi

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
		ref) [ -n "$REF" ] && timed ref syqrun "$REF" rsync -a "$SRC/" "$to" ;;
		w*) timed "$a" syqrun "$NEW" rsync -a --syq-workers "${a#w}" "$SRC/" "$to" ;;
		auto)
			"$NEW" tuner reset >/dev/null
			timed auto1 syqrun env SYQ_DEBUG=1 "$NEW" rsync -a "$SRC/" "$to"
			grep -h 'tuner: cache:' "$log" || true
			timed auto2 syqrun env SYQ_DEBUG=1 "$NEW" rsync -a "$SRC/" "$to"
			grep -h 'tuner: cache:' "$log" || true
			;;
		esac
	done
done
