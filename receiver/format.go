package receiver

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math/bits"
	"path"
	"strings"
	"sync"

	"github.com/zeebo/xxh3"

	"syq/delta"
	"syq/fsops"
	"syq/wire"
)

// formatEscapes are the --out-format letters syq expands. %h, %a, %P
// and %u name a daemon's client, module path and user: outside daemon
// mode rsync leaves them as written, and so does syq (it has no daemon).
const formatEscapes = "nLiobptlMBUGfcCm"

// formatHumanized are the escapes whose number an apostrophe formats:
// one adds thousands separators, two scale by 1000 with a unit, three
// by 1024.
const formatHumanized = "lbc"

// formatEscape is one %-escape of a format: where it ends, its letter,
// and how it is padded and humanized.
type formatEscape struct {
	end    int // index of the letter
	letter byte
	left   bool
	width  int
	human  int
}

// parseEscape reads the escape that starts at format[i] == '%' as rsync
// does: apostrophes, '-', a width, apostrophes again, then the letter.
// ok is false when the format ends first.
func parseEscape(format string, i int) (esc formatEscape, ok bool) {
	j := i + 1
	for j < len(format) && format[j] == '\'' {
		esc.human++
		j++
	}
	if j < len(format) && format[j] == '-' {
		esc.left = true
		j++
	}
	// rsync copies the '-' and the digits into a 32-byte buffer and
	// stops at 23 characters: a digit after that is the "letter", no
	// escape, and the text stays as written.
	taken := 0
	if esc.left {
		taken = 1
	}
	for ; j < len(format) && format[j] >= '0' && format[j] <= '9' && taken < 23; taken++ {
		if esc.width < 1<<16 {
			esc.width = esc.width*10 + int(format[j]-'0')
		}
		j++
	}
	for j < len(format) && format[j] == '\'' {
		esc.human++
		j++
	}
	if j == len(format) {
		return esc, false
	}
	esc.end, esc.letter = j, format[j]
	return esc, true
}

// FormatHas reports whether format uses the escape letter c ("%%c" is a
// percent sign followed by c, not the escape).
func FormatHas(format string, c byte) bool {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		esc, ok := parseEscape(format, i)
		if !ok {
			return false
		}
		if esc.letter == c {
			return true
		}
		i = esc.end
	}
	return false
}

// expandFormat replaces %[-][width]X escapes through value, which gets
// the letter and its apostrophe count; "%%" is a percent sign. Letters
// syq does not expand stay as written, as rsync leaves those it has no
// value for.
func expandFormat(format string, value func(c byte, human int) string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		esc, ok := parseEscape(format, i)
		if !ok {
			b.WriteString(format[i:])
			break
		}
		switch {
		case esc.letter == '%':
			b.WriteByte('%')
		case !strings.ContainsRune(formatEscapes, rune(esc.letter)):
			b.WriteString(format[i : esc.end+1])
		default:
			v := value(esc.letter, esc.human)
			if pad := esc.width - len(v); pad > 0 {
				if esc.left {
					v += strings.Repeat(" ", pad)
				} else {
					v = strings.Repeat(" ", pad) + v
				}
			}
			b.WriteString(v)
		}
		i = esc.end
	}
	return b.String()
}

// FillEscapes expands the escapes of format whose letters vals holds,
// padded to their width as expandFormat pads, and leaves every other
// escape as written for a later expansion (a daemon fills in %h %a %m
// %u %P, the receiver the rest); a '%' in a value is doubled so that the
// later expansion keeps it.
func FillEscapes(format string, vals map[byte]string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		esc, ok := parseEscape(format, i)
		if !ok {
			b.WriteString(format[i:])
			break
		}
		v, fill := vals[esc.letter]
		if !fill {
			b.WriteString(format[i : esc.end+1])
			i = esc.end
			continue
		}
		if pad := esc.width - len(v); pad > 0 {
			if esc.left {
				v += strings.Repeat(" ", pad)
			} else {
				v = strings.Repeat(" ", pad) + v
			}
		}
		b.WriteString(strings.ReplaceAll(v, "%", "%%"))
		i = esc.end
	}
	return b.String()
}

// CheckFormat refuses a format syq cannot expand as rsync would.
func CheckFormat(format, checksumChoice string) error {
	if FormatHas(format, 'C') {
		if _, _, err := sumAlgo(checksumChoice, false); err != nil {
			return err
		}
		if _, _, err := sumAlgo(checksumChoice, true); err != nil {
			return err
		}
	}
	return nil
}

// humanNumber formats n for an escape with human apostrophes, as
// rsync's do_big_num does: none, plain digits; then as -h's levels one
// below (separators, units of 1000, units of 1024).
func humanNumber(n int64, human int) string { return HumanNum(n, human-1) }

// OldMD4 is the checksum choice of rsync's protocols before 30: an MD4
// of rsync's own, which %C shows as blanks of its width.
const OldMD4 = "md4-old"

// sumAlgo names the hash %C shows and its length in bytes: rsync's
// transfer checksum, or under -c its file-list checksum (the second
// name of --checksum-choice when two are given); xxh128 by default.
func sumAlgo(choice string, fileList bool) (string, int, error) {
	names := strings.SplitN(strings.ToLower(choice), ",", 2)
	name := names[0]
	if fileList && len(names) == 2 {
		name = names[1]
	}
	switch name {
	case "", "auto", "xxh128":
		return "xxh128", 16, nil
	case "xxh3":
		return "xxh3", 8, nil
	case "xxh64", "xxhash":
		return "xxh64", 8, nil
	case "md5":
		return "md5", 16, nil
	case "sha1":
		return "sha1", 20, nil
	case OldMD4:
		return "", 16, nil // no hex of its own: %C shows blanks
	}
	return "", 0, fmt.Errorf("--out-format: %%C with --checksum-choice=%s is not supported by syq", name)
}

// contentSum returns the hex checksum of r's content under algo, as
// rsync prints it for %C.
func contentSum(r io.Reader, algo string) (string, error) {
	var h hash.Hash
	switch algo {
	case "xxh128":
		h = xxh3.New128()
	case "xxh3":
		h = xxh3.New()
	case "xxh64":
		h = newXXH64()
	case "md5":
		h = md5.New()
	case "sha1":
		h = sha1.New()
	default:
		return "", fmt.Errorf("no checksum %q", algo)
	}
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fileSum is contentSum of the destination file name in dir.
func fileSum(dir *fsops.Dir, name, algo string) (string, error) {
	f, err := dir.OpenRead(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return contentSum(f, algo)
}

// formatSum is what %C shows for an entry not transferred: under -c,
// the checksum of the destination file at rel (the same content as the
// source's, or it would be transferred); blanks of the hash's width
// otherwise, as rsync shows.
func (r *Receiver) formatSum(e *wire.Entry, rel string) string {
	algo, size, err := sumAlgo(r.opts.ChecksumChoice, r.opts.Checksum)
	blank := strings.Repeat(" ", 2*size)
	if err != nil || e == nil || !e.IsReg() || r.root == nil || !r.opts.Checksum {
		return blank
	}
	dir, err := r.root.OpenBeneath(parentRel(rel), r.opts.KeepDirLinks)
	if err != nil {
		return blank
	}
	defer dir.Close()
	sum, err := fileSum(dir, baseRel(rel), algo)
	if err != nil {
		return blank
	}
	return sum
}

// formatSource is %f: the file's path at the sender. rsync's sender
// (which prints in a push or a local copy) joins the operand's
// directory to the name; its receiver (a pull) shows the name alone. A
// leading slash is dropped.
func (r *Receiver) formatSource(rel string) string {
	rel = strings.TrimSuffix(rel, "/")
	if rel == "" {
		rel = "."
	}
	prefix := ""
	if !r.cfg.Pulled {
		prefix = sourcePrefix(r.opts.FormatSources, rel, r.opts.Relative)
	}
	p := rel
	if prefix != "" {
		p = prefix + "/" + rel
	}
	p = cleanFormatPath(p)
	return strings.TrimLeft(p, "/")
}

// sourcePrefix finds the operand rel came from and returns the
// directory the sender joined to it.
func sourcePrefix(sources []string, rel string, relative bool) string {
	top, _, _ := strings.Cut(rel, "/")
	for _, op := range sources {
		if _, after, ok := strings.Cut(op, "/./"); ok && relative {
			if strings.HasPrefix(rel, strings.TrimSuffix(after, "/")) {
				return strings.TrimSuffix(op[:len(op)-len(after)], "/./")
			}
			continue
		}
		if relative {
			if strings.HasPrefix(op, "/") {
				return "/"
			}
			return ""
		}
		trimmed := strings.TrimRight(op, "/")
		if strings.HasSuffix(op, "/") || trimmed == "." || trimmed == "" || strings.HasSuffix(trimmed, "/.") {
			continue // its contents; matched below
		}
		if path.Base(trimmed) == top {
			if d := path.Dir(trimmed); d != "." {
				return d
			}
			return ""
		}
	}
	for _, op := range sources {
		trimmed := strings.TrimRight(op, "/")
		if strings.HasSuffix(op, "/") || trimmed == "." || trimmed == "" || strings.HasSuffix(trimmed, "/.") {
			if trimmed == "" {
				return "/"
			}
			return strings.TrimSuffix(trimmed, "/.")
		}
	}
	return ""
}

// cleanFormatPath collapses doubled slashes and "./" components as
// rsync's clean_fname does, keeping a final "/." as rsync shows it.
func cleanFormatPath(p string) string {
	abs := strings.HasPrefix(p, "/")
	parts := strings.Split(p, "/")
	out := parts[:0]
	for i, s := range parts {
		if s == "" || s == "." && i != len(parts)-1 {
			continue
		}
		out = append(out, s)
	}
	s := strings.Join(out, "/")
	if abs {
		s = "/" + s
	}
	if s == "" {
		s = "."
	}
	return s
}

// rsync's wire accounting, which %b and %c report: a file's data goes
// in tokens of at most 32 KiB, each with a 4-byte header, between the
// 3 bytes of its index and flags and the 16 of the block-sum header,
// and is followed by an end token and the file's transfer checksum.
const (
	rsyncChunk   = 32 << 10
	rsyncSumHead = 16
)

// wireBytes is %b of a transferred file of n literal bytes whose
// transfer checksum has sumLen bytes.
func wireBytes(n int64, sumLen int) int64 {
	return 3 + rsyncSumHead + n + 4*((n+rsyncChunk-1)/rsyncChunk) + 4 + int64(sumLen)
}

// deltaFrom reports whether a transfer replacing a regular file of
// basis bytes goes as a delta (see addSig).
func (r *Receiver) deltaFrom(basis int64) bool {
	return basis > 0 && r.opts.Append == 0 && r.deltaOn()
}

// rsyncSigBytes is what rsync's block sums of a basis of n bytes take on
// the wire: per block a 4-byte rolling sum and a strong sum cut to the
// length rsync's sum_sizes_sqroot picks. The block length is rsync's
// too (delta.BlockSize follows it below rsync's 128 KiB cap).
func rsyncSigBytes(n int64, blockSize, sumLen int) int64 {
	blen := int64(min(delta.BlockSize(n, blockSize), 1<<17))
	b := 10 // BLOCKSUM_BIAS
	for l := n; l>>1 > 0; l >>= 1 {
		b += 2
	}
	for c := blen; c>>1 > 0 && b > 0; c >>= 1 {
		b--
	}
	s2 := (b + 1 - 32 + 7) / 8 // Go truncates toward zero, as C does
	s2 = min(max(s2, 2), sumLen, 16)
	count := (n + blen - 1) / blen
	return count * int64(4+s2)
}

// later holds the lines of transferred files that wait for their data
// (a format with %C shows the checksum of what was written).
type later struct {
	mu    sync.Mutex
	lines map[string]func(sum string, ok bool)
}

func (l *later) put(rel string, emit func(sum string, ok bool)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lines == nil {
		l.lines = make(map[string]func(sum string, ok bool))
	}
	l.lines[rel] = emit
}

func (l *later) take(rel string) func(sum string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	emit := l.lines[rel]
	delete(l.lines, rel)
	return emit
}

// xxh64 is XXH64 with seed 0, the hash rsync calls xxh64 (xxhash).
type xxh64 struct {
	v   [4]uint64
	buf [32]byte
	n   int    // bytes in buf
	len uint64 // total
}

const (
	xxP1 uint64 = 11400714785074694791
	xxP2 uint64 = 14029467366897019727
	xxP3 uint64 = 1609587929392839161
	xxP4 uint64 = 9650029242287828579
	xxP5 uint64 = 2870177450012600261
)

func newXXH64() *xxh64 {
	h := &xxh64{}
	h.Reset()
	return h
}

func (h *xxh64) Reset() {
	p1, p2 := xxP1, xxP2 // at run time: the sums wrap
	h.v = [4]uint64{p1 + p2, p2, 0, -p1}
	h.n, h.len = 0, 0
}

func (h *xxh64) Size() int      { return 8 }
func (h *xxh64) BlockSize() int { return 32 }

func xxRound(acc, in uint64) uint64 {
	return bits.RotateLeft64(acc+in*xxP2, 31) * xxP1
}

func xxMerge(acc, v uint64) uint64 {
	return (acc^xxRound(0, v))*xxP1 + xxP4
}

func (h *xxh64) Write(p []byte) (int, error) {
	total := len(p)
	h.len += uint64(total)
	if h.n > 0 {
		k := copy(h.buf[h.n:], p)
		h.n += k
		p = p[k:]
		if h.n < 32 {
			return total, nil
		}
		h.block(h.buf[:])
		h.n = 0
	}
	for len(p) >= 32 {
		h.block(p[:32])
		p = p[32:]
	}
	h.n = copy(h.buf[:], p)
	return total, nil
}

func (h *xxh64) block(b []byte) {
	for i := range h.v {
		h.v[i] = xxRound(h.v[i], binary.LittleEndian.Uint64(b[8*i:]))
	}
}

func (h *xxh64) Sum(in []byte) []byte {
	var acc uint64
	if h.len >= 32 {
		v := h.v
		acc = bits.RotateLeft64(v[0], 1) + bits.RotateLeft64(v[1], 7) + bits.RotateLeft64(v[2], 12) + bits.RotateLeft64(v[3], 18)
		for _, x := range v {
			acc = xxMerge(acc, x)
		}
	} else {
		acc = h.v[2] + xxP5
	}
	acc += h.len
	p := h.buf[:h.n]
	for len(p) >= 8 {
		acc ^= xxRound(0, binary.LittleEndian.Uint64(p))
		acc = bits.RotateLeft64(acc, 27)*xxP1 + xxP4
		p = p[8:]
	}
	if len(p) >= 4 {
		acc ^= uint64(binary.LittleEndian.Uint32(p)) * xxP1
		acc = bits.RotateLeft64(acc, 23)*xxP2 + xxP3
		p = p[4:]
	}
	for _, c := range p {
		acc ^= uint64(c) * xxP5
		acc = bits.RotateLeft64(acc, 11) * xxP1
	}
	acc ^= acc >> 33
	acc *= xxP2
	acc ^= acc >> 29
	acc *= xxP3
	acc ^= acc >> 32
	return binary.BigEndian.AppendUint64(in, acc)
}

// fromAbsolute reports whether rel came from an absolute source operand
// under -R without a "/./" marker: rsync's sender keeps the leading
// slash in such names, so its output shows "/tmp/x" where the
// destination gets "tmp/x".
func fromAbsolute(sources []string, rel string) bool {
	rel = strings.TrimSuffix(rel, "/")
	for _, op := range sources {
		if !strings.HasPrefix(op, "/") || strings.Contains(op, "/./") {
			continue
		}
		p := strings.Trim(cleanFormatPath(op), "/")
		if p == "" || rel == p || strings.HasPrefix(rel, p+"/") || strings.HasPrefix(p, rel+"/") {
			return true
		}
	}
	return false
}
