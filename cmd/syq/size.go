package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

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
