package receiver

import (
	"context"
	"fmt"
	"io"
	"time"

	"syq/wire"
)

// ListFormat says how --list-only prints an entry, as rsync's options
// shape it.
type ListFormat struct {
	ShowTargets bool // -l: a symlink's line shows " -> target"
	Recursive   bool // -r: a directory is printed just before its contents
	EightBit    bool // -8
	Atimes      bool // -U: an access-time column after the mtime
	Human       int  // wire.Options.HumanReadable: -1 plain digits, 0 separators, 1 and 2 units
}

// List is the receiving half of --list-only: it prints each entry the
// sender lists, in rsync's format, and asks for no data.
func List(ctx context.Context, conn wire.Conn, out io.Writer, f ListFormat) (wire.Stats, error) {
	var st wire.Stats
	err := list(ctx, conn, out, f, &st)
	return st, err
}

func list(ctx context.Context, conn wire.Conn, out io.Writer, f ListFormat, st *wire.Stats) error {
	held := map[string]string{}
	for {
		m, err := conn.Recv()
		if err != nil {
			return &wire.FatalError{Code: wire.ExitStreamIO, Err: fmt.Errorf("sender went away: %w", err)}
		}
		switch m := m.(type) {
		case *wire.FileBatch:
			if l, ok := held[m.Dir]; ok {
				delete(held, m.Dir)
				fmt.Fprintln(out, l)
			}
			for i := range m.Entries {
				e := &m.Entries[i]
				countListed(st, e)
				name := e.Name
				if m.Dir != "" && m.Dir != "." {
					name = m.Dir + "/" + e.Name
				}
				line := f.Line(e, name)
				if f.Recursive && e.IsDir() && e.Name != "." {
					held[name] = line
					continue
				}
				fmt.Fprintln(out, line)
			}
			if err := conn.Send(&wire.Wants{Seq: m.Seq}); err != nil {
				return err
			}
		case *wire.ListEnd:
		case *wire.DataEnd:
			for _, l := range held { // directories never listed (-x)
				fmt.Fprintln(out, l)
			}
			return conn.Send(&wire.Done{})
		default:
			return &wire.FatalError{Code: wire.ExitProtocol, Err: fmt.Errorf("protocol error: unexpected %T from sender", m)}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// Line formats one entry as rsync's --list-only does; a missing
// argument under --delete-missing-args (mode 0) shows as "*missing".
func (f ListFormat) Line(e *wire.Entry, name string) string {
	display := wire.DisplayName
	if f.EightBit {
		display = wire.DisplayName8
	}
	name = display(name)
	sizeWidth := 14
	if f.Human < 0 {
		sizeWidth = 11
	}
	const timeLayout = "2006/01/02 15:04:05"
	timeWidth := 1 + len(timeLayout)
	if f.Atimes {
		timeWidth *= 2
	}
	if e.Mode == 0 {
		return fmt.Sprintf("%-*s %s", 10+1+sizeWidth+timeWidth, "*missing", name)
	}
	if e.Type() == wire.TypeLnk && e.Link != "" && f.ShowTargets {
		name += " -> " + display(e.Link)
	}
	size := HumanNum(e.Size, f.Human)
	t := time.Unix(e.MtimeSec, 0).Format(timeLayout)
	if f.Atimes {
		at := ""
		if !e.IsDir() {
			at = time.Unix(e.AtimeSec, 0).Format(timeLayout)
		}
		t += fmt.Sprintf(" %-*s", len(timeLayout), at)
	}
	return fmt.Sprintf("%s %*s %s %s", ModeString(e.Mode), sizeWidth, size, t, name)
}

// ModeString renders st_mode as ls does ("drwxr-xr-x").
func ModeString(mode uint32) string {
	var b [10]byte
	switch mode & wire.TypeMask {
	case wire.TypeDir:
		b[0] = 'd'
	case wire.TypeLnk:
		b[0] = 'l'
	case wire.TypeChr:
		b[0] = 'c'
	case wire.TypeBlk:
		b[0] = 'b'
	case wire.TypeFifo:
		b[0] = 'p'
	case wire.TypeSock:
		b[0] = 's'
	default:
		b[0] = '-'
	}
	const rwx = "rwxrwxrwx"
	for i := 0; i < 9; i++ {
		if mode&(1<<(8-i)) != 0 {
			b[i+1] = rwx[i]
		} else {
			b[i+1] = '-'
		}
	}
	special := func(bit uint32, pos int, set, unsetExec byte) {
		if mode&bit != 0 {
			if b[pos] == 'x' {
				b[pos] = set
			} else {
				b[pos] = unsetExec
			}
		}
	}
	special(0o4000, 3, 's', 'S')
	special(0o2000, 6, 's', 'S')
	special(0o1000, 9, 't', 'T')
	return string(b[:])
}

// HumanNum prints a count as rsync's human_num does at -h level human
// (wire.Options.HumanReadable): plain digits after --no-h (-1),
// separators by default (0), units of 1000 (1) or 1024 (2 and more) from
// a value of one unit up.
func HumanNum(n int64, human int) string { return bigNum(n, human+1, "") }

// CommaNum is rsync's comma_num, which counts (file counts, --stats'
// "Number of ..." lines) use: separators unless --no-h, never units.
func CommaNum(n int64, human int) string { return bigNum(n, min(human+1, 1), "") }

// HumanDnum is rsync's human_dnum: a fraction with digits decimals,
// below 1000 as it is, above as HumanNum with its fraction kept (when
// no unit takes over).
func HumanDnum(d float64, human, digits int) string { return bigDnum(d, human+1, digits) }

// CommaDnum is rsync's comma_dnum (the speedup): HumanDnum with
// separators but never units.
func CommaDnum(d float64, human, digits int) string { return bigDnum(d, min(human+1, 1), digits) }

// bigNum is rsync's do_big_num; flag is rsync's human_readable (0 plain,
// 1 separators, 2 units of 1000, more units of 1024), fract what follows
// the digits when they are shown.
func bigNum(n int64, flag int, fract string) string {
	if flag > 1 {
		mult := int64(1024)
		if flag == 2 {
			mult = 1000
		}
		if n >= mult || n <= -mult {
			d := float64(n) / float64(mult)
			if n < 0 {
				d = -d
			}
			unit := byte('P')
			for _, u := range []byte("KMGT") {
				if d < float64(mult) {
					unit = u
					break
				}
				d /= float64(mult)
			}
			if n < 0 {
				d = -d
			}
			return fmt.Sprintf("%.2f%c", d, unit)
		}
	}
	if flag == 0 {
		return fmt.Sprint(n) + fract
	}
	return Commas(n) + fract
}

// bigDnum is rsync's do_big_dnum.
func bigDnum(d float64, flag, digits int) string {
	s := fmt.Sprintf("%.*f", digits, d)
	if flag == 0 || (d < 1000 && d > -1000) {
		return s
	}
	i := 1
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return bigNum(int64(d), flag, s[i:])
}

// Commas formats n with thousands separators, as rsync prints sizes.
func Commas(n int64) string {
	neg := n < 0
	if neg {
		n = -n
	}
	s := fmt.Sprintf("%d", n)
	var out []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
