#!/usr/bin/env bash
# No-op push over the stand: 5 interleaved runs of each binary, one small file already up to date.
set -euo pipefail
STAND=${STAND:-rs}
state=/tmp/syq-netstand-$STAND.json
read -r near host port user key < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["near_netns"], s["ssh_host"], s["ssh_port"], s["ssh_user"], s["ssh_key"])' "$state")
W=/dev/shm/tr-noop; mkdir -p $W/src $W/rc; echo hi > $W/src/f
rsh="ssh -F /dev/null -p $port -i $key -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o GlobalKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o SetEnv=XDG_CACHE_HOME=$W/rc"
export XDG_CACHE_HOME=$(mktemp -d /tmp/tr-noop.XXXXXX)
run() { nsenter --net=/run/netns/$near "$1" rsync -a --no-progress -e "$rsh" $W/src/ $user@$host:$W/dst-$2/; }
for b in base new; do bin=/tmp/tr-syq; [ $b = base ] && bin=/tmp/tr-syq-base; run $bin $b; SYQ_DEBUG=1 run $bin $b 2>&1 | grep -E "rail" | head -4; done
for i in 1 2 3 4 5; do
  order="base new"; ((i % 2)) || order="new base"
  for b in $order; do
    bin=/tmp/tr-syq; [ $b = base ] && bin=/tmp/tr-syq-base
    t0=$(date +%s.%N); run $bin $b; t1=$(date +%s.%N)
    printf '%s %.3f load=%s\n' $b "$(echo "$t1 - $t0" | bc)" "$(cut -d' ' -f1 /proc/loadavg)"
  done
done
