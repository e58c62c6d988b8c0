package main

import (
	"strconv"
	"time"
)

// settleStopTime turns --stop-after (minutes) or --stop-at (a time) into
// the moment the transfer ends, checked as rsync checks them.
func settleStopTime(inv *Invocation, now time.Time) error {
	switch {
	case inv.stopAfter != "":
		mins := leadingInt(inv.stopAfter)
		if mins <= 0 || mins > 1<<40 {
			return &UsageError{Msg: "invalid --stop-after value: " + inv.stopAfter}
		}
		inv.StopAt = now.Add(time.Duration(mins) * time.Minute)
	case inv.stopAt != "":
		at, ok := parseStopAt(inv.stopAt, now)
		if !ok {
			return &UsageError{Msg: "invalid --stop-at format: " + inv.stopAt}
		}
		if !at.After(now) {
			return &UsageError{Msg: "--stop-at time is not in the future: " + inv.stopAt}
		}
		inv.StopAt = at
	}
	return nil
}

// leadingInt reads the decimal number at the start of s as C's atol
// does: digits after an optional sign, anything after them ignored.
func leadingInt(s string) int64 {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.ParseInt(s[:i], 10, 64)
	return n
}

// parseStopAt reads rsync's --stop-at grammar, in local time:
//
//	[[[YY]YY-]MM-]DD[T[hh:]mm]   a date, with an optional time
//	[T]hh:mm   :mm               a time only ("T" may lead), or minutes only
//
// "/" may stand for "-". Fields left out are filled so the moment is the
// next one in the future that matches what was given: a missing year,
// month or day rolls forward by that unit; minutes alone roll by hours;
// a date without a time means its midnight.
func parseStopAt(arg string, now time.Time) (time.Time, bool) {
	year, mon, day, hour, min := -1, -1, -1, -1, -1
	s := arg
	state := 1 // 1: reading the date, 0: the time, -1: the time after "T" (needs a colon)
	if s != "" && (s[0] == 'T' || s[0] == 't' || s[0] == ':') {
		state = -1
		if s[0] == ':' {
			state = 0
		}
		s = s[1:]
	}
	for {
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == 0 || j > 9 {
			return time.Time{}, false
		}
		n, _ := strconv.Atoi(s[:j])
		s = s[j:]
		if s != "" && s[0] == ':' {
			state = 0
		}
		if state > 0 {
			if year != -1 {
				return time.Time{}, false
			}
			year, mon, day = mon, day, n
			if s == "" {
				break
			}
			if s[0] == 'T' || s[0] == 't' {
				if len(s) == 1 {
					break
				}
				state = -1
			} else if s[0] != '-' && s[0] != '/' {
				return time.Time{}, false
			}
			s = s[1:]
			continue
		}
		if hour != -1 {
			return time.Time{}, false
		}
		hour, min = min, n
		if s == "" {
			if state < 0 {
				return time.Time{}, false
			}
			break
		}
		if s[0] != ':' {
			return time.Time{}, false
		}
		state = 0
		s = s[1:]
	}

	roll := 0 // which missing field rolls forward: 1 year, 2 month, 3 day
	switch {
	case year < 0:
		year, roll = now.Year(), 1
	case year < 100:
		for year < now.Year() {
			year += 100
		}
	}
	if mon < 0 {
		mon, roll = int(now.Month()), 2
	}
	if day < 0 {
		day, roll = now.Day(), 3
	}
	var step time.Duration
	switch {
	case min < 0:
		hour, min = 0, 0
	case hour < 0:
		if roll != 3 {
			return time.Time{}, false // minutes alone need no date
		}
		roll, hour, step = 0, now.Hour(), time.Hour
	}
	if hour > 23 || min > 59 || mon < 1 || mon > 12 || day < 1 || day > 31 {
		return time.Time{}, false
	}
	at := time.Date(year, time.Month(mon), day, hour, min, 0, 0, time.Local)
	// A day the month does not have (April 31st) is not a date.
	valid := func(t time.Time, d int) bool { return t.Day() == d }
	for i := 0; roll != 0 && (!at.After(now) || !valid(at, day)) && i < 400; i++ {
		switch roll {
		case 3:
			day++
			if day > 31 || !valid(time.Date(year, time.Month(mon), day, hour, min, 0, 0, time.Local), day) {
				day = 1
				mon++
				if mon > 12 {
					mon, year = 1, year+1
				}
			}
		case 2:
			mon++
			if mon > 12 {
				mon, year = 1, year+1
			}
		case 1:
			year++
		}
		at = time.Date(year, time.Month(mon), day, hour, min, 0, 0, time.Local)
	}
	if !valid(at, day) {
		return time.Time{}, false
	}
	for step > 0 && !at.After(now) {
		at = at.Add(step)
	}
	return at, true
}
