package main

// The rsync-shaped server command line: `rsync --server [--sender]
// OPTIONS . ARGS`, as rsync's server_options() builds it.
//
// syq's client normally runs its helper through a boot script, but a
// host that restricts an ssh key to rsync (rsync's support/rrsync as a
// forced command) runs only a command of that shape, vets every option
// in it and rewrites the paths. So the client retries with this form
// when the boot script is refused (remote.Config.ServerArgs), and a syq
// started as `rsync --server ...` serves as the helper with that command
// line as the authority on what the wrapper governs: the direction, the
// paths and the path-valued options, and the options that delete,
// follow links or write outside the tree. The client's handshake still
// carries syq's full options; where they disagree on those, the command
// line wins or the helper refuses.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"syq/daemon"
	"syq/fsops"
	"syq/receiver"
	"syq/wire"
)

// rsyncServerArgs is the remote command after the program: what rsync's
// server_options() and do_cmd() pass for inv, whose remote end is a
// remote shell host. Values and names are escaped for the remote shell
// as rsync's safe_arg() escapes them.
func rsyncServerArgs(inv *Invocation) []string {
	o := &inv.Opts
	push := inv.Remote.Push // the client sends: the server receives
	args := []string{"--server"}
	if !push {
		args = append(args, "--sender")
	}
	var f strings.Builder
	f.WriteByte('-')
	put := func(on bool, c byte) {
		if on {
			f.WriteByte(c)
		}
	}
	for i := 0; i < o.Verbose && i < 9; i++ {
		f.WriteByte('v')
	}
	put(o.Quiet && inv.StderrAll, 'q')
	put(o.Backup, 'b')
	put(o.Update, 'u')
	put(o.DryRun, 'n')
	put(o.Links, 'l')
	put(inv.given.dirs > 0 && !o.Recursive || o.Dirs && !o.Recursive && (o.ListOnly || o.Delete && push), 'd')
	if push {
		put(o.KeepDirLinks, 'K')
		put(o.PruneEmptyDirs, 'm')
		put(o.OmitDirTimes && !inv.omitDirTimesImplied, 'O') // the server implies it itself
		put(o.OmitLinkTimes, 'J')
		put(o.Fuzzy > 0, 'y')
		put(o.Fuzzy > 1, 'y')
	} else {
		put(o.CopyLinks, 'L')
		put(o.CopyDirLinks, 'k')
	}
	put(o.WholeFile && inv.wholeFileGiven, 'W')
	put(o.HardLinks, 'H')
	put(o.Owner, 'o')
	put(o.Group, 'g')
	put(o.Devices, 'D')
	put(o.Times, 't')
	put(o.Atimes, 'U')
	put(o.Perms, 'p')
	put(!o.Perms && o.Executability && push, 'E')
	put(o.ACLs, 'A')
	put(o.Xattrs > 0, 'X')
	put(o.Xattrs > 1, 'X')
	put(o.Recursive, 'r')
	put(o.Checksum, 'c')
	put(inv.CVSExclude, 'C')
	put(o.IgnoreTimes, 'I')
	put(o.Relative, 'R')
	put(o.OneFileSys, 'x')
	put(o.SkipMountDirs, 'x')
	put(o.Sparse, 'S')
	put(inv.compressChoice != nil && strings.EqualFold(*inv.compressChoice, "zlib"), 'z')
	// rsync's -e flags: its protocol's abilities, which a syq helper
	// ignores; sent as rsync sends them, for wrappers that check them.
	f.WriteString("e.")
	put(o.Recursive && !inv.noIncRecurse && !inv.qsort, 'i')
	f.WriteString("LsfxCIvu")
	args = append(args, f.String())

	if o.ListOnly && !push {
		args = append(args, "--list-only")
	}
	if o.Dirs && !o.Recursive && o.Delete && push {
		args = append(args, "--no-r")
	}
	if inv.compressLevel != nil {
		args = append(args, "--compress-level="+strconv.Itoa(*inv.compressLevel))
	}
	if o.Devices && !o.Specials {
		args = append(args, "--no-specials")
	} else if !o.Devices && o.Specials {
		args = append(args, "--specials")
	}
	if push && (o.OutFormatGiven || o.OutFormat != "" || o.Itemize) {
		// What the receiving server needs to know of the client's
		// output format (rsync's words; syq's helper has it in the
		// Setup).
		switch {
		case o.ItemizeUnchanged:
			args = append(args, "--log-format=%i%I")
		case o.Itemize:
			args = append(args, "--log-format=%i")
		case receiver.FormatHas(o.OutFormat, 'o'):
			args = append(args, "--log-format=%o")
		case o.Verbose == 0:
			args = append(args, "--log-format=X")
		}
	}
	if o.BlockSize > 0 {
		args = append(args, "-B"+strconv.Itoa(o.BlockSize))
	}
	if o.TimeoutSec > 0 {
		args = append(args, "--timeout="+strconv.Itoa(o.TimeoutSec))
	}
	if o.BwLimit > 0 {
		args = append(args, "--bwlimit="+strconv.FormatInt(o.BwLimit/1024, 10))
	}
	if o.BackupDir != "" {
		args = append(args, "--backup-dir", rsyncSafeArg("", o.BackupDir))
	}
	if o.Backup && o.BackupSuffix != map[bool]string{true: "", false: "~"}[o.BackupDir != ""] {
		args = append(args, rsyncSafeArg("--suffix", o.BackupSuffix))
	}
	if inv.checksumChoice != "" {
		args = append(args, rsyncSafeArg("--checksum-choice", inv.checksumChoice))
	}
	if c := inv.compressChoice; c != nil {
		switch {
		case strings.EqualFold(*c, "zlibx"):
			args = append(args, "--new-compress")
		case strings.EqualFold(*c, "zlib"):
			args = append(args, "--old-compress")
		case !strings.EqualFold(*c, "auto") && !strings.EqualFold(*c, "none"):
			args = append(args, rsyncSafeArg("--compress-choice", *c))
		}
	}
	if push {
		if o.MaxDelete > 0 {
			args = append(args, "--max-delete="+strconv.Itoa(o.MaxDelete))
		} else if o.MaxDelete == 0 {
			args = append(args, "--max-delete=-1")
		}
		// As rsync, the sizes go in bytes, as parsed ("--max-size=" is 0).
		if o.MinSize != nil {
			args = append(args, "--min-size="+strconv.FormatInt(*o.MinSize, 10))
		}
		if o.MaxSize != nil {
			args = append(args, "--max-size="+strconv.FormatInt(*o.MaxSize, 10))
		}
		switch {
		case o.DeleteBefore:
			args = append(args, "--delete-before")
		case o.Delete && o.DeleteAfter:
			args = append(args, "--delete-after")
		case o.Delete && o.DeleteLate:
			args = append(args, "--delete-delay")
		case o.Delete && !o.DeleteExcluded:
			args = append(args, "--delete")
		}
		if o.DeleteExcluded {
			args = append(args, "--delete-excluded")
		}
		if o.Force {
			args = append(args, "--force")
		}
		if o.Super > 0 {
			args = append(args, "--super")
		}
		if o.SizeOnly {
			args = append(args, "--size-only")
		}
		if o.Stats {
			args = append(args, "--stats")
		}
	} else if inv.skipCompress != nil {
		args = append(args, rsyncSafeArg("--skip-compress", *inv.skipCompress))
	}
	if inv.maxAlloc != "" {
		args = append(args, rsyncSafeArg("--max-alloc", inv.maxAlloc))
	}
	if o.DeleteMissingArgs {
		args = append(args, "--delete-missing-args")
	} else if o.IgnoreMissingArgs && !push {
		args = append(args, "--ignore-missing-args")
	}
	if push && o.ModifyWindowSec != 0 {
		if o.ModifyWindowSec < 0 {
			args = append(args, "-@"+strconv.FormatInt(o.ModifyWindowSec, 10))
		} else {
			args = append(args, "--modify-window="+strconv.FormatInt(o.ModifyWindowSec, 10))
		}
	}
	if push && o.PartialDir != "" {
		if o.PartialDir != tmpPartialDir || !o.DelayUpdates {
			args = append(args, "--partial-dir", rsyncSafeArg("", o.PartialDir))
		}
		if o.DelayUpdates {
			args = append(args, "--delay-updates")
		}
	} else if push && o.Partial {
		args = append(args, "--partial")
	}
	if o.IgnoreErrors {
		args = append(args, "--ignore-errors")
	}
	if o.CopyUnsafeLinks {
		args = append(args, "--copy-unsafe-links")
	}
	if o.SafeLinks {
		args = append(args, "--safe-links")
	}
	if o.NumericIDs {
		args = append(args, "--numeric-ids")
	}
	if push {
		// --chown travels as the maps it stands for, as in rsync.
		if o.UserMap != "" {
			args = append(args, rsyncSafeArg("--usermap", o.UserMap))
		}
		if o.GroupMap != "" {
			args = append(args, rsyncSafeArg("--groupmap", o.GroupMap))
		}
		if o.IgnoreExisting {
			args = append(args, "--ignore-existing")
		}
		if o.Existing {
			args = append(args, "--existing")
		}
		if o.TempDir != "" {
			args = append(args, "--temp-dir", rsyncSafeArg("", o.TempDir))
		}
		if o.Fsync {
			args = append(args, "--fsync")
		}
		for _, d := range o.AltDests {
			args = append(args, "--"+o.AltDestKind+"-dest", rsyncSafeArg("", d))
		}
	}
	if o.HeapStats {
		// rsync passes the server the --info levels it acts on; of
		// those, syq's helper acts on this one alone.
		args = append(args, "--info=STATS3")
	}
	switch {
	case o.Append > 1:
		args = append(args, "--append", "--append")
	case o.Append > 0:
		args = append(args, "--append")
	case o.Inplace:
		args = append(args, "--inplace")
		if o.Sparse && !o.WholeFile && push {
			args = append(args, "--no-W")
		}
	}
	remoteList := o.FilesFrom != "" // read on the remote host (expandFilesFrom)
	if remoteList || inv.filesFrom != "" && !push {
		if remoteList {
			args = append(args, "--files-from", rsyncSafeArg("", o.FilesFrom))
			if o.From0 {
				args = append(args, "--from0")
			}
		} else {
			args = append(args, "--files-from=-", "--from0")
		}
		if !o.Relative {
			args = append(args, "--no-relative")
		}
	}
	if o.Relative && !o.ImpliedDirs {
		args = append(args, "--no-implied-dirs")
	}
	if o.WriteDevices && push {
		args = append(args, "--write-devices")
	}
	if o.RemoveSourceFiles {
		args = append(args, "--remove-source-files")
	}
	if o.CopyDevices && !push {
		args = append(args, "--copy-devices")
	}
	if o.Preallocate && push {
		args = append(args, "--preallocate")
	}
	if o.OpenNoatime {
		args = append(args, "--open-noatime")
	}
	if o.MkPath && push {
		args = append(args, "--mkpath")
	}
	for _, m := range inv.RemoteOptions {
		args = append(args, rsyncSafeArg("", m))
	}
	args = append(args, ".")
	// A leading "~" rsync escapes stays a name's own; one it leaves to
	// the shell is expanded there.
	tilde := remoteTilde(inv)
	name := func(s string) string {
		a := rsyncSafeArg("\x00", s)
		if strings.HasPrefix(s, "~") && !tildeExpands(tilde, s, o.Relative) {
			a = `\` + a
		}
		return a
	}
	if push {
		args = append(args, name(remoteArg(inv.Dest)))
	} else {
		for _, s := range rsyncFormSources(inv) {
			args = append(args, name(remoteArg(s)))
		}
	}
	return args
}

// rsyncFormSources are the remote sources the command line names: with
// a local --files-from list, the source directory the list is below
// (the list itself goes in the handshake, as rsync sends it on the
// connection), otherwise the operands.
func rsyncFormSources(inv *Invocation) []string {
	if inv.filesFrom != "" && inv.Opts.FilesFrom == "" && inv.filesFromBase != "" {
		return []string{inv.filesFromBase}
	}
	return inv.Sources
}

// remoteArg is a remote path as rsync passes it: an empty one is ".".
func remoteArg(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// rsyncSafeArg escapes arg for the remote shell as rsync's safe_arg()
// does: opt "\x00" marks a file name (wildcards stay for the remote
// shell to expand, a leading "-" gets "./"), "" an option's separate
// value, otherwise arg is the value of opt and "--opt=" is prepended.
// A leading "~" is left alone: the remote shell expands it, as rsync's
// client asks for with an unescaped tilde.
func rsyncSafeArg(opt, arg string) string {
	const wildChars = "*?[]"
	filename := opt == "\x00"
	escapes := rsyncShellChars
	if !filename {
		escapes = wildChars + rsyncShellChars
	}
	var b strings.Builder
	if !filename && opt != "" {
		b.WriteString(opt + "=")
	}
	if filename && strings.HasPrefix(arg, "-") {
		b.WriteString("./")
	}
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		if c == '\\' {
			if !filename || !(i+1 < len(arg) && strings.IndexByte(wildChars, arg[i+1]) >= 0) {
				b.WriteByte('\\')
			}
		} else if strings.IndexByte(escapes, c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// serverCommand is a parsed rsync-shaped server command line.
type serverCommand struct {
	inv    *Invocation // the options, parsed as a client's would be
	sender bool        // --sender: this side sends
	args   []string    // the paths after "."
}

// isRsyncServer says whether args (after the program name) are an
// rsync server's command line: --server among the options, and no
// --daemon (that is rsync's daemon started over a remote shell).
func isRsyncServer(args []string) bool {
	server := false
	for _, a := range args {
		if a == "--" || a == "." {
			break
		}
		switch a {
		case "--server":
			server = true
		case "--daemon":
			return false
		}
	}
	return server
}

// parseServerCommand parses an rsync server's command line (after the
// program name) with the client's option table: options, then ".",
// then the paths. Options syq does not implement are refused as on a
// client's command line.
func parseServerCommand(args []string) (*serverCommand, error) {
	var opts []string
	var paths []string
	dot := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) && args[i+1] == "." {
				paths = args[i+2:]
				dot = true
			}
			break
		}
		if a == "." {
			paths = args[i+1:]
			dot = true
			break
		}
		opts = append(opts, a)
		// A value in the next word ("--backup-dir DIR", as rsync
		// sends those) is the option's, even if it is ".".
		if i+1 < len(args) && takesNextWord(a) {
			i++
			opts = append(opts, args[i])
		}
	}
	if !dot {
		return nil, &UsageError{Msg: "the server command line has no \".\" before its paths"}
	}
	// The options are parsed as a local transfer's, so nothing in the
	// operands (a name with a colon) is taken for a host.
	inv, err := parseRsyncArgs(append(append([]string{"--server"}, opts...), "--", ".", "."))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	return &serverCommand{inv: inv, sender: inv.sender, args: paths}, nil
}

// takesNextWord says whether the option word w leaves its value to the
// next word: "--name" of an option with a value and no "=", or a short
// bundle ending in such an option.
func takesNextWord(w string) bool {
	if name, ok := strings.CutPrefix(w, "--"); ok {
		o := cliLong[name]
		return o != nil && o.arg != cliNoArg
	}
	if len(w) < 2 || w[0] != '-' {
		return false
	}
	for j := 1; j < len(w); j++ {
		o := cliShort[w[j]]
		if o == nil {
			return false
		}
		if o.arg != cliNoArg {
			return j == len(w)-1
		}
	}
	return false
}

// govern fits the client's Setup to the command line: the command line
// names the direction and the paths (a wrapper such as rrsync rewrites
// them, e.g. to /proc/self/fd/N pins), adds restrictions
// (--ignore-existing, --munge-links, --drop-D), and the Setup may not
// ask this side to do what the command line does not allow.
func (c *serverCommand) govern(setup *wire.Setup) error {
	role := "receiver"
	if c.sender {
		role = "sender"
	}
	if setup.Role != role {
		return fmt.Errorf("the client asked this server to be the %s, but its command line makes it the %s", setup.Role, role)
	}
	co, so := &c.inv.Opts, &setup.Options
	// Every option that makes this side delete, follow links out of the
	// tree or write elsewhere must be on the command line, which a
	// wrapper has vetted.
	type gate struct {
		name     string
		asked    bool
		allowed  bool
		onlyRole string
	}
	gates := []gate{
		{"--delete", so.Delete, co.Delete, "receiver"},
		{"--delete-excluded", so.DeleteExcluded, co.DeleteExcluded, "receiver"},
		{"--backup", so.Backup, co.Backup, "receiver"},
		{"--delay-updates", so.DelayUpdates, co.DelayUpdates, "receiver"},
		{"--keep-dirlinks", so.KeepDirLinks, co.KeepDirLinks, "receiver"},
		{"--write-devices", so.WriteDevices, co.WriteDevices, "receiver"},
		{"--inplace", so.Inplace, co.Inplace, "receiver"},
		{"--remove-source-files", so.RemoveSourceFiles, co.RemoveSourceFiles, "sender"},
		{"--copy-links", so.CopyLinks, co.CopyLinks, "sender"},
		{"--copy-dirlinks", so.CopyDirLinks, co.CopyDirLinks, "sender"},
		{"--copy-unsafe-links", so.CopyUnsafeLinks, co.CopyUnsafeLinks, "sender"},
		{"--copy-devices", so.CopyDevices, co.CopyDevices, "sender"},
	}
	for _, g := range gates {
		if g.onlyRole == role && g.asked && !g.allowed {
			return fmt.Errorf("the client asked for %s, which is not on this server's command line", g.name)
		}
	}
	if role == "receiver" {
		// The paths the receiver writes or reads besides the
		// destination are the command line's, rewritten or not.
		for _, p := range []struct {
			name        string
			asked, cmdl *string
		}{{"--backup-dir", &so.BackupDir, &co.BackupDir}, {"--partial-dir", &so.PartialDir, &co.PartialDir}, {"--temp-dir", &so.TempDir, &co.TempDir}} {
			// One the command line adds (the server's own
			// RSYNC_PARTIAL_DIR) is used too.
			if *p.asked != "" && *p.cmdl == "" {
				return fmt.Errorf("the client asked for %s %q, which is not on this server's command line", p.name, *p.asked)
			}
			*p.asked = *p.cmdl
		}
		if len(so.AltDests) != len(co.AltDests) || len(so.AltDests) > 0 && so.AltDestKind != co.AltDestKind {
			return fmt.Errorf("the client's --%s-dest directories are not the ones on this server's command line", so.AltDestKind)
		}
		so.AltDests = co.AltDests
		so.BackupSuffix = co.BackupSuffix
		if c.inv.dropD {
			// rrsync's --drop-D: no device or special file is made here.
			so.Devices, so.Specials = false, false
		}
	}
	// Nor may the client lift what guards this host: the symlink
	// ownership check (--insecure-links is not an rsync server option),
	// or turn on its debugging output, which rsync's wrappers refuse
	// as --debug.
	so.InsecureLinks = co.InsecureLinks
	setup.Debug = false
	so.IgnoreExisting = so.IgnoreExisting || co.IgnoreExisting
	so.MungeLinks = so.MungeLinks || co.MungeLinks
	if co.FakeSuper {
		so.FakeSuper, so.Super = true, 0
	}
	if co.DryRun {
		so.DryRun = true
	}
	// The list of names: --files-from on this host is the command
	// line's file; "-" means the client's own list, whose names the
	// Setup carries below the source directory it named.
	switch ff := c.inv.filesFrom; {
	case ff == "" && so.FilesFrom != "":
		return fmt.Errorf("the client's --files-from %q is not on this server's command line", so.FilesFrom)
	case ff == "-":
		so.FilesFrom = ""
		if !c.sender {
			return errors.New("--files-from=- on a receiving server: its list would come from the client, which sends the files")
		}
		args, err := rebaseFilesFrom(setup.Args, setup.FilesFromBase, c.args)
		if err != nil {
			return err
		}
		setup.Args = args
		return nil
	case ff != "":
		so.FilesFrom, so.From0 = ff, c.inv.From0
	}
	if c.sender {
		setup.Args = c.args
		return nil
	}
	if len(c.args) != 1 {
		return fmt.Errorf("a receiving server takes one destination, its command line names %d", len(c.args))
	}
	setup.Args = c.args
	return nil
}

// rebaseFilesFrom moves the client's --files-from operands (each below
// base, as filesFromOperands makes them) below the one source directory
// of the command line.
func rebaseFilesFrom(ops []string, base string, cmdArgs []string) ([]string, error) {
	if len(cmdArgs) != 1 {
		return nil, fmt.Errorf("with --files-from=- the server's command line names one source directory, not %d", len(cmdArgs))
	}
	from := strings.TrimSuffix(base, "/")
	if from == "" {
		from = "/"
	}
	to := strings.TrimSuffix(cmdArgs[0], "/")
	if to == "" {
		to = "/"
	}
	out := make([]string, 0, len(ops))
	for _, op := range ops {
		rest, ok := strings.CutPrefix(op, from+"/")
		if !ok {
			return nil, fmt.Errorf("the client's --files-from name %q is not below its source directory %q", op, base)
		}
		for _, comp := range strings.Split(rest, "/") {
			if comp == ".." {
				return nil, fmt.Errorf("the client's --files-from name %q leaves its source directory", op)
			}
		}
		out = append(out, to+"/"+rest)
	}
	return out, nil
}

// runRsyncServer serves as syq's helper when started as an rsync server
// (`rsync --server ...`, e.g. by rrsync): the command line governs the
// client's Setup (serverCommand.govern).
func runRsyncServer(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd, err := parseServerCommand(args)
	if err != nil {
		code := wire.ExitSyntax
		var fe *wire.FatalError
		if errors.As(err, &fe) {
			code = fe.Code
		}
		fmt.Fprintf(stderr, "syq: %v\n", err)
		return code
	}
	policy := &daemon.Policy{
		Check:        cmd.govern,
		ReadRules:    fsops.ReadFile, // confined by --confine-root
		LiteralPaths: true,
	}
	// --log-file on the command line (-M--log-file, which a wrapper
	// vets and pins) is this side's own log of what it receives, as a
	// daemon's transfer log; the client's --log-file is the client's.
	if lf := openLogFile(cmd.inv, io.Discard, stderr); lf != nil {
		defer lf.close()
		policy.TransferLog, policy.LogFormat = lf.line, cmd.inv.Opts.LogFileFormat
	}
	return serveHelper(bufio.NewReaderSize(stdin, 256<<10), stdout, stderr, policy)
}

// settleServerOptions checks the options only an rsync server takes
// (--sender, --drop-D) and applies --confine-root, which bounds the
// merge files read from here on.
func settleServerOptions(inv *Invocation) error {
	switch {
	case !inv.server && inv.sender:
		return cliRefuse("--sender")
	case !inv.server && inv.dropD:
		return cliRefuse("--drop-D")
	case inv.confineRoot == "":
		return nil
	case !strings.HasPrefix(inv.confineRoot, "/"):
		return &UsageError{Msg: "--confine-root must be an absolute path"}
	case inv.Opts.InsecureLinks:
		return &UsageError{Msg: "--insecure-links cannot be combined with --confine-root"}
	}
	if err := fsops.SetConfineRoot(inv.confineRoot); err != nil {
		return &UsageError{Msg: fmt.Sprintf("--confine-root %s: %v", inv.confineRoot, err)}
	}
	return nil
}
