package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"syq/wire"
)

// settleSizes reads --max-size and --min-size as given.
func settleSizes(inv *Invocation) error {
	for _, lim := range []struct {
		arg, name string
		to        **int64
	}{{inv.maxSize, "max-size", &inv.Opts.MaxSize}, {inv.minSize, "min-size", &inv.Opts.MinSize}} {
		if lim.arg == "" {
			continue
		}
		n, err := parseSizeArg(lim.arg, 'b', lim.name, 0)
		if err != nil {
			return err
		}
		*lim.to = &n
	}
	return nil
}

// parseSizeArg reads a size as rsync's options do (--max-size,
// --min-size, --bwlimit): a decimal number with an optional fraction,
// an optional unit letter (b, k, m, g, t, p; def when none), "b" after
// it for powers of 1000 or "ib"/nothing for powers of 1024, and an
// optional "+1" or "-1" to nudge the result by one byte.
func parseSizeArg(arg string, def byte, opt string, minValue int64) (int64, error) {
	bad := func(why string) error { return &UsageError{Msg: fmt.Sprintf("--%s=%s is %s", opt, arg, why)} }
	i := 0
	for i < len(arg) && arg[i] >= '0' && arg[i] <= '9' {
		i++
	}
	if i < len(arg) && arg[i] == '.' {
		for i++; i < len(arg) && arg[i] >= '0' && arg[i] <= '9'; i++ {
		}
	}
	num := arg[:i]
	unit := def
	if i < len(arg) && arg[i] != '+' && arg[i] != '-' {
		unit = arg[i]
		i++
	}
	reps := strings.IndexByte("bkmgtp", byte(strings.ToLower(string(unit))[0]))
	if reps < 0 {
		return 0, bad("invalid")
	}
	mult := 1024.0
	switch {
	case i < len(arg) && (arg[i] == 'b' || arg[i] == 'B'):
		mult = 1000
		i++
	case i == len(arg) || arg[i] == '+' || arg[i] == '-':
	case len(arg)-i >= 2 && strings.EqualFold(arg[i:i+2], "ib"):
		i += 2
	default:
		return 0, bad("invalid")
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, bad("invalid")
	}
	v := f * math.Pow(mult, float64(reps))
	if v >= math.MaxInt64/2 {
		return 0, bad("too large")
	}
	size := int64(v)
	if rest := arg[i:]; rest == "+1" || rest == "-1" {
		if i == 0 {
			return 0, bad("invalid")
		}
		if rest == "+1" {
			size++
		} else {
			size--
		}
		i += 2
	}
	if i != len(arg) {
		return 0, bad("invalid")
	}
	if size < 0 {
		return 0, bad("too large")
	}
	if size < minValue {
		return 0, bad("too small")
	}
	return size, nil
}

// checkAcceptedValues checks the options syq accepts for their values
// alone (--outbuf, --max-alloc, --checksum-choice, --protocol) as rsync
// checks them, with rsync's messages and exit codes.
func checkAcceptedValues(inv *Invocation) error {
	if s := inv.outbuf; s != "" && !strings.ContainsRune("NLBnlb", rune(s[0])) {
		return &UsageError{Msg: "Invalid --outbuf setting -- specify N, L, or B."}
	}
	if s := inv.maxAlloc; s != "" {
		n, err := parseSizeArg(s, 'b', "max-alloc", 0)
		if err != nil {
			return err
		}
		if n == 0 {
			// rsync since 3.5.0's successor: 0 no longer means "no limit".
			return &UsageError{Msg: "max-alloc must be greater than zero"}
		}
		if n < 1<<20 {
			return &UsageError{Msg: fmt.Sprintf("--max-alloc=%s is too small (min: 1.00M or 0 for unlimited)", s)}
		}
	}
	if s := inv.checksumChoice; s != "" {
		for _, name := range strings.SplitN(s, ",", 2) {
			switch strings.ToLower(name) {
			case "auto", "xxh128", "xxh3", "xxh64", "xxhash", "md5", "md4", "sha1":
			case "none":
				return &UsageError{Code: wire.ExitUnsupported, Msg: "--checksum-choice=none is not supported: syq always checks what it transfers"}
			default:
				return &UsageError{Code: wire.ExitUnsupported, Msg: "unknown checksum name: " + name}
			}
		}
	}
	switch p := inv.protocol; {
	case p == 0:
	case p > 32:
		return &UsageError{Code: wire.ExitProtocol, Msg: "--protocol must be no more than 32 on the Client."}
	case p < 20:
		return &UsageError{Code: wire.ExitProtocol, Msg: fmt.Sprintf("--protocol=%d: rsync protocols before 20 are not supported", p)}
	}
	return nil
}
