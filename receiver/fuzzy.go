package receiver

// --fuzzy (-y): a file missing here may take, as its delta basis, a
// similar file of the same directory (with -yy, also of that directory
// in the --*-dest directories). The choice follows rsync's: a file of
// the same size and mtime first, otherwise the closest name by rsync's
// weighted edit distance, the suffix weighing ten times more.

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"syq/fsops"
	"syq/wire"
)

// fuzzyUnit is one edit in a fuzzy distance; the character values added
// to it break ties between edits.
const fuzzyUnit = 1 << 16

// fuzzyFar is a distance no candidate can win with.
const fuzzyFar = 0xFFFF*fuzzyUnit + 1

// fuzzyCandidate is a regular file that may serve as a fuzzy basis.
type fuzzyCandidate struct {
	name  string // base name
	shown string // its path as rsync's debug output names it
	level int    // 0: this directory; i: the i-th --*-dest directory
	size  int64
	mtime int64
	st    fsops.Stat
	used  bool // a transfer of this run replaces it; not a basis
}

// fuzzyDir is the candidate list of one batch, read at its first
// missing file, as rsync reads it.
type fuzzyDir struct {
	once  sync.Once
	cands []fuzzyCandidate
}

// findFuzzy picks the basis for e, missing from b's directory: the
// candidate's name in this directory ("" when none, or when the pick is
// in a --*-dest directory, which serves no delta yet) and the debug
// lines rsync prints. picked is the length of the generator's pick
// wherever it is (-1: none), which --append holds the file to.
func (r *Receiver) findFuzzy(b *batchState, e *wire.Entry, rel string) (basis string, st fsops.Stat, picked int64) {
	debug := r.opts.DebugFuzzy
	if r.cfg.Pushed {
		debug = 0 // rsync's remote generator keeps its debug output to itself
	}
	best := r.pickFuzzy(b, e, debug)
	if best < 0 {
		return "", st, -1
	}
	c := b.fuzzy.cands[best]
	if debug >= 1 {
		r.out.now(fmt.Sprintf("fuzzy basis selected for %s: %s", r.display(rel), r.display(c.shown)), true)
	}
	if c.level != 0 {
		return "", st, c.size
	}
	// rsync's receiver opens the basis after its generator has gone
	// on through the directory: a name the batch makes a directory,
	// symlink or special file is none by then, and it takes no other.
	// (A file this run rewrites is one still: rsync's receiver has
	// finished it before it comes to this one.)
	if b.notBasis[c.name] {
		return "", st, c.size
	}
	return c.name, c.st, c.size
}

// hasFuzzyBasis says whether rsync's generator finds e, missing from b's
// directory, a --fuzzy basis, in this directory or (-yy) a --*-dest one.
// It then goes on with e as with a file it has (-H: chooseLeader).
func (r *Receiver) hasFuzzyBasis(b *batchState, e *wire.Entry) bool {
	return r.pickFuzzy(b, e, 0) >= 0
}

// pickFuzzy is the index, in b's candidates, of the one rsync's
// find_fuzzy picks for e (-1 for none), printing its debug lines at the
// level debug asks for.
func (r *Receiver) pickFuzzy(b *batchState, e *wire.Entry, debug int) int {
	fd := b.fuzzyDir()
	fd.once.Do(func() { fd.cands = r.fuzzyCandidates(b) })
	best := -1
	for i := range fd.cands {
		c := &fd.cands[i]
		if !c.used && c.size == e.Size && c.mtime == e.MtimeSec {
			if debug >= 2 {
				r.out.now(fmt.Sprintf("fuzzy size/modtime match for %s", c.shown), true)
			}
			best = i
			break
		}
	}
	if best < 0 {
		lowest := uint32(25 << 16) // a distance over 25 is no match
		suffix := filenameSuffix(e.Name)
		for i := range fd.cands {
			c := &fd.cands[i]
			if c.used {
				continue
			}
			dist := fuzzyDistance(c.name, e.Name, lowest)
			if dist < 0xFFFF0000 {
				dist += fuzzyDistance(filenameSuffix(c.name), suffix, 0xFFFF0000) * 10
			}
			if debug >= 2 {
				r.out.now(fmt.Sprintf("fuzzy distance for %s = %d.%05d", c.shown, dist>>16, dist&0xFFFF), true)
			}
			if dist <= lowest {
				lowest, best = dist, i
			}
		}
	}
	return best
}

// fuzzyUsed marks name, which a transfer of this run replaces, as no
// basis for the files after it.
func (b *batchState) fuzzyUsed(name string) {
	fd := b.fuzzy
	if fd == nil {
		return
	}
	for i := range fd.cands {
		if fd.cands[i].level == 0 && fd.cands[i].name == name {
			fd.cands[i].used = true
		}
	}
}

func (b *batchState) fuzzyDir() *fuzzyDir {
	if b.fuzzy == nil {
		b.fuzzy = &fuzzyDir{}
	}
	return b.fuzzy
}

// fuzzyCandidates lists the non-empty regular files of b's directory
// (and with -yy of the same directory under each --*-dest), sorted by
// name within each, ignoring filter rules as rsync does.
func (r *Receiver) fuzzyCandidates(b *batchState) []fuzzyCandidate {
	var out []fuzzyCandidate
	add := func(d *fsops.Dir, names []string, level int, shownDir string) {
		if d == nil {
			return
		}
		if names == nil {
			var err error
			if names, err = d.Names(); err != nil {
				return
			}
		}
		names = slices.Sorted(slices.Values(names))
		for _, n := range names {
			st, err := d.Lstat(n)
			if err != nil || !st.IsReg() || st.Size == 0 {
				continue
			}
			out = append(out, fuzzyCandidate{name: n, shown: joinShown(shownDir, n), level: level, size: st.Size, mtime: st.MtimeSec, st: st})
		}
	}
	add(b.dir, r.fuzzyNames(b), 0, b.rel)
	if r.opts.Fuzzy > 1 {
		for i, d := range r.batchAlts(b) {
			add(d, nil, i+1, joinShown(r.altShown[i], b.rel))
		}
	}
	return out
}

// fuzzyNames is the listing the batch already read, and with -b the
// backups its deletions have made beside the files since (rsync reads
// the directory for --fuzzy after deleting in it, so those count).
func (r *Receiver) fuzzyNames(b *batchState) []string {
	if !r.backupOn() || r.opts.BackupDir != "" || b.dir == nil || !r.opts.Delete || r.opts.DeleteLate {
		return b.names
	}
	now, err := b.dir.Names()
	if err != nil {
		return b.names
	}
	had := make(map[string]bool, len(b.names))
	for _, n := range b.names {
		had[n] = true
	}
	names := slices.Clone(b.names)
	for _, n := range now {
		if !had[n] && strings.HasSuffix(n, r.opts.BackupSuffix) {
			names = append(names, n)
		}
	}
	return names
}

func joinShown(dir, name string) string {
	if dir == "" || dir == "." {
		return name
	}
	return dir + "/" + name
}

// fuzzyDistance is rsync's weighted edit distance between two names: an
// edit costs fuzzyUnit plus the value of the byte inserted or deleted,
// or of the difference of the bytes swapped. Names whose lengths differ
// by more than limit allows are not compared.
func fuzzyDistance(s1, s2 string, limit uint32) uint32 {
	d := len(s1) - len(s2)
	if d < 0 {
		d = -d
	}
	if uint32(d)*fuzzyUnit > limit {
		return fuzzyFar
	}
	if s1 == "" || s2 == "" {
		s := s1 + s2
		cost := int32(0)
		for i := 0; i < len(s); i++ {
			cost += int32(s[i])
		}
		return uint32(int32(len(s))*fuzzyUnit + cost)
	}
	a := make([]uint32, len(s2))
	for i := range a {
		a[i] = uint32(i+1) * fuzzyUnit
	}
	for i1 := 0; i1 < len(s1); i1++ {
		diag := uint32(i1) * fuzzyUnit
		above := uint32(i1+1) * fuzzyUnit
		for i2 := 0; i2 < len(s2); i2++ {
			left := a[i2]
			cost := int32(s1[i1]) - int32(s2[i2])
			switch {
			case cost < 0:
				cost = fuzzyUnit - cost
			case cost > 0:
				cost = fuzzyUnit + cost
			}
			diagInc := diag + uint32(cost)
			leftInc := left + fuzzyUnit + uint32(s1[i1])
			aboveInc := above + fuzzyUnit + uint32(s2[i2])
			if left < above {
				above = min(leftInc, diagInc)
			} else {
				above = min(aboveInc, diagInc)
			}
			a[i2] = above
			diag = left
		}
	}
	return a[len(s2)-1]
}

// filenameSuffix is the part of name rsync weighs as its suffix: the
// last ".ext" that is not .bak, .old, .orig or a "~N~" backup mark at
// the end, looking past an all-digit one; leading dots and a final '~'
// do not count.
func filenameSuffix(name string) string {
	fn := name
	for len(fn) > 0 && fn[0] == '.' {
		fn = fn[1:]
	}
	full := fn // the name past its leading dots: the tails compared below
	n := len(fn)
	tilde := n > 1 && fn[n-1] == '~'
	if tilde {
		n--
	}
	suf := ""
	for n > 1 {
		dot := -1
		for i := n - 1; i > 0; i-- {
			if fn[i] == '.' {
				dot = i
				break
			}
		}
		if dot <= 0 {
			break
		}
		sLen := n - dot
		n = dot
		tail := full[dot+1:]
		switch {
		case sLen == 4 && (tail == "bak" || tail == "old"):
			continue
		case sLen == 5 && tail == "orig":
			continue
		case sLen > 2 && tilde && fn[dot+1] == '~' && isDigitByte(fn[dot+2]):
			continue
		}
		suf = fn[dot : dot+sLen]
		if sLen == 1 {
			break
		}
		digits := true
		for i := dot + 1; i < dot+sLen; i++ {
			digits = digits && isDigitByte(fn[i])
		}
		if !digits {
			return suf
		}
	}
	return suf
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }
