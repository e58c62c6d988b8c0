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
	var size string
	if f.Human < 0 {
		size = fmt.Sprint(e.Size)
	} else {
		size = HumanNum(e.Size, f.Human)
	}
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

// HumanNum prints a count as rsync does: with separators, or scaled
// with -h (human 1: units of 1000, 2 and more: of 1024).
func HumanNum(n int64, human int) string {
	base := 1000.0
	if human > 1 {
		base = 1024
	}
	if human > 0 && float64(n) >= base {
		units := "KMGTPE"
		v := float64(n)
		i := -1
		for v >= base && i < len(units)-1 {
			v /= base
			i++
		}
		return fmt.Sprintf("%.2f%c", v, units[i])
	}
	return Commas(n)
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
