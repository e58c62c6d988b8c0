// Package gen writes deterministic benchmark trees: the same Spec always
// yields the same names, sizes, contents, modes, links and mtimes, whatever
// the number of workers. File contents come from ChaCha8 streams keyed by
// (seed, file index, segment), so they are incompressible and can be written
// in parallel; the text kind draws log lines from the same streams instead
// (text.go), so its files compress as real logs do.
package gen

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Kinds of tree.
const (
	Small     = "small"      // N files of FileSize bytes in Dirs directories
	Large     = "large"      // one file of Size bytes
	ManyLarge = "many-large" // K files of Size bytes
	Mixed     = "mixed"      // N files, 0..Size bytes, symlinks, hard links, deep paths
	Empty     = "empty"      // N zero-byte files in Dirs directories
	Text      = "text"       // K compressible text files (log lines) of Size bytes
)

// Spec describes a tree.
type Spec struct {
	Kind     string
	N        int   // files (small, mixed, empty)
	Dirs     int   // directories (small, empty); 0 = default
	FileSize int64 // small: bytes per file; 0 = 4096
	Size     int64 // large / many-large: bytes per file; mixed: largest file
	K        int   // many-large: number of files
	Seed     uint64
	Workers  int // 0 = GOMAXPROCS
}

// Key is a string that identifies the tree a Spec produces.
func (s Spec) Key() string {
	s = s.withDefaults()
	return fmt.Sprintf("%s/n=%d/d=%d/fs=%d/s=%d/k=%d/seed=%d", s.Kind, s.N, s.Dirs, s.FileSize, s.Size, s.K, s.Seed)
}

// Describe is a short human description.
func (s Spec) Describe() string {
	s = s.withDefaults()
	switch s.Kind {
	case Small:
		return fmt.Sprintf("small: %d x %s in %d dirs", s.N, HumanBytes(s.FileSize), s.Dirs)
	case Large:
		return fmt.Sprintf("large: 1 x %s", HumanBytes(s.Size))
	case ManyLarge:
		return fmt.Sprintf("many-large: %d x %s", s.K, HumanBytes(s.Size))
	case Mixed:
		return fmt.Sprintf("mixed: %d files 0..%s, symlinks, hard links, deep paths", s.N, HumanBytes(s.Size))
	case Empty:
		return fmt.Sprintf("empty: %d zero-byte files in %d dirs", s.N, s.Dirs)
	case Text:
		return fmt.Sprintf("text: %d x %s of log lines (compressible)", s.K, HumanBytes(s.Size))
	}
	return s.Kind
}

func (s Spec) withDefaults() Spec {
	if s.Seed == 0 {
		s.Seed = 1
	}
	switch s.Kind {
	case Small:
		if s.Dirs == 0 {
			s.Dirs = 256
		}
		if s.FileSize == 0 {
			s.FileSize = 4096
		}
	case Empty:
		if s.Dirs == 0 {
			s.Dirs = 1000
		}
	case ManyLarge, Text:
		if s.K == 0 {
			s.K = 8
		}
	case Mixed:
		if s.Size == 0 {
			s.Size = 64 << 20
		}
	}
	if s.Workers <= 0 {
		s.Workers = runtime.GOMAXPROCS(0)
	}
	return s
}

// Result counts what was written.
type Result struct {
	Files     int // regular file names (hard-link names included)
	HardLinks int // extra names of files that already had one
	Dirs      int // directories below the root
	Symlinks  int
	Bytes     int64 // sum of regular file sizes over all names
	Elapsed   time.Duration
}

// BaseTime is the mtime origin of every generated entry.
var BaseTime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

type fileEnt struct {
	rel  string
	size int64
	perm uint32
	idx  uint64 // content stream index
}

type linkEnt struct{ rel, target string }

type plan struct {
	dirs     []string // relative, parents before children
	dirPerm  map[string]uint32
	files    []fileEnt
	hard     []linkEnt // rel = new name, target = existing file rel
	symlinks []linkEnt
}

// Generate writes the tree described by spec under root. root must be
// missing or an empty directory.
func Generate(root string, spec Spec) (Result, error) {
	start := time.Now()
	spec = spec.withDefaults()
	p, err := makePlan(spec)
	if err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return Result{}, err
	}
	if ents, err := os.ReadDir(root); err != nil {
		return Result{}, err
	} else if len(ents) > 0 {
		return Result{}, fmt.Errorf("gentree: %s is not empty", root)
	}
	for _, d := range p.dirs {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			return Result{}, err
		}
	}
	if err := writeFiles(root, p.files, spec); err != nil {
		return Result{}, err
	}
	res := Result{Dirs: len(p.dirs), Files: len(p.files) + len(p.hard), HardLinks: len(p.hard), Symlinks: len(p.symlinks)}
	sizeOf := map[string]int64{}
	for _, f := range p.files {
		res.Bytes += f.size
		if len(p.hard) > 0 {
			sizeOf[f.rel] = f.size
		}
	}
	for _, h := range p.hard {
		if err := os.Link(filepath.Join(root, h.target), filepath.Join(root, h.rel)); err != nil {
			return Result{}, err
		}
		res.Bytes += sizeOf[h.target]
	}
	for i, s := range p.symlinks {
		abs := filepath.Join(root, s.rel)
		if err := os.Symlink(s.target, abs); err != nil {
			return Result{}, err
		}
		ts := stamp(uint64(i) + 7)
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, abs, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return Result{}, fmt.Errorf("lutimes %s: %w", abs, err)
		}
	}
	// Directories last, deepest first, so that nothing touches them after.
	for i := len(p.dirs) - 1; i >= 0; i-- {
		d := p.dirs[i]
		abs := filepath.Join(root, d)
		perm := uint32(0o755)
		if v, ok := p.dirPerm[d]; ok {
			perm = v
		}
		if err := os.Chmod(abs, os.FileMode(perm)); err != nil {
			return Result{}, err
		}
		ts := stamp(uint64(i) * 13)
		if err := unix.UtimesNano(abs, []unix.Timespec{ts, ts}); err != nil {
			return Result{}, err
		}
	}
	ts := stamp(999)
	if err := unix.UtimesNano(root, []unix.Timespec{ts, ts}); err != nil {
		return Result{}, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// stamp spreads mtimes over a day with a fixed, non-zero nanosecond part,
// so that tools which drop sub-second precision are visible.
func stamp(i uint64) unix.Timespec {
	t := BaseTime.Add(time.Duration(i%86400) * time.Second).Add(time.Duration(i%1000)*time.Millisecond + 123456)
	return unix.NsecToTimespec(t.UnixNano())
}

const segment = 64 << 20 // content stream segment; large files are written segment-parallel

func streamSeed(seed, idx, seg uint64) [32]byte {
	var k [32]byte
	binary.LittleEndian.PutUint64(k[0:], seed)
	binary.LittleEndian.PutUint64(k[8:], idx)
	binary.LittleEndian.PutUint64(k[16:], seg)
	copy(k[24:], "syqgen01")
	return k
}

type job struct {
	text bool // log lines instead of random bytes
	f    *fileEnt
	fd   *os.File
	seg  int64 // segment index within the file
	wg   *sync.WaitGroup
}

func writeFiles(root string, files []fileEnt, spec Spec) error {
	jobs := make(chan job, 256)
	errc := make(chan error, spec.Workers)
	var wg sync.WaitGroup
	for w := 0; w < spec.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for j := range jobs {
				if err := writeSegment(root, j, buf, spec.Seed); err != nil {
					select {
					case errc <- err:
					default:
					}
				}
			}
		}()
	}
	var firstErr error
	var pending []*os.File
	var pendWG sync.WaitGroup
	for i := range files {
		f := &files[i]
		if f.size <= segment {
			jobs <- job{f: f, text: spec.Kind == Text}
			continue
		}
		// Large file: open once, workers fill segments with WriteAt.
		abs := filepath.Join(root, f.rel)
		fd, err := os.OpenFile(abs, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			firstErr = err
			break
		}
		if err := fd.Truncate(f.size); err != nil {
			firstErr = err
			break
		}
		pending = append(pending, fd)
		nseg := (f.size + segment - 1) / segment
		for s := int64(0); s < nseg; s++ {
			pendWG.Add(1)
			jobs <- job{f: f, fd: fd, seg: s, wg: &pendWG, text: spec.Kind == Text}
		}
	}
	close(jobs)
	wg.Wait()
	pendWG.Wait()
	select {
	case err := <-errc:
		if firstErr == nil {
			firstErr = err
		}
	default:
	}
	// Finish large files: mode and mtime after all segments are in.
	idx := 0
	for i := range files {
		f := &files[i]
		if f.size <= segment {
			continue
		}
		if idx >= len(pending) {
			break
		}
		fd := pending[idx]
		idx++
		if firstErr == nil {
			firstErr = finish(fd, f)
		}
		fd.Close()
	}
	return firstErr
}

func finish(fd *os.File, f *fileEnt) error {
	if err := fd.Chmod(os.FileMode(f.perm)); err != nil {
		return err
	}
	ts := stamp(f.idx)
	return unix.UtimesNanoAt(unix.AT_FDCWD, fd.Name(), []unix.Timespec{ts, ts}, 0)
}

func writeSegment(root string, j job, buf []byte, seed uint64) error {
	f := j.f
	if j.fd != nil {
		defer j.wg.Done()
		off := j.seg * segment
		n := min(segment, f.size-off)
		rng := rand.NewChaCha8(streamSeed(seed, f.idx, uint64(j.seg)))
		fill := fillFunc(j.text, rng)
		for n > 0 {
			c := min(int64(len(buf)), n)
			fill(buf[:c])
			if _, err := j.fd.WriteAt(buf[:c], off); err != nil {
				return err
			}
			off += c
			n -= c
		}
		return nil
	}
	abs := filepath.Join(root, f.rel)
	fd, err := os.OpenFile(abs, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if f.size > 0 {
		rng := rand.NewChaCha8(streamSeed(seed, f.idx, 0))
		fill := fillFunc(j.text, rng)
		n := f.size
		for n > 0 {
			c := min(int64(len(buf)), n)
			fill(buf[:c])
			if _, err := fd.Write(buf[:c]); err != nil {
				fd.Close()
				return err
			}
			n -= c
		}
	}
	if err := finish(fd, f); err != nil {
		fd.Close()
		return err
	}
	return fd.Close()
}

func makePlan(s Spec) (*plan, error) {
	p := &plan{dirPerm: map[string]uint32{}}
	switch s.Kind {
	case Small, Empty:
		if s.N < 0 || s.Dirs < 1 {
			return nil, fmt.Errorf("gentree: bad -n/-dirs")
		}
		size := s.FileSize
		if s.Kind == Empty {
			size = 0
		}
		dfmt := "d%0" + fmt.Sprint(digits(s.Dirs-1)) + "d"
		ffmt := "f%0" + fmt.Sprint(digits(s.N-1)) + "d"
		for d := 0; d < s.Dirs; d++ {
			p.dirs = append(p.dirs, fmt.Sprintf(dfmt, d))
		}
		for i := 0; i < s.N; i++ {
			p.files = append(p.files, fileEnt{
				rel:  p.dirs[i%s.Dirs] + "/" + fmt.Sprintf(ffmt, i),
				size: size, perm: 0o644, idx: uint64(i),
			})
		}
	case Large:
		if s.Size <= 0 {
			return nil, fmt.Errorf("gentree: large needs -size")
		}
		p.files = []fileEnt{{rel: "large.bin", size: s.Size, perm: 0o644}}
	case ManyLarge:
		if s.Size <= 0 || s.K <= 0 {
			return nil, fmt.Errorf("gentree: many-large needs -size and -k")
		}
		for i := 0; i < s.K; i++ {
			p.files = append(p.files, fileEnt{rel: fmt.Sprintf("large%03d.bin", i), size: s.Size, perm: 0o644, idx: uint64(i)})
		}
	case Text:
		if s.Size <= 0 || s.K <= 0 {
			return nil, fmt.Errorf("gentree: text needs -size and -k")
		}
		for i := 0; i < s.K; i++ {
			p.files = append(p.files, fileEnt{rel: fmt.Sprintf("app%03d.log", i), size: s.Size, perm: 0o644, idx: uint64(i)})
		}
	case Mixed:
		mixedPlan(p, s)
	default:
		return nil, fmt.Errorf("gentree: unknown kind %q (small, large, many-large, mixed, empty, text)", s.Kind)
	}
	return p, nil
}

func digits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// mixedSize draws a file size: many small files, a long tail of big ones
// (roughly what a source tree or home directory holds).
func mixedSize(r *rand.Rand, max int64) int64 {
	logUniform := func(lo, hi int64) int64 {
		if hi > max {
			hi = max
		}
		if lo >= hi {
			return hi
		}
		return int64(math.Exp(math.Log(float64(lo)) + r.Float64()*(math.Log(float64(hi))-math.Log(float64(lo)))))
	}
	u := r.Float64()
	switch {
	case u < 0.08:
		return 0
	case u < 0.40:
		return logUniform(1, 1<<10)
	case u < 0.70:
		return logUniform(1<<10, 16<<10)
	case u < 0.90:
		return logUniform(16<<10, 256<<10)
	case u < 0.98:
		return logUniform(256<<10, 2<<20)
	case u < 0.998:
		return logUniform(2<<20, 16<<20)
	default:
		return logUniform(16<<20, max+1)
	}
}

var nameParts = []string{
	"src", "lib", "docs", "build", "node_modules", "vendor", "assets", "img", "data",
	"test", "cache", "config", "Photos 2023", "résumé", "日本語", "notes", "-dash", ".hidden",
	"a b c", "x", "long_" + strings.Repeat("n", 60),
}

var exts = []string{".go", ".c", ".h", ".txt", ".json", ".md", ".png", ".jpg", "", ".tar.gz", ".o", ".so", ".py"}

func mixedPlan(p *plan, s Spec) {
	r := rand.New(rand.NewChaCha8(streamSeed(s.Seed, math.MaxUint64, 0)))
	// Directory tree: random parents, depth-limited, plus one deep chain.
	ndirs := max(4, s.N/25)
	depth := map[string]int{"": 0}
	all := []string{""}
	used := map[string]bool{}
	addDir := func(parent, name string, perm uint32) string {
		rel := name
		if parent != "" {
			rel = parent + "/" + name
		}
		base := rel
		for i := 2; used[rel]; i++ {
			rel = fmt.Sprintf("%s_%d", base, i)
		}
		used[rel] = true
		depth[rel] = depth[parent] + 1
		all = append(all, rel)
		p.dirs = append(p.dirs, rel)
		if perm != 0o755 {
			p.dirPerm[rel] = perm
		}
		return rel
	}
	for i := 0; i < ndirs; i++ {
		var parent string
		for {
			parent = all[r.IntN(len(all))]
			if depth[parent] < 8 {
				break
			}
		}
		perm := uint32(0o755)
		if r.IntN(40) == 0 {
			perm = 0o700
		}
		addDir(parent, nameParts[r.IntN(len(nameParts))], perm)
	}
	// A deep chain: 40 levels of 30-char names (~1.2 KiB paths).
	parent := ""
	for i := 0; i < 40; i++ {
		parent = addDir(parent, fmt.Sprintf("deep%02d_%s", i, strings.Repeat("p", 23)), 0o755)
	}
	deepest := parent
	// A few empty directories.
	for i := 0; i < 3; i++ {
		addDir(all[r.IntN(len(all))], fmt.Sprintf("empty%d", i), 0o755)
	}
	fileDirs := all // includes root ""
	for i := 0; i < s.N; i++ {
		d := fileDirs[r.IntN(len(fileDirs))]
		if i == 0 {
			d = deepest
		}
		name := fmt.Sprintf("f%06d%s", i, exts[r.IntN(len(exts))])
		if r.IntN(50) == 0 {
			name = fmt.Sprintf("file %d with spaces é%s", i, exts[r.IntN(len(exts))])
		}
		rel := name
		if d != "" {
			rel = d + "/" + name
		}
		perm := uint32(0o644)
		switch r.IntN(20) {
		case 0, 1:
			perm = 0o755
		case 2:
			perm = 0o600
		case 3:
			perm = 0o444
		}
		p.files = append(p.files, fileEnt{rel: rel, size: mixedSize(r, s.Size), perm: perm, idx: uint64(i)})
	}
	if s.N == 0 {
		return
	}
	// Hard links: ~1% extra names for existing files, in other directories.
	for i := 0; i < max(1, s.N/100); i++ {
		t := p.files[r.IntN(len(p.files))]
		d := fileDirs[r.IntN(len(fileDirs))]
		rel := fmt.Sprintf("hl%05d", i)
		if d != "" {
			rel = d + "/" + rel
		}
		p.hard = append(p.hard, linkEnt{rel: rel, target: t.rel})
	}
	// Symlinks: ~2%: relative to files and dirs, absolute, dangling.
	for i := 0; i < max(4, s.N/50); i++ {
		d := fileDirs[r.IntN(len(fileDirs))]
		rel := fmt.Sprintf("sl%05d", i)
		if d != "" {
			rel = d + "/" + rel
		}
		var target string
		switch i % 4 {
		case 0: // relative to a file
			target = relTo(d, p.files[r.IntN(len(p.files))].rel)
		case 1: // relative to a directory
			target = relTo(d, all[1+r.IntN(len(all)-1)])
		case 2:
			target = "/etc/hostname"
		case 3:
			target = fmt.Sprintf("../missing/dangling%d", i)
		}
		p.symlinks = append(p.symlinks, linkEnt{rel: rel, target: target})
	}
	sort.SliceStable(p.dirs, func(i, j int) bool { return depth[p.dirs[i]] < depth[p.dirs[j]] })
}

func relTo(fromDir, to string) string {
	rel, err := filepath.Rel("/"+fromDir, "/"+to)
	if err != nil {
		return to
	}
	return rel
}

// ParseBytes parses 4096, 64K, 64KiB, 2G, 2GiB (binary units).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:len(t)-1]
		}
	}
	var n int64
	if _, err := fmt.Sscan(t, &n); err != nil {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// HumanBytes renders n in binary units.
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d B", n)
}
