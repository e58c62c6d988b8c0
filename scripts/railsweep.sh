#!/usr/bin/env bash
# Rail sweep: fixed --syq-rails counts against the automatic count (its
# first run after `syq tuner reset`, then its second run, which starts
# from what the first recorded), pushing one large file across a stand
# that scripts/netstand keeps up. scripts/tunersweep.sh is the same for
# --syq-workers on a local copy.
#
#   go run ./scripts/netstand up --name rs --rate 1g --rtt 50ms      # or: --no-wan --rails 4 --rail-rate 250m
#   CGO_ENABLED=0 go build -o /tmp/syq-new ./cmd/syq
#   NEW=/tmp/syq-new STAND=rs SIZE=1G REPS=3 scripts/railsweep.sh
#   go run ./scripts/netstand down --name rs
#
# Arms alternate order every round; every destination is checked (size
# and cmp against the source); each line is
# "ARM SECONDS MB/S load=LOAD1 rails=N ok|INVALID-...". The client's tuner
# cache lives in a temporary XDG_CACHE_HOME, never the user's; the helper
# is installed once, untimed, before the first round.
set -euo pipefail
NEW=${NEW:?the syq binary under test}
STAND=${STAND:-rs}
SIZE=${SIZE:-1G}
REPS=${REPS:-3}
ARMS=(${ARMS:-r1 r2 r4 r8 auto})
WORK=${WORK:-/dev/shm/syq-railsweep}
state=/tmp/syq-netstand-$STAND.json
[ -s "$state" ] || { echo "no stand $STAND up ($state missing)" >&2; exit 1; }
near=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["near_netns"])' "$state")
far=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["far_netns"])' "$state")
read -r host port user key < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["ssh_host"], s["ssh_port"], s["ssh_user"], s["ssh_key"])' "$state")
mkdir -p "$WORK/src" "$WORK/dst" "$WORK/remote-cache"
XDG_CACHE_HOME=$(mktemp -d /tmp/syq-railsweep.XXXXXX)
export XDG_CACHE_HOME
trap 'rm -rf "$XDG_CACHE_HOME" "$WORK/dst"' EXIT
log=$XDG_CACHE_HOME/stderr
rsh="ssh -F /dev/null -p $port -i $key -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o GlobalKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o SetEnv=XDG_CACHE_HOME=$WORK/remote-cache"
src=$WORK/src/big
[ -f "$src" ] && [ "$(stat -c %s "$src")" -eq "$(numfmt --from=iec "$SIZE")" ] || head -c "$SIZE" /dev/urandom >"$src"
bytes=$(stat -c %s "$src")
push() { nsenter --net=/run/netns/"$near" "$NEW" rsync -a --no-progress -e "$rsh" "$@" "$src" "$user@$host:$WORK/dst/"; }

echo "# stand $STAND: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"])' "$state"); file $SIZE; syq $($NEW --version 2>/dev/null | head -1)"
push >/dev/null 2>&1 || { echo "helper install run failed" >&2; exit 1; }

verify() {
	[ "$(stat -c %s "$WORK/dst/big" 2>/dev/null || echo 0)" -eq "$bytes" ] || { echo INVALID-size; return; }
	cmp -s "$src" "$WORK/dst/big" || { echo INVALID-content; return; }
	echo ok
}
timed() { # ARM SYQ-OPTIONS...
	rm -rf "$WORK/dst"; mkdir -p "$WORK/dst"; sync
	local load t0 t1 rc=0 secs
	load=$(cut -d' ' -f1 /proc/loadavg)
	t0=$(date +%s.%N)
	SYQ_DEBUG=1 push "${@:2}" >/dev/null 2>"$log" || rc=$?
	t1=$(date +%s.%N)
	[ "$rc" -eq 0 ] || { echo "$1: exit $rc"; tail -5 "$log"; }
	secs=$(echo "$t1 - $t0" | bc)
	printf '%s %.2f %.1f load=%s rails=%s %s\n' "$1" "$secs" "$(echo "$bytes / $secs / 1000000" | bc -l)" "$load" \
		"$(grep -c 'TLS 1.3' "$log")" "$(verify)"
	grep -h 'tuner: rails' "$log" | sed 's/^/    /' || true
}
for ((r = 0; r < REPS; r++)); do
	order=("${ARMS[@]}")
	if ((r % 2)); then mapfile -t order < <(printf '%s\n' "${ARMS[@]}" | tac); fi
	for a in "${order[@]}"; do
		case $a in
		r*) timed "$a" --syq-rails "${a#r}" ;;
		auto)
			"$NEW" tuner reset >/dev/null
			timed auto1
			timed auto2
			;;
		esac
	done
done
