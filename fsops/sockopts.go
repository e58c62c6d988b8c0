package fsops

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The IP_TOS values of <netinet/ip.h>, which x/sys/unix leaves out.
const (
	iptosLowDelay   = 0x10
	iptosThroughput = 0x08
)

// socketOption is one name of rsync's socket option table.
type socketOption struct {
	level, opt int
	on         int  // for a flag that sets a fixed value (IPTOS_*); 0: the value given
	fixed      bool // takes no value
}

var socketOptions = map[string]socketOption{
	"SO_KEEPALIVE":     {level: unix.SOL_SOCKET, opt: unix.SO_KEEPALIVE},
	"SO_REUSEADDR":     {level: unix.SOL_SOCKET, opt: unix.SO_REUSEADDR},
	"SO_BROADCAST":     {level: unix.SOL_SOCKET, opt: unix.SO_BROADCAST},
	"TCP_NODELAY":      {level: unix.IPPROTO_TCP, opt: unix.TCP_NODELAY},
	"IPTOS_LOWDELAY":   {level: unix.IPPROTO_IP, opt: unix.IP_TOS, on: iptosLowDelay, fixed: true},
	"IPTOS_THROUGHPUT": {level: unix.IPPROTO_IP, opt: unix.IP_TOS, on: iptosThroughput, fixed: true},
	"SO_SNDBUF":        {level: unix.SOL_SOCKET, opt: unix.SO_SNDBUF},
	"SO_RCVBUF":        {level: unix.SOL_SOCKET, opt: unix.SO_RCVBUF},
	"SO_SNDLOWAT":      {level: unix.SOL_SOCKET, opt: unix.SO_SNDLOWAT},
	"SO_RCVLOWAT":      {level: unix.SOL_SOCKET, opt: unix.SO_RCVLOWAT},
	"SO_SNDTIMEO":      {level: unix.SOL_SOCKET, opt: unix.SO_SNDTIMEO},
	"SO_RCVTIMEO":      {level: unix.SOL_SOCKET, opt: unix.SO_RCVTIMEO},
}

// SetSocketOptions applies rsync's socket options (--sockopts, a
// daemon's "socket options") to a connection: names separated by
// spaces, tabs or commas, "NAME=N" for a value (else 1). It returns
// rsync's complaints about what it could not apply; the rest applies.
func SetSocketOptions(conn syscall.Conn, spec string) []string {
	var problems []string
	raw, err := conn.SyscallConn()
	if err != nil {
		return []string{fmt.Sprintf("failed to set socket options: %v", err)}
	}
	for _, tok := range strings.FieldsFunc(spec, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' }) {
		name, val, hasVal := strings.Cut(tok, "=")
		value := 1
		if hasVal {
			value = Atoi(val)
		}
		o, ok := socketOptions[name]
		if !ok {
			problems = append(problems, "Unknown socket option "+name)
			continue
		}
		if o.fixed {
			if hasVal {
				problems = append(problems, fmt.Sprintf("syntax error -- %s does not take a value", name))
			}
			value = o.on
		}
		var serr error
		if err := raw.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), o.level, o.opt, value) }); err != nil {
			serr = err
		}
		if serr != nil {
			problems = append(problems, fmt.Sprintf("failed to set socket option %s: %s", name, ErrText(serr)))
		}
	}
	return problems
}

// Atoi reads leading digits (with a sign) as C's atoi does, which is
// how rsync reads numbers in its configuration and socket options.
func Atoi(s string) int {
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || end == 0 && (s[0] == '-' || s[0] == '+')) {
		end++
	}
	n, _ := strconv.Atoi(s[:end])
	return n
}
