package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"syq/scripts/gentree/gen"
	"syq/scripts/netstand/stand"
)

// Stand cells run on scripts/netstand's network stand instead of loopback:
// the tools run in the stand's near namespace (nsenter --net, so they see
// the same files) and reach an OpenSSH sshd in the far namespace.
//
//   - wan-large, wan-many, wan-small: push over the WAN link (1 Gbit/s,
//     50 ms RTT; a userspace TUN relay makes the delay, the kernel has no
//     netem); wan-large-200ms the same at 200 ms RTT.
//   - wan-z: a compressible text corpus pushed with -z over 100 Mbit/s,
//     50 ms RTT.
//   - nfs-small-rtt*: copy small files to local from a network file system
//     across the WAN link with a short RTT; nfs-small-to-rtt* copy them
//     from local to it. This kernel has no NFS client, so the stand-in is
//     sshfs (FUSE, SFTP) mounted from the near namespace, with the kernel's
//     attribute, entry and directory caches off so that every stat, open
//     and create is a round trip, as on NFS without caching. With
//     --nfs-src (--nfs-dst) the cells read (write) a real NFS mount
//     instead (no stand).
//   - rails-k: push over K tbf-limited veth links; syq with default flags.
//
// Both ends are this machine: the relay runs in the bench process (its CPU
// is not in any arm's), sshd and its sessions in the far namespace. Stand
// cells are run only when named (--cells wan,nfs,rails or their full
// names), not by "all".

var nfsSrc = flag.String("nfs-src", "", "nfs-small cells: read this directory on a real NFS mount instead of sshfs across the stand; "+
	"it must hold the tree the cell generates (go run ./scripts/gentree -kind small -n N -dirs D -file-size 4K DIR), which verification compares against")

var nfsDst = flag.String("nfs-dst", "", "nfs-small-to cells: write to this directory on a real NFS mount instead of sshfs across the stand; "+
	"a scratch directory: the cell removes and recreates it before every run")

// wanSpec says which stand a cell runs on.
type wanSpec struct {
	stand  stand.Config
	nfs    bool // arms copy from the sshfs mount (or --nfs-src) to local
	nfsTo  bool // arms copy from local to the sshfs mount (or --nfs-dst)
	active bool // set while runCell runs the cell on its stand
	// probeCompress: before the timed runs, ask rsync and syq which
	// codec and level -z negotiates on this stand, for the measure line.
	probeCompress bool
}

// benchStand is the stand's name: namespaces syq-bench-near, syq-bench-far.
const benchStand = "bench"

// nfsRoot is where the far side's / is mounted through sshfs while an nfs
// cell runs; nfs arms read nfsRoot+src, nfs-to arms write nfsRoot+dst (the
// same directories as the bench's own src and dst, which it generates and
// verifies directly).
var nfsRoot string

func init() {
	near, _ := stand.Namespaces(benchStand)
	inNear := func(k string) arm {
		a := arms[k]
		return arm{name: a.name, argv: func(x argEnv) []string { return stand.NetnsCommand(near, a.argv(x)...) }}
	}
	for _, k := range []string{"syq-ssh", "rsync-ssh", "rclone-sftp", "tar-ssh"} {
		arms[strings.TrimSuffix(strings.TrimSuffix(k, "-ssh"), "-sftp")+"-wan"] = inNear(k)
	}
	// -z arms: the same command with -z after -a (argv[2]); each tool
	// then picks its own codec (wan-z's measure says which).
	for _, k := range []string{"syq-wan", "rsync-wan"} {
		a := arms[k]
		arms[k+"-z"] = arm{name: strings.Replace(a.name, " -e ssh", " -z -e ssh", 1), argv: func(x argEnv) []string {
			argv := a.argv(x)
			for i, w := range argv {
				if w == "-a" {
					return slices.Insert(argv, i+1, "-z")
				}
			}
			panic("bench: no -a in " + strings.Join(argv, " "))
		}}
	}
	// scp -rp of the source's top-level names (the trees here have no
	// dot files), with the same ssh options as the other OpenSSH arms.
	arms["scp-wan"] = arm{name: "scp -rp", argv: func(x argEnv) []string {
		a := []string{"bash", "-c", `cd "$1" || exit 1; dest=$2; shift 2; exec "$@" -r -p -- * "$dest"`, "scp", x.src, x.rem.host + ":" + x.dst + "/", "scp"}
		ssh := x.rem.srv.SSHArgs(sshOpts...)[1:]
		for i, w := range ssh {
			if w == "-p" { // scp's port flag is -P
				ssh[i] = "-P"
			}
		}
		return stand.NetnsCommand(near, append(a, ssh...)...)
	}}
	// nfs arms: the local tools, reading the network file system.
	for _, k := range []string{"syq", "rsync", "cp", "tar", "rclone", "rclone-t64"} {
		a := arms[k]
		arms[k+"-nfs"] = arm{name: a.name, tuned: a.tuned, argv: func(x argEnv) []string {
			if *nfsSrc != "" {
				x.src = *nfsSrc
			} else {
				x.src = filepath.Join(nfsRoot, x.src)
			}
			return a.argv(x)
		}}
		// With --nfs-dst, the cell's destination is that directory
		// already (runWANCell sets it), which the arm writes as is.
		arms[k+"-nfs-to"] = arm{name: a.name, tuned: a.tuned, argv: func(x argEnv) []string {
			if *nfsDst == "" {
				x.dst = filepath.Join(nfsRoot, x.dst)
			}
			return a.argv(x)
		}}
	}
}

func wanCells(scale string) []cell {
	// The stand's cells have no tiny size: they run only when named.
	pick := func(full, small int) int { return bySize(scale, full, small, small) }
	pickB := func(full, small int64) int64 { return bySize(scale, full, small, small) }
	wan := stand.Config{WAN: true, Rate: 1e9, RTT: 50 * time.Millisecond}
	sshArms := []string{"syq-wan", "rsync-wan", "rclone-wan", "tar-wan", "scp-wan"}
	nfsArms := []string{"syq-nfs", "rsync-nfs", "cp-nfs", "tar-nfs", "rclone-nfs", "rclone-t64-nfs"}
	// Every file costs each tool a fixed number of round trips through
	// the SFTP server (lookups, opens, reads; creates, setstats, renames
	// when writing), so times grow linearly with the count: 2,000 files
	// keep a full run of both RTTs and six arms near 20 minutes here (the
	// slowest arm, cp -a, takes about 45 ms a file at 1 ms). Writing costs
	// each tool several times what reading does: half the files, as the
	// seed page's -> NFS cell has fewer than its <- NFS cell.
	small := gen.Spec{Kind: gen.Small, N: pick(2000, 500), Dirs: 64, FileSize: 4096}
	smallTo := gen.Spec{Kind: gen.Small, N: pick(1000, 100), Dirs: 64, FileSize: 4096}
	nfsToArms := []string{"syq-nfs-to", "rsync-nfs-to", "cp-nfs-to", "tar-nfs-to", "rclone-nfs-to", "rclone-t64-nfs-to"}
	// sshfsCell is an NFS cell on the sshfs stand-in at rtt; to: the
	// arms write to the mount, else they read from it.
	sshfsCell := func(rtt time.Duration, to bool) cell {
		name, spec, arms, what, scenario := "nfs-small-rtt", small, nfsArms, "from a network fs to local", "NFS: small files to local"
		if to {
			name, spec, arms, what, scenario = "nfs-small-to-rtt", smallTo, nfsToArms, "from local to a network fs", "NFS: small files from local"
		}
		ms := strconv.FormatFloat(float64(rtt)/float64(time.Millisecond), 'g', -1, 64)
		return cell{name: name + ms + "ms", fs: fsTmpfs, spec: spec, mode: modeCopy, arms: arms, reps: pick(3, 2),
			wan: &wanSpec{stand: stand.Config{WAN: true, RTT: rtt}, nfs: !to, nfsTo: to}, scenario: scenario,
			measure: fmt.Sprintf("small files %s, set RTT %s ms: sshfs (NFS stand-in, no kernel NFS client here) with attribute/entry/dir caches off; "+
				"SFTP v3 carries whole seconds, so every tool's mtimes lose their nanoseconds", what, ms)}
	}
	const rails = 4
	cells := []cell{
		{name: "wan-large", fs: fsTmpfs, spec: gen.Spec{Kind: gen.Large, Size: pickB(2<<30, 256<<20)}, mode: modeCopy,
			arms: sshArms, reps: pick(3, 2), remote: true, wan: &wanSpec{stand: wan},
			scenario: "WAN: one large file", ceilingMBps: 125, ceilingLabel: "link 1 Gbit/s",
			why:     "ssh-based tools are held by OpenSSH's channel window at 50 ms RTT; syq's TLS rail is not",
			measure: "one large file pushed over a long fat pipe: 1 Gbit/s, 50 ms RTT (userspace TUN relay, tail-drop queue 1.5 x BDP)"},
		{name: "wan-many", fs: fsTmpfs, spec: gen.Spec{Kind: gen.ManyLarge, K: pick(8, 4), Size: pickB(256<<20, 64<<20)}, mode: modeCopy,
			arms: sshArms, reps: pick(3, 2), remote: true, wan: &wanSpec{stand: wan},
			scenario: "WAN: many large files", ceilingMBps: 125, ceilingLabel: "link 1 Gbit/s",
			measure: "K large files pushed over 1 Gbit/s, 50 ms RTT"},
		// Issue 5: 20,000 x 4 KiB over 50 ms, against rsync -a -e ssh.
		// scp and rclone sftp are left out: both spend round trips per
		// file (scp's SFTP open/write/close, rclone's SFTP calls and a
		// remote md5sum session per file), tens of minutes at 20,000.
		{name: "wan-small", fs: fsTmpfs, spec: gen.Spec{Kind: gen.Small, N: pick(20000, 2000), Dirs: 256, FileSize: 4096}, mode: modeCopy,
			arms: []string{"syq-wan", "rsync-wan", "tar-wan"}, reps: pick(3, 3), remote: true, wan: &wanSpec{stand: wan},
			scenario: "WAN: small files", ceilingMBps: 125, ceilingLabel: "link 1 Gbit/s",
			measure: "small files pushed over 1 Gbit/s, 50 ms RTT: round trips, not bytes (scp and rclone sftp left out: round trips per file)"},
		// Issue 5: one large file at 200 ms RTT. The BDP is 25 MB: the
		// relay's queue is 1.5 x BDP (37.5 MB) and its FIFO holds the
		// 12.5 MB on the fibre on top; the namespaces' TCP limits are the
		// kernel's (tcp_rmem[2] 32 MiB, tcp_wmem[2] 4 MiB), which syq,
		// as root, passes with SO_*BUFFORCE and more rails.
		{name: "wan-large-200ms", fs: fsTmpfs, spec: gen.Spec{Kind: gen.Large, Size: pickB(2<<30, 256<<20)}, mode: modeCopy,
			arms: sshArms, reps: pick(3, 2), remote: true, wan: &wanSpec{stand: stand.Config{WAN: true, Rate: 1e9, RTT: 200 * time.Millisecond}},
			scenario: "WAN: one large file", ceilingMBps: 125, ceilingLabel: "link 1 Gbit/s",
			why:     "ssh-based tools are held by OpenSSH's channel window at 200 ms RTT; syq's TLS rails are not",
			measure: "one large file pushed over a long fat pipe: 1 Gbit/s, 200 ms RTT (BDP 25 MB; relay tail-drop queue 1.5 x BDP)"},
		// Issue 7: -z on a compressible text corpus over 50 ms / 100 Mbit,
		// both tools with -z at their default codec and level; the plain
		// arms show what compression bought each.
		{name: "wan-z", fs: fsTmpfs, spec: gen.Spec{Kind: gen.Text, K: pick(16, 4), Size: pickB(64<<20, 32<<20)}, mode: modeCopy,
			arms: []string{"syq-wan-z", "rsync-wan-z", "syq-wan", "rsync-wan"}, reps: pick(3, 2), remote: true,
			wan:      &wanSpec{stand: stand.Config{WAN: true, Rate: 100e6, RTT: 50 * time.Millisecond}, probeCompress: true},
			scenario: "WAN: compressible data with -z", ceilingMBps: 12.5,
			why: "Both tools compress with zstd (rsync 3.5.0 negotiates zstd level 3 between two 3.5.0 ends), so the 100 Mbit/s " +
				"link decides: at about 5x, the corpus needs the same seconds on the wire whichever tool compresses it. syq " +
				"raises its level while the link holds it back (a few percent fewer bytes for more CPU: the cpu columns), " +
				"which buys nothing measurable here: the two are within the stand's noise; the plain arms show what -z saves each tool.", ceilingLabel: "link 100 Mbit/s (uncompressed bytes; -z can pass it)",
			measure: "log-like text (zstd -3 about 5x) pushed with -z over 100 Mbit/s, 50 ms RTT"},
	}
	if *nfsDst != "" {
		cells = append(cells, cell{name: "nfs-small-to-real", fs: fsTmpfs, spec: smallTo, mode: modeCopy, arms: nfsToArms, reps: pick(3, 2),
			wan: &wanSpec{nfsTo: true}, scenario: "NFS: small files from local"})
	}
	if *nfsSrc != "" {
		// A real NFS mount has its own RTT: one cell, no stand.
		cells = append(cells, cell{name: "nfs-small-real", fs: fsTmpfs, spec: small, mode: modeCopy, arms: nfsArms, reps: pick(3, 2),
			wan: &wanSpec{nfs: true}})
	} else {
		cells = append(cells, sshfsCell(200*time.Microsecond, false), sshfsCell(time.Millisecond, false))
	}
	if *nfsDst == "" {
		cells = append(cells, sshfsCell(200*time.Microsecond, true), sshfsCell(time.Millisecond, true))
	}
	return append(cells,
		cell{name: "rails-k", fs: fsTmpfs, spec: gen.Spec{Kind: gen.ManyLarge, K: pick(8, 4), Size: pickB(256<<20, 64<<20)}, mode: modeCopy,
			arms: sshArms, reps: pick(3, 2), remote: true, wan: &wanSpec{stand: stand.Config{Rails: rails, RailRate: 250e6}},
			scenario: "Multi-rail", ceilingMBps: rails * 250 / 8, ceilingLabel: "4 links x 250 Mbit/s",
			measure: fmt.Sprintf("K large files pushed to a host with %d links of 250 Mbit/s each (veth + tc tbf, no added RTT); ssh goes over link 1; syq with default flags", rails)})
}

// withWANCells adds the stand cells when the selection names cells (not
// "all"): they need the stand and take long on a WAN.
func withWANCells(all []cell, list, scale string) []cell {
	if list == "" || list == "all" {
		return all
	}
	return append(all, wanCells(scale)...)
}

// runWANCell builds the cell's stand, points the bench's remote at the
// far sshd (or mounts the network fs), and runs the cell as any other.
func (b *bench) runWANCell(c cell) error {
	w := c.wan
	w.active = true
	defer func() { w.active = false }()
	if w.nfs && *nfsSrc != "" {
		if st, err := os.Stat(*nfsSrc); err != nil || !st.IsDir() {
			return fmt.Errorf("--nfs-src %s: not a directory (%v)", *nfsSrc, err)
		}
		c.measure = fmt.Sprintf("small files from the network fs at --nfs-src %s (%s) to local", *nfsSrc, mountOpts(mountPointOf(*nfsSrc)))
		return b.runCell(c)
	}
	if w.nfsTo && *nfsDst != "" {
		if st, err := os.Stat(*nfsDst); err != nil || !st.IsDir() {
			return fmt.Errorf("--nfs-dst %s: not a directory (%v)", *nfsDst, err)
		}
		c.measure = fmt.Sprintf("small files from local to the network fs at --nfs-dst %s (%s)", *nfsDst, mountOpts(mountPointOf(*nfsDst)))
		f := b.fss[c.fs]
		f.dstDir = *nfsDst
		defer func() { f.dstDir = "" }()
		return b.runCell(c)
	}
	cfg := w.stand
	cfg.Name, cfg.SSHD = benchStand, true
	s, err := stand.Up(cfg)
	if err != nil {
		return fmt.Errorf("stand: %w", err)
	}
	r, err := standRemote(s)
	if err != nil {
		s.Close()
		return err
	}
	old := b.rem
	b.rem = r // closed on a signal by main's cleanup (r.onClose tears the stand down)
	defer func() {
		b.rem = old
		r.close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := s.Ping(ctx, 5, s.FarAddr())
	if err != nil {
		return fmt.Errorf("stand: %w", err)
	}
	desc := standDesc(s, p)
	r.Link.Where = desc
	b.log("\n-- stand for %s: %s", c.name, desc)

	if w.nfs || w.nfsTo {
		if err := r.mountSSHFS(s, w.nfs); err != nil {
			return err
		}
		c.measure += " [" + desc + "; sshfs " + r.sshfsOpts + "]"
	} else {
		if err := r.measure(b.cfg.scale); err != nil {
			return fmt.Errorf("stand: %w", err)
		}
		if b.syq != "" {
			t, err := r.installHelper(s, b.syq)
			if err != nil {
				return fmt.Errorf("stand: installing syq's helper: %w", err)
			}
			b.log("  syq helper installed on the far side (untimed first copy of one small file, incl. upload): %.2fs", t.Seconds())
		}
		if w.probeCompress {
			codecs := r.probeCompress(s, b.syq)
			b.log("  -z negotiated: %s", codecs)
			c.measure += " [-z negotiated: " + codecs + "]"
		}
	}
	err = b.runCell(c)
	if rl := s.Relay(); rl != nil {
		ab, ba := rl.Stats()
		b.log("  relay after %s: near->far %d packets %.1f MB %d dropped; far->near %d packets %.1f MB %d dropped",
			c.name, ab.Packets, float64(ab.Bytes)/1e6, ab.Dropped, ba.Packets, float64(ba.Bytes)/1e6, ba.Dropped)
	}
	return err
}

func standDesc(s *stand.Stand, p stand.PingResult) string {
	c := s.Config()
	var parts []string
	if c.WAN {
		rate := "unlimited rate (relay ceiling)"
		if c.Rate > 0 {
			rate = fmt.Sprintf("%.0f Mbit/s", float64(c.Rate)/1e6)
		}
		parts = append(parts, fmt.Sprintf("WAN %s, RTT set %v (userspace TUN relay)", rate, c.RTT))
	}
	if c.Rails > 0 {
		rate := "no rate limit"
		if c.RailRate > 0 {
			rate = fmt.Sprintf("tc tbf %.0f Mbit/s each", float64(c.RailRate)/1e6)
		}
		parts = append(parts, fmt.Sprintf("%d veth rails 198.18.L.1-198.18.L.2, %s", c.Rails, rate))
	}
	return fmt.Sprintf("stand %s/%s: %s; ping %s: rtt min/avg/max %.3f/%.3f/%.3f ms; sshd in %s at %s:%d",
		s.Near(), s.Far(), strings.Join(parts, "; "), s.FarAddr(), ms(p.Min), ms(p.Avg), ms(p.Max), s.Far(), s.SSHD().Host(), s.SSHD().Port())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// standRemote is the bench's remote for a stand: its far sshd, every ssh
// run in the near namespace.
func standRemote(s *stand.Stand) (*remote, error) {
	dir, err := os.MkdirTemp("/tmp", "syq-bench-stand-")
	if err != nil {
		return nil, err
	}
	srv := s.SSHD()
	r := &remote{dir: dir, cache: filepath.Join(dir, "cache"), host: srv.Host(), srv: srv}
	r.onClose = func() {
		r.unmountSSHFS()
		s.Close()
	}
	for _, d := range []string{r.cache, filepath.Join(dir, "probe")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			r.close()
			return nil, err
		}
	}
	opts := append(append([]string{}, sshOpts...), "-o", "SetEnv=XDG_CACHE_HOME="+r.cache)
	// The arms are run in the near namespace whole; sshArgs is too, for
	// the bench's own probes and tar's pipe.
	r.sshArgs = s.NearCommand(srv.SSHArgs(opts...)...)
	r.sshCmd = srv.SSHCommand(opts...)
	r.Link.SSHCommand = strings.Join(s.NearCommand(), " ") + " <tool> -e '" + r.sshCmd + "'"
	r.Link.SSHD = fmt.Sprintf("OpenSSH sshd in namespace %s on %s:%d (pid %d), AcceptEnv XDG_CACHE_HOME, SetEnv SHLVL=1",
		s.Far(), srv.Host(), srv.Port(), srv.PID())
	return r, nil
}

// installHelper runs syq once, untimed, so that the timed runs find its
// helper installed on the far side, and returns how long that took.
func (r *remote) installHelper(s *stand.Stand, syq string) (time.Duration, error) {
	src, dst := filepath.Join(r.dir, "warm-src"), filepath.Join(r.dir, "warm-dst")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("warm\n"), 0o644); err != nil {
		return 0, err
	}
	argv := s.NearCommand(syq, "rsync", "-a", "-e", r.sshCmd, src+"/", r.host+":"+dst+"/")
	t0 := time.Now()
	out, err := groupOutput(exec.Command(argv[0], argv[1:]...))
	if err != nil {
		return 0, fmt.Errorf("%v: %v: %s", argv, err, trunc(string(out), 300))
	}
	if b, err := os.ReadFile(filepath.Join(dst, "f")); err != nil || string(b) != "warm\n" {
		return 0, fmt.Errorf("first copy did not arrive (%v)", err)
	}
	if p, _ := r.helperInstalled(); p == "" {
		return 0, fmt.Errorf("no helper under %s after the first copy", r.cache)
	}
	return time.Since(t0), nil
}

// compressRE finds rsync's "Client negotiated compress: zstd (level 3)"
// (--debug=nstr) and syq's "remote: zstd compression, level ..."
// (SYQ_DEBUG) lines.
var compressRE = regexp.MustCompile(`(?m)^.*(Client( negotiated)? compress: .*|zstd compression, .*)$`)

// probeCompress copies one small file with -z once with rsync and once
// with syq (untimed) and returns what each says it negotiated.
func (r *remote) probeCompress(s *stand.Stand, syq string) string {
	src := filepath.Join(r.dir, "warm-src")
	var out []string
	run := func(tool string, argv []string) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "SYQ_DEBUG=1")
		b, err := groupOutput(cmd)
		m := compressRE.FindStringSubmatch(string(b))
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%s: probe failed (%v: %s)", tool, err, trunc(string(b), 200)))
		case m == nil:
			out = append(out, tool+": no compression line")
		default:
			out = append(out, tool+": "+strings.TrimSpace(m[1]))
		}
	}
	run("rsync", s.NearCommand("rsync", "-a", "-z", "--debug=nstr1", "-e", r.sshCmd, src+"/", r.host+":"+filepath.Join(r.dir, "z-rsync")+"/"))
	if syq != "" {
		run("syq", s.NearCommand(syq, "rsync", "-a", "-z", "-e", r.sshCmd, src+"/", r.host+":"+filepath.Join(r.dir, "z-syq")+"/"))
	}
	return strings.Join(out, "; ")
}

// mountSSHFS mounts the far side's / at r.dir/nfs from the near namespace
// and points the nfs arms there; stableInodes for cells that read it.
func (r *remote) mountSSHFS(s *stand.Stand, stableInodes bool) error {
	if _, err := exec.LookPath("sshfs"); err != nil {
		return fmt.Errorf("nfs cells need sshfs (apt-get install -y sshfs): %w", err)
	}
	mnt := filepath.Join(r.dir, "nfs")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return err
	}
	// No caching in the kernel (attributes, lookups, negative lookups) or
	// in sshfs (directory listings): every stat and open goes to the far
	// side. File data is not kept across opens either (no kernel_cache).
	// noforget keeps inode numbers stable, as NFS's are: without it a
	// file looked up twice may change st_ino, and cp -a then skips it as
	// "replaced while being copied". Cells that write leave it out: the
	// bench clears the destination behind sshfs's back between runs, and
	// sshfs 3.7 with noforget then dies on the next run's first rename
	// onto a name it remembers (rsync: "Software caused connection
	// abort").
	r.sshfsOpts = "dir_cache=no,attr_timeout=0,entry_timeout=0,negative_timeout=0"
	if stableInodes {
		r.sshfsOpts += ",noforget"
	}
	argv := s.NearCommand("sshfs", "-o", r.sshfsOpts, "-o", "ssh_command="+r.srv.SSHCommand(sshOpts...),
		r.srv.User()+"@"+r.srv.Host()+":/", mnt)
	if out, err := groupOutput(exec.Command(argv[0], argv[1:]...)); err != nil {
		return fmt.Errorf("sshfs: %v: %v: %s", argv, err, trunc(string(out), 300))
	}
	r.sshfsMount = mnt
	nfsRoot = mnt
	if !isMountPoint(mnt) {
		return fmt.Errorf("sshfs returned but %s is not a mount point", mnt)
	}
	return nil
}

func (r *remote) unmountSSHFS() {
	if r.sshfsMount == "" {
		return
	}
	if isMountPoint(r.sshfsMount) {
		if out, err := exec.Command("fusermount3", "-u", r.sshfsMount).CombinedOutput(); err != nil {
			// Lazily, if busy or the far side is already gone.
			if out2, err2 := exec.Command("umount", "-l", r.sshfsMount).CombinedOutput(); err2 != nil {
				fmt.Fprintf(os.Stderr, "bench: unmounting %s: %v: %s; %v: %s\n", r.sshfsMount, err, out, err2, out2)
			}
		}
	}
	r.sshfsMount, nfsRoot = "", ""
}

// mountPointOf returns the mount point p is under, from /proc/self/mounts.
func mountPointOf(p string) string {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return p
	}
	best := "/"
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (p == f[1] || strings.HasPrefix(p, strings.TrimSuffix(f[1], "/")+"/")) && len(f[1]) > len(best) {
			best = f[1]
		}
	}
	return best
}
