package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"syq/receiver"
	"syq/wire"
)

// settleSizes reads --max-size and --min-size as given.
func settleSizes(inv *Invocation) error {
	for _, lim := range []struct {
		arg  *string
		name string
		to   **int64
	}{{inv.maxSize, "max-size", &inv.Opts.MaxSize}, {inv.minSize, "min-size", &inv.Opts.MinSize}} {
		if lim.arg == nil {
			continue
		}
		n, err := parseSizeArg(*lim.arg, 'b', lim.name, 0, -1, false)
		if err != nil {
			return err
		}
		*lim.to = &n
	}
	return nil
}

// parseSizeArg reads a size as rsync's options do (--max-size,
// --min-size, --bwlimit, --block-size, --max-alloc): a decimal number
// with an optional fraction, an optional unit letter (b, k, m, g, t, p;
// def when none), "b" after it for powers of 1000 or "ib"/nothing for
// powers of 1024, and an optional "+1" or "-1" to nudge the result by
// one byte. maxValue < 0 means no limit but rsync's own (half the
// address space); with unlimited0, 0 passes minValue ("0 for
// unlimited").
//
// The number's value is what C's strtod makes of the whole argument, as
// rsync takes it: no digits at all ("k", "", ".") is 0, and a leading
// sign is read, so "-5" is a negative size and so "too large".
func parseSizeArg(arg string, def byte, opt string, minValue, maxValue int64, unlimited0 bool) (int64, error) {
	fail := func(why string, limitName string, limit int64) error {
		msg := fmt.Sprintf("--%s=%s is %s", opt, arg, why)
		if limitName != "" && limit >= 0 {
			msg += fmt.Sprintf(" (%s: %s", limitName, receiver.HumanNum(limit, 3))
			if unlimited0 && limitName == "min" {
				msg += " or 0 for unlimited"
			}
			msg += ")"
		}
		return &UsageError{Msg: msg}
	}
	invalid := func() error { return fail("invalid", "", -1) }
	tooLarge := func() error { return fail("too large", "max", maxValue) }
	sizeMax := int64(math.MaxInt64) // C's SIZE_MAX / 2
	if maxValue >= 0 {
		sizeMax = maxValue
	}

	i := 0
	for i < len(arg) && arg[i] >= '0' && arg[i] <= '9' {
		i++
	}
	if i < len(arg) && arg[i] == '.' {
		for i++; i < len(arg) && arg[i] >= '0' && arg[i] <= '9'; i++ {
		}
	}
	unit := def
	if i < len(arg) && arg[i] != '+' && arg[i] != '-' {
		unit = arg[i]
		i++
	}
	reps := strings.IndexByte("bkmgtp", unit|0x20)
	if reps < 0 {
		return 0, invalid()
	}
	mult := int64(1024)
	switch {
	case i < len(arg) && (arg[i] == 'b' || arg[i] == 'B'):
		mult = 1000
		i++
	case i == len(arg) || arg[i] == '+' || arg[i] == '-':
	case len(arg)-i >= 2 && strings.EqualFold(arg[i:i+2], "ib"):
		i += 2
	default:
		return 0, invalid()
	}
	scale := int64(1)
	for ; reps > 0; reps-- {
		if scale > sizeMax/mult {
			return 0, tooLarge()
		}
		scale *= mult
	}
	f := cStrtod(arg)
	if math.IsInf(f, 0) || f < 0 || f > float64(sizeMax)/float64(scale) ||
		(maxValue < 0 && f >= float64(sizeMax)/float64(scale)) {
		return 0, tooLarge()
	}
	size := int64(f * float64(scale))
	if rest := arg[i:]; i > 0 && len(rest) >= 2 && (rest[0] == '+' || rest[0] == '-') && rest[1] == '1' {
		if rest[0] == '+' {
			if size == sizeMax {
				return 0, tooLarge()
			}
			size++
		} else {
			size--
		}
		i += 2
	}
	if i != len(arg) {
		return 0, invalid()
	}
	if size < 0 || (maxValue >= 0 && size > maxValue) {
		return 0, tooLarge()
	}
	if size < minValue && (!unlimited0 || size != 0) {
		return 0, fail("too small", "min", minValue)
	}
	return size, nil
}

// cStrtod is C's strtod for the numbers parseSizeArg meets: an optional
// sign, digits, an optional fraction; anything else ends the number, and
// no number at all is 0.
func cStrtod(s string) float64 {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
	}
	if i-start == 0 || s[start:i] == "." {
		return 0
	}
	// Out of range, ParseFloat gives ±Inf as strtod gives HUGE_VAL.
	f, _ := strconv.ParseFloat(s[:i], 64)
	return f
}

// checkAcceptedValues checks the options syq accepts for their values
// alone (--outbuf, --max-alloc, --checksum-choice, --protocol) as rsync
// checks them, with rsync's messages and exit codes.
func checkAcceptedValues(inv *Invocation) error {
	if s := inv.outbuf; s != "" && !strings.ContainsRune("NLBnlb", rune(s[0])) {
		return &UsageError{Msg: "Invalid --outbuf setting -- specify N, L, or B."}
	}
	if s := inv.maxAlloc; s != "" {
		// 0 is rsync 3.5.0's "no limit" (its message on too small a
		// size says so); only later rsyncs refuse it.
		if _, err := parseSizeArg(s, 'b', "max-alloc", 1<<20, -1, true); err != nil {
			return err
		}
	}
	if s := inv.checksumChoice; inv.checksumChoiceGiven {
		for i, name := range strings.SplitN(s, ",", 2) {
			switch strings.ToLower(name) {
			case "auto", "xxh128", "xxh3", "xxh64", "xxhash", "md5", "md4", "sha1":
			case "none":
				return &UsageError{Code: wire.ExitUnsupported, Msg: "--checksum-choice=none is not supported: syq always checks what it transfers"}
			default:
				// rsync names the rest of the argument from where
				// the unknown name starts (its C string runs on).
				rest := s
				if i == 1 {
					rest = s[strings.IndexByte(s, ',')+1:]
				}
				return &UsageError{Code: wire.ExitUnsupported, Msg: "unknown checksum name: " + rest, NoPrefix: true}
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
