package main

// Command-line parsing for `syq rsync`.
//
// rsync parses its command line with popt, and scripts depend on popt's
// exact behaviour: bundled short options (-avz, -aessh), "--opt=value" and
// "--opt value", options interleaved with operands, "--" ending the
// options, and options applied strictly left to right (so "--no-p -a"
// turns perms back on while "-a --no-p" leaves them off).
//
// Parsing happens in two passes over one option table (cliOptions):
//
//  1. cliScan walks the words exactly as popt does. It finds every option
//     occurrence and its value, separates the operands, and produces
//     rsync's own error text for unknown options, missing or unexpected
//     arguments and bad numbers. Options rsync has but syq does not
//     implement yet are refused here, in command-line order.
//  2. cliApply hands the occurrences, rewritten as unambiguous
//     "--name[=value]" words, to a pflag.FlagSet whose flags are custom
//     Values. Each Value's Set mutates the Invocation immediately, so the
//     settings are applied in command-line order.

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"syq/delta"
	"syq/filter"
	"syq/fsops"
	"syq/receiver"
	"syq/sender"
	"syq/wire"
)

// Invocation is a parsed `syq rsync` command line.
type Invocation struct {
	Opts        wire.Options
	Sources     []string // operands except the last (or the only one)
	Dest        string   // "" when only one operand was given (list-only mode: rsync lists the source)
	ShowHelp    bool     // --help, or -h as the only argument
	ShowVersion bool     // --version / -V
	// StopAt is when --stop-at or --stop-after ends the transfer (exit
	// 30); zero: never.
	StopAt time.Time
	// StderrAll is --stderr=all (or --msgs2stderr): every message,
	// also -v's and -i's lines and the summary, goes to stderr. rsync's
	// other modes, errors (its default) and client, differ only in which
	// of its processes prints an error; both put errors on stderr and
	// the rest on stdout, as syq's client does.
	StderrAll bool
	stderrErr string // a bad --stderr mode, reported after parsing
	// LogFile is --log-file: where the client logs what happened.
	LogFile string
	// VersionLevel counts -V: 2 or more prints the capabilities as JSON,
	// in rsync's -VV layout.
	VersionLevel int
	Rsh          string // -e/--rsh
	oldArgs      int    // --old-args given (1), --no-old-args (-1), neither (0)
	secludedArgs int    // -s given (1), --no-s (-1), neither (0)
	// secluded: rsync would send the remote names without a remote
	// shell seeing them (-s, or RSYNC_PROTECT_ARGS).
	secluded    bool
	trustSender bool       // --trust-sender
	RsyncPath   string     // --rsync-path
	Remote      *RemoteEnd // nil for a local transfer
	// RemoteOptions (-M) are rsync options for the remote side only.
	RemoteOptions []string
	// Filter rules in command-line order; -C adds its rules after them.
	Filters         []filterArg
	CVSExclude      bool                                    // -C
	From0           bool                                    // -0: rule files are NUL-separated
	filterF         int                                     // how many -F were given
	filters         *filter.List                            // compiled from Filters and CVSExclude
	deleteWhens     uint8                                   // which of --delete-before, -during/-delay, -after were given (bits)
	deleteEarlyLate bool                                    // --delete-before or --delete-after
	noIncRecurse    bool                                    // --no-inc-recursive
	qsort           bool                                    // --qsort
	altDestConflict string                                  // the error for a second kind of --*-dest
	filesFrom       string                                  // --files-from
	given           struct{ recursive, dirs, relative int } // +1 given on, -1 given off, 0 not given
	oldDirs         bool                                    // --old-dirs, not cancelled by a later -d or --no-d
	maxSize         *string                                 // --max-size as given (even empty: 0)
	bwlimit         string                                  // --bwlimit as given
	outbuf          string                                  // --outbuf as given
	maxAlloc        string                                  // --max-alloc as given
	checksumChoice  string                                  // --checksum-choice as given
	// checksumChoiceGiven: --checksum-choice was given, even empty
	// (which rsync refuses as an unknown name).
	checksumChoiceGiven bool
	protocol            int      // --protocol as given
	debugFlags          []string // --debug values as given
	logFileFormat       *string  // --log-file-format as given
	stopAt              string   // --stop-at as given
	stopAfter           string   // --stop-after as given
	minSize             *string  // --min-size as given
	suffix              string   // --suffix
	suffixSet           bool
	// omitDirTimesImplied: -O comes from -b without --backup-dir, not
	// from the command line.
	omitDirTimesImplied bool
	NoProgress          bool // --no-progress was the last word on progress
	Progress2           bool // --info=progress2: one whole-transfer progress line on stdout
	InfoHelp            bool // --info=help
	// infoWords are the --info values as given (their words win over
	// what -v, --stats and --progress imply, wherever they stand).
	infoWords []string
	// statsGiven and progressGiven: --stats and --progress (or -P) were
	// given; the levels they imply are settleInfo's.
	statsGiven, progressGiven bool
	DebugHelp                 bool // --debug=help
	Debug                     bool // SYQ_DEBUG=1 is read elsewhere; the parser leaves this false

	// Compression options as given; settleCompress turns them into
	// Opts.Compress and Opts.SkipCompress.
	compress       int     // -z count
	compressChoice *string // --compress-choice (--old-compress: zlib, --new-compress: zlibx)
	compressLevel  *int    // --compress-level
	skipCompress   *string // --skip-compress

	// Delta transfer. wholeFileGiven: -W or --no-whole-file was given,
	// so the mode's default (whole locally, delta remotely) does not
	// apply.
	blockSize      string // --block-size as given
	wholeFileGiven bool

	// syq-only options of remote mode.
	NoBootstrap bool // --syq-no-bootstrap
	Rails       int  // --syq-rails N (0 = automatic)
	NoRails     bool // --syq-no-rails

	RailAddrs []string // --syq-rail-addrs a,b: the remote addresses rails may use

	// Batch mode (batch.go): --write-batch (writeBatch 1),
	// --only-write-batch (-1) or --read-batch, all naming batchName.
	// rawArgs and operands are the command line as given, for the
	// replay script.
	batchName  string
	writeBatch int
	readBatch  bool
	rawArgs    []string
	operands   []string
	prog       []string // the program's words: argv[0], and "rsync" after "syq"

	NoTunerCache bool // --syq-no-tuner-cache

	// Daemon client options (daemonclient.go).
	Port         int    // --port: the daemon's TCP port (0: 873, or the URL's)
	Address      string // --address: the local address to connect from
	PasswordFile string // --password-file
	EarlyInput   string // --early-input: a file sent to a daemon's "early exec"
	NoMotd       bool   // --no-motd
	ConTimeout   int    // --contimeout, seconds (0: none)
	// IPFamily is "4" (-4/--ipv4) or "6" (-6/--ipv6): the address
	// family of the daemon's socket and the rails, passed to ssh as
	// its own -4/-6.
	IPFamily string
	SockOpts string // --sockopts: socket options of a daemon's TCP connection
	// hits are the options as given, which a daemon client sends the
	// daemon for its "refuse options".
	hits []cliHit

	// An rsync server's command line (serverargs.go): --server,
	// --sender, and what a wrapper such as rrsync adds: --drop-D (make
	// no device or special file) and --confine-root. filesFromBase is
	// the source directory a local --files-from list is below.
	server, sender, dropD bool
	appended              bool // --append was given (a server's second one is -verify)
	confineRoot           string
	filesFromBase         string
	// RsyncForm (--syq-rsync-form): start the remote helper as an
	// rsync server at once, for a host that allows nothing else.
	RsyncForm bool

	// --usermap, --groupmap, --chown (idmap.go) and -W as given.
	idMapVia [2]string // "usermap"/"groupmap" or "chown": what set Opts.UserMap, Opts.GroupMap
	idMapErr string    // the first conflict among them
}

// maxWorkers bounds --syq-workers: beyond it goroutines only contend.
const maxWorkers = 1024

// UsageError is a command-line problem; rsync exits 1 (RERR_SYNTAX) for these.
//
// Msg (and Error()) never carries the program name: the caller prints
// "syq: " + Msg, as rsync prints "rsync: " + the same text, except when
// NoPrefix is set, for the few messages rsync prints bare.
type UsageError struct {
	Msg       string
	NoPrefix  bool // rsync prints this message without its program name
	ShowUsage bool // rsync prints its usage text to stderr before exiting (no operands given)
	Code      int  // rsync's exit code when not RERR_SYNTAX (1)
}

func (e *UsageError) Error() string { return e.Msg }

// ExitCode is rsync's RERR_SYNTAX unless the error says otherwise.
func (e *UsageError) ExitCode() int {
	if e.Code != 0 {
		return e.Code
	}
	return wire.ExitSyntax
}

// cliArg says whether an option takes a value.
type cliArg uint8

const (
	cliNoArg  cliArg = iota // a switch; "--opt=x" is an error
	cliStrArg               // takes a string value
	cliIntArg               // takes an integer value, validated like popt's POPT_ARG_INT
)

// cliOpt is one entry of the option table. An option is implemented when
// ready is true; exactly one of on, str and num is then set, matching arg.
// Options rsync accepts that syq does not implement have ready == false and
// are refused with "option --NAME is not supported yet"; a few of them
// already carry a setter so that enabling them is a one-word change.
type cliOpt struct {
	long     string // name after "--"; "" for rsync's short-only options (-D, -P, -F)
	short    byte   // single-letter form, 0 if none
	arg      cliArg
	ready    bool
	nonNeg   bool // integer must be >= 0 (syq-only options)
	most     int  // if > 0, the integer's upper bound (syq-only options)
	on       func(*Invocation)
	str      func(*Invocation, string)
	num      func(*Invocation, int)
	helpOnly bool // --help: stops parsing at once, like rsync
}

// label is the name used in messages about the option: its long form
// unless the option has none.
func (o *cliOpt) label() string {
	if o.long != "" {
		return "--" + o.long
	}
	return "-" + string(o.short)
}

// flagName is the option's name inside the pflag.FlagSet.
func (o *cliOpt) flagName() string {
	if o.long != "" {
		return o.long
	}
	return "short-" + string(o.short)
}

func optFlag(long string, short byte, fn func(*Invocation)) cliOpt {
	return cliOpt{long: long, short: short, arg: cliNoArg, ready: true, on: fn}
}

func optText(long string, short byte, fn func(*Invocation, string)) cliOpt {
	return cliOpt{long: long, short: short, arg: cliStrArg, ready: true, str: fn}
}

func optNum(long string, short byte, fn func(*Invocation, int)) cliOpt {
	return cliOpt{long: long, short: short, arg: cliIntArg, ready: true, num: fn}
}

// optNoop accepts an option that only restores rsync's default for
// something syq never does (e.g. --no-compress), so it changes nothing.
func optNoop(long string) cliOpt {
	return optFlag(long, 0, func(*Invocation) {})
}

// optTodo is an rsync option syq refuses for now.
func optTodo(long string, short byte, arg cliArg) cliOpt {
	return cliOpt{long: long, short: short, arg: arg}
}

// optBool builds a boolean option, its short form, and the negations rsync
// accepts for it (given without the leading "--").
func optBool(field func(*wire.Options) *bool, long string, short byte, negations ...string) []cliOpt {
	out := []cliOpt{optFlag(long, short, func(c *Invocation) { *field(&c.Opts) = true })}
	for _, n := range negations {
		out = append(out, optFlag(n, 0, func(c *Invocation) { *field(&c.Opts) = false }))
	}
	return out
}

// optTodos refuses a list of switch-type long options.
func optTodos(names ...string) []cliOpt {
	out := make([]cliOpt, 0, len(names))
	for _, n := range names {
		out = append(out, optTodo(n, 0, cliNoArg))
	}
	return out
}

// cliOptions is every option rsync 3.5.0 accepts on a client command line
// (the ones in `rsync --help`, their aliases and negations, the hidden and
// daemon-mode ones), plus syq's own --syq-* options. Names and argument
// kinds were checked against /usr/bin/rsync 3.5.0 by feeding it each one.
var cliOptions = buildCLIOptions()

func buildCLIOptions() []cliOpt {
	var t []cliOpt
	add := func(o ...cliOpt) { t = append(t, o...) }

	// Help, version, verbosity and output.
	add(cliOpt{long: "help", arg: cliNoArg, ready: true, helpOnly: true, on: func(c *Invocation) { c.ShowHelp = true }})
	add(optFlag("version", 'V', func(c *Invocation) { c.ShowVersion = true; c.VersionLevel++ }))
	add(optFlag("verbose", 'v', func(c *Invocation) { c.Opts.Verbose++ }))
	add(optFlag("no-verbose", 0, func(c *Invocation) { c.Opts.Verbose = 0 }))
	add(optFlag("no-v", 0, func(c *Invocation) { c.Opts.Verbose = 0 }))
	add(cliOpt{long: "info", arg: cliStrArg, ready: true, str: applyInfo})
	add(optText("debug", 0, func(c *Invocation, s string) {
		c.debugFlags = append(c.debugFlags, s)
		for _, w := range strings.Split(s, ",") {
			c.DebugHelp = c.DebugHelp || strings.EqualFold(w, "help")
		}
	}))
	add(optText("stderr", 0, applyStderr))
	add(optFlag("msgs2stderr", 0, func(c *Invocation) { c.StderrAll = true }))
	add(optFlag("no-msgs2stderr", 0, func(c *Invocation) { c.StderrAll = false }))
	add(optFlag("quiet", 'q', func(c *Invocation) { c.Opts.Quiet = true }))
	add(optFlag("motd", 0, func(c *Invocation) { c.NoMotd = false }), optFlag("no-motd", 0, func(c *Invocation) { c.NoMotd = true }))
	add(optFlag("stats", 0, func(c *Invocation) { c.Opts.Stats = true }))
	add(optFlag("human-readable", 'h', func(c *Invocation) { c.Opts.HumanReadable++ }))
	add(optFlag("no-human-readable", 0, func(c *Invocation) { c.Opts.HumanReadable = -1 }))
	add(optFlag("no-h", 0, func(c *Invocation) { c.Opts.HumanReadable = -1 }))
	add(optFlag("itemize-changes", 'i', func(c *Invocation) {
		c.Opts.ItemizeUnchanged = c.Opts.Itemize // -ii
		c.Opts.Itemize = true
	}))
	noItemize := func(c *Invocation) { c.Opts.Itemize, c.Opts.ItemizeUnchanged = false, false }
	add(optFlag("no-itemize-changes", 0, noItemize), optFlag("no-i", 0, noItemize))
	add(optFlag("progress", 0, func(c *Invocation) { c.Opts.Progress, c.NoProgress = true, false }))
	add(optFlag("no-progress", 0, func(c *Invocation) { c.Opts.Progress, c.NoProgress = false, true }))
	add(optFlag("", 'P', func(c *Invocation) {
		c.Opts.Partial = true
		c.Opts.Progress, c.NoProgress = true, false
	}))
	add(optFlag("list-only", 0, func(c *Invocation) { c.Opts.ListOnly = true }))
	add(optBool(func(o *wire.Options) *bool { return &o.EightBitOutput }, "8-bit-output", '8', "no-8-bit-output", "no-8")...)
	outFormat := func(c *Invocation, s string) { c.Opts.OutFormat, c.Opts.OutFormatGiven = s, true }
	add(optText("out-format", 0, outFormat), optText("log-format", 0, outFormat))
	add(optText("log-file", 0, func(c *Invocation, s string) { c.LogFile = s }))
	add(optText("log-file-format", 0, func(c *Invocation, s string) { c.logFileFormat = &s }))
	// syq writes each output line whole, so the buffering of stdout
	// changes when lines appear, never what they say.
	add(optText("outbuf", 0, func(c *Invocation, s string) { c.outbuf = s }))

	// What gets walked.
	add(optFlag("archive", 'a', func(c *Invocation) {
		o := &c.Opts
		o.Recursive, o.Links, o.Perms, o.Times = true, true, true, true
		o.Group, o.Owner, o.Devices, o.Specials = true, true, true, true
	}))
	// -r, -d and -R remember being given, for --files-from's defaults.
	recursive := func(on bool) func(*Invocation) {
		return func(c *Invocation) { c.Opts.Recursive, c.given.recursive = on, given(on) }
	}
	add(optFlag("recursive", 'r', recursive(true)), optFlag("no-recursive", 0, recursive(false)), optFlag("no-r", 0, recursive(false)))
	// Incremental recursion is how rsync orders its work; syq always
	// streams. The choice shows only in -v's file-list line.
	incRecursive := func(on bool) func(*Invocation) { return func(c *Invocation) { c.noIncRecurse = !on } }
	add(optFlag("inc-recursive", 0, incRecursive(true)), optFlag("i-r", 0, incRecursive(true)),
		optFlag("no-inc-recursive", 0, incRecursive(false)), optFlag("no-i-r", 0, incRecursive(false)))
	dirs := func(on bool) func(*Invocation) {
		return func(c *Invocation) { c.Opts.Dirs, c.given.dirs, c.oldDirs = on, given(on), false }
	}
	add(optFlag("dirs", 'd', dirs(true)), optFlag("no-dirs", 0, dirs(false)), optFlag("no-d", 0, dirs(false)))
	// --old-dirs is rsync's old way to copy one level: -r with a rule
	// that excludes everything two levels down (-d cancels it).
	oldDirs := func(c *Invocation) { c.oldDirs = true }
	add(optFlag("old-dirs", 0, oldDirs), optFlag("old-d", 0, oldDirs))
	relative := func(on bool) func(*Invocation) {
		return func(c *Invocation) { c.Opts.Relative, c.given.relative = on, given(on) }
	}
	add(optFlag("relative", 'R', relative(true)), optFlag("no-relative", 0, relative(false)), optFlag("no-R", 0, relative(false)))
	add(optBool(func(o *wire.Options) *bool { return &o.ImpliedDirs }, "implied-dirs", 0, "no-implied-dirs", "no-i-d")...)
	add(optFlag("i-d", 0, func(c *Invocation) { c.Opts.ImpliedDirs = true }))
	add(optBool(func(o *wire.Options) *bool { return &o.Links }, "links", 'l', "no-links", "no-l")...)
	add(optBool(func(o *wire.Options) *bool { return &o.CopyLinks }, "copy-links", 'L')...)
	add(optBool(func(o *wire.Options) *bool { return &o.CopyUnsafeLinks }, "copy-unsafe-links", 0)...)
	add(optBool(func(o *wire.Options) *bool { return &o.SafeLinks }, "safe-links", 0)...)
	add(optBool(func(o *wire.Options) *bool { return &o.MungeLinks }, "munge-links", 0, "no-munge-links")...)
	add(optBool(func(o *wire.Options) *bool { return &o.InsecureLinks }, "insecure-links", 0, "no-insecure-links")...)
	add(optText("confine-root", 0, func(c *Invocation, s string) { c.confineRoot = s }))
	add(optBool(func(o *wire.Options) *bool { return &o.CopyDirLinks }, "copy-dirlinks", 'k')...)
	add(optBool(func(o *wire.Options) *bool { return &o.KeepDirLinks }, "keep-dirlinks", 'K')...)
	add(optBool(func(o *wire.Options) *bool { return &o.HardLinks }, "hard-links", 'H', "no-hard-links", "no-H")...)
	add(optFlag("one-file-system", 'x', func(c *Invocation) {
		c.Opts.SkipMountDirs = c.Opts.OneFileSys // -xx
		c.Opts.OneFileSys = true
	}))
	noX := func(c *Invocation) { c.Opts.OneFileSys, c.Opts.SkipMountDirs = false, false }
	add(optFlag("no-one-file-system", 0, noX), optFlag("no-x", 0, noX))

	// What gets preserved.
	add(optBool(func(o *wire.Options) *bool { return &o.Perms }, "perms", 'p', "no-perms", "no-p")...)
	add(optBool(func(o *wire.Options) *bool { return &o.Executability }, "executability", 'E')...)
	add(optText("chmod", 0, func(c *Invocation, s string) { c.Opts.Chmod = append(c.Opts.Chmod, s) }))
	// -A implies -p, as in rsync (a later --no-perms still turns it off).
	add(optFlag("acls", 'A', func(c *Invocation) { c.Opts.ACLs, c.Opts.Perms = true, true }))
	noACLs := func(c *Invocation) { c.Opts.ACLs = false }
	add(optFlag("no-acls", 0, noACLs), optFlag("no-A", 0, noACLs))
	add(optFlag("xattrs", 'X', func(c *Invocation) { c.Opts.Xattrs++ }))
	noXattrs := func(c *Invocation) { c.Opts.Xattrs = 0 }
	add(optFlag("no-xattrs", 0, noXattrs), optFlag("no-X", 0, noXattrs))
	add(optBool(func(o *wire.Options) *bool { return &o.Owner }, "owner", 'o', "no-owner", "no-o")...)
	add(optBool(func(o *wire.Options) *bool { return &o.Group }, "group", 'g', "no-group", "no-g")...)
	add(optBool(func(o *wire.Options) *bool { return &o.Devices }, "devices", 0, "no-devices")...)
	add(optBool(func(o *wire.Options) *bool { return &o.Specials }, "specials", 0, "no-specials")...)
	add(optFlag("", 'D', func(c *Invocation) { c.Opts.Devices, c.Opts.Specials = true, true }))
	add(optFlag("no-D", 0, func(c *Invocation) { c.Opts.Devices, c.Opts.Specials = false, false }))
	add(optFlag("copy-devices", 0, func(c *Invocation) { c.Opts.CopyDevices = true }))
	add(optBool(func(o *wire.Options) *bool { return &o.WriteDevices }, "write-devices", 0, "no-write-devices")...)
	add(optFlag("drop-D", 0, func(c *Invocation) { c.dropD = true }))
	add(optNoop("no-drop-D"))
	add(optBool(func(o *wire.Options) *bool { return &o.Times }, "times", 't', "no-times", "no-t")...)
	add(optBool(func(o *wire.Options) *bool { return &o.Atimes }, "atimes", 'U', "no-atimes", "no-U")...)
	add(optBool(func(o *wire.Options) *bool { return &o.OpenNoatime }, "open-noatime", 0, "no-open-noatime")...)
	add(optTodo("crtimes", 'N', cliNoArg), optNoop("no-crtimes"), optNoop("no-N"))
	add(optBool(func(o *wire.Options) *bool { return &o.OmitDirTimes }, "omit-dir-times", 'O', "no-omit-dir-times", "no-O")...)
	add(optBool(func(o *wire.Options) *bool { return &o.OmitLinkTimes }, "omit-link-times", 'J', "no-omit-link-times", "no-J")...)
	// --no-super is not a no-op: run as root it stops -o/-g/-D taking effect.
	// The three are one setting in rsync: the last one given wins.
	add(optFlag("super", 0, func(c *Invocation) { c.Opts.Super, c.Opts.FakeSuper = 1, false }))
	add(optFlag("no-super", 0, func(c *Invocation) { c.Opts.Super, c.Opts.FakeSuper = -1, false }))
	add(optFlag("fake-super", 0, func(c *Invocation) { c.Opts.Super, c.Opts.FakeSuper = 0, true }))
	add(optFlag("numeric-ids", 0, func(c *Invocation) { c.Opts.NumericIDs = true }))
	add(optFlag("no-numeric-ids", 0, func(c *Invocation) { c.Opts.NumericIDs = false }))
	add(optText("usermap", 0, func(c *Invocation, s string) { c.setIDMap(0, "usermap", s) }))
	add(optText("groupmap", 0, func(c *Invocation, s string) { c.setIDMap(1, "groupmap", s) }))
	add(optText("chown", 0, applyChown))
	add(optTodo("copy-as", 0, cliStrArg))

	// Deciding what to transfer.
	add(optBool(func(o *wire.Options) *bool { return &o.Checksum }, "checksum", 'c', "no-checksum", "no-c")...)
	add(optFlag("size-only", 0, func(c *Invocation) { c.Opts.SizeOnly = true }))
	add(optFlag("ignore-times", 'I', func(c *Invocation) { c.Opts.IgnoreTimes = true }))
	add(optFlag("update", 'u', func(c *Invocation) { c.Opts.Update = true }))
	add(optFlag("existing", 0, func(c *Invocation) { c.Opts.Existing = true }))
	add(optFlag("ignore-non-existing", 0, func(c *Invocation) { c.Opts.Existing = true }))
	add(optFlag("ignore-existing", 0, func(c *Invocation) { c.Opts.IgnoreExisting = true }))
	add(optNum("modify-window", '@', func(c *Invocation, n int) { c.Opts.ModifyWindowSec = int64(n) }))
	add(optText("max-size", 0, func(c *Invocation, s string) { c.maxSize = &s }), optText("min-size", 0, func(c *Invocation, s string) { c.minSize = &s }))
	// syq's allocations are bounded by design (no buffer grows with a
	// peer's claims), so --max-alloc is checked and needs no more.
	add(optText("max-alloc", 0, func(c *Invocation, s string) { c.maxAlloc = s }))
	// --checksum-choice names the hash behind -c and the transfer checks.
	// syq checks with its own strong hash whatever is named: a choice
	// changes no outcome, only rsync's wire format.
	checksumChoice := func(c *Invocation, s string) { c.checksumChoice, c.checksumChoiceGiven = s, true }
	add(optText("checksum-choice", 0, checksumChoice), optText("cc", 0, checksumChoice))
	add(optNum("checksum-seed", 0, func(*Invocation, int) {})) // seeds rsync's MD4 only
	add(optFlag("fuzzy", 'y', func(c *Invocation) { c.Opts.Fuzzy++ }))
	add(optFlag("no-fuzzy", 0, func(c *Invocation) { c.Opts.Fuzzy = 0 }), optFlag("no-y", 0, func(c *Invocation) { c.Opts.Fuzzy = 0 }))
	altDest := func(kind string) func(*Invocation, string) {
		return func(c *Invocation, s string) {
			if c.Opts.AltDestKind != "" && c.Opts.AltDestKind != kind && c.altDestConflict == "" {
				// rsync stops at the first option of another kind.
				c.altDestConflict = fmt.Sprintf("ERROR: the --%s-dest option conflicts with the --%s-dest option", kind, c.Opts.AltDestKind)
			}
			c.Opts.AltDestKind = kind
			c.Opts.AltDests = append(c.Opts.AltDests, s)
		}
	}
	add(optText("compare-dest", 0, altDest(wire.AltCompare)), optText("copy-dest", 0, altDest(wire.AltCopy)), optText("link-dest", 0, altDest(wire.AltLink)))

	// How files are written.
	// -W/--no-whole-file also remember being given: without either, a
	// local copy is whole-file and a remote one uses deltas (rsync's
	// defaults).
	for _, w := range []struct {
		long  string
		short byte
		on    bool
	}{{"whole-file", 'W', true}, {"no-whole-file", 0, false}, {"no-W", 0, false}} {
		add(optFlag(w.long, w.short, func(c *Invocation) { c.Opts.WholeFile, c.wholeFileGiven = w.on, true }))
	}
	add(optText("block-size", 'B', func(c *Invocation, s string) { c.blockSize = s }))
	add(optBool(func(o *wire.Options) *bool { return &o.Inplace }, "inplace", 0, "no-inplace")...)
	// An rsync server counts its --append: two are --append-verify.
	add(optFlag("append", 0, func(c *Invocation) {
		c.Opts.Append = 1
		if c.server && c.appended {
			c.Opts.Append = 2
		}
		c.appended = true
	}), optFlag("append-verify", 0, func(c *Invocation) { c.Opts.Append = 2 }))
	add(optFlag("no-append", 0, func(c *Invocation) { c.Opts.Append = 0 }))
	add(optBool(func(o *wire.Options) *bool { return &o.Partial }, "partial", 0, "no-partial")...)
	add(optText("partial-dir", 0, func(c *Invocation, s string) { c.Opts.PartialDir = s }))
	add(optBool(func(o *wire.Options) *bool { return &o.DelayUpdates }, "delay-updates", 0, "no-delay-updates")...)
	add(optBool(func(o *wire.Options) *bool { return &o.Sparse }, "sparse", 'S', "no-sparse", "no-S")...)
	add(optFlag("preallocate", 0, func(c *Invocation) { c.Opts.Preallocate = true }))
	add(optFlag("fsync", 0, func(c *Invocation) { c.Opts.Fsync = true }))
	add(optBool(func(o *wire.Options) *bool { return &o.MkPath }, "mkpath", 0, "no-mkpath")...)
	add(optFlag("dry-run", 'n', func(c *Invocation) { c.Opts.DryRun = true }))
	add(optText("temp-dir", 'T', func(c *Invocation, s string) { c.Opts.TempDir = s }))
	add(optFlag("backup", 'b', func(c *Invocation) { c.Opts.Backup = true }), optFlag("no-backup", 0, func(c *Invocation) { c.Opts.Backup = false }))
	add(optText("backup-dir", 0, func(c *Invocation, s string) { c.Opts.BackupDir = s; c.Opts.Backup = true }))
	add(optText("suffix", 0, func(c *Invocation, s string) { c.suffix, c.suffixSet = s, true }))
	removeSrc := func(c *Invocation) { c.Opts.RemoveSourceFiles = true }
	add(optFlag("remove-source-files", 0, removeSrc), optFlag("remove-sent-files", 0, removeSrc))
	add(optBool(func(o *wire.Options) *bool { return &o.PruneEmptyDirs }, "prune-empty-dirs", 'm', "no-prune-empty-dirs", "no-m")...)

	// Deletion.
	deleteOn := func(c *Invocation) { c.Opts.Delete = true }
	// rsync refuses two different times (a repeated one is fine).
	const whenBefore, whenDuring, whenAfter = 1, 2, 4
	deleteDuring := func(c *Invocation) { deleteOn(c); c.deleteWhens |= whenDuring }
	add(optFlag("delete", 0, deleteOn), optFlag("del", 0, deleteDuring), optFlag("delete-during", 0, deleteDuring))
	// syq deletes per directory as it goes, so every --delete-WHEN ends
	// in the same tree; they differ only in when space is freed.
	// The late ones keep what --fuzzy may use as a basis until the
	// directory's files are written.
	deleteWhen := func(c *Invocation, when uint8) { c.Opts.Delete = true; c.deleteWhens |= when; c.deleteEarlyLate = true }
	deleteLate := func(c *Invocation) { c.Opts.Delete, c.Opts.DeleteLate = true, true }
	add(optFlag("delete-before", 0, func(c *Invocation) { deleteWhen(c, whenBefore); c.Opts.DeleteBefore = true }),
		optFlag("delete-after", 0, func(c *Invocation) { deleteWhen(c, whenAfter); deleteLate(c); c.Opts.DeleteAfter = true }),
		optFlag("delete-delay", 0, func(c *Invocation) { deleteLate(c); c.Opts.DeleteAfter = false; c.deleteWhens |= whenDuring }))
	add(optFlag("delete-excluded", 0, func(c *Invocation) { c.Opts.Delete, c.Opts.DeleteExcluded = true, true }))
	add(optFlag("ignore-missing-args", 0, func(c *Invocation) { c.Opts.IgnoreMissingArgs = true }))
	add(optFlag("delete-missing-args", 0, func(c *Invocation) { c.Opts.DeleteMissingArgs = true }))
	add(optNum("max-delete", 0, func(c *Invocation, n int) {
		// rsync: a negative limit means "delete nothing", like 0.
		c.Opts.MaxDelete = max(n, 0)
	}))
	add(optBool(func(o *wire.Options) *bool { return &o.IgnoreErrors }, "ignore-errors", 0, "no-ignore-errors")...)
	add(optFlag("force", 0, func(c *Invocation) { c.Opts.Force = true }))
	add(optNoop("no-force"))

	// Filters and file lists.
	rule := func(kind filter.Kind, fromFile bool) func(*Invocation, string) {
		return func(c *Invocation, s string) {
			// The trace level of the rule is --debug's as given so far,
			// without -v's, which rsync applies only after its option
			// loop; a -q given so far already silences its traces.
			v := c.Opts.Verbose
			c.Opts.Verbose = 0
			level := debugLevel(c, "filter")
			c.Opts.Verbose = v
			if c.Opts.Quiet {
				level = 0
			}
			c.Filters = append(c.Filters, filterArg{kind: kind, text: s, fromFile: fromFile, debugFilter: level})
		}
	}
	add(optText("filter", 'f', rule(filter.Filter, false)))
	add(optFlag("", 'F', func(c *Invocation) {
		// -F is ": /.rsync-filter"; a second -F also hides those files.
		switch c.filterF++; c.filterF {
		case 1:
			rule(filter.Filter, false)(c, ": /.rsync-filter")
		case 2:
			rule(filter.Filter, false)(c, "- .rsync-filter")
		}
	}))
	add(optText("exclude", 0, rule(filter.Exclude, false)), optText("include", 0, rule(filter.Include, false)))
	add(optText("exclude-from", 0, rule(filter.Exclude, true)), optText("include-from", 0, rule(filter.Include, true)))
	add(optFlag("cvs-exclude", 'C', func(c *Invocation) { c.CVSExclude = true }))
	add(optText("files-from", 0, func(c *Invocation, s string) { c.filesFrom = s }))
	add(optFlag("from0", '0', func(c *Invocation) { c.From0 = true }), optFlag("no-from0", 0, func(c *Invocation) { c.From0 = false }))

	// Compression (settled in settleCompress).
	add(optFlag("compress", 'z', func(c *Invocation) { c.compress++ }))
	choice := func(name string) func(*Invocation) {
		return func(c *Invocation) { c.compressChoice = &name }
	}
	add(optFlag("old-compress", 0, choice("zlib")), optFlag("new-compress", 0, choice("zlibx")))
	noCompress := func(c *Invocation) { c.compress, c.compressChoice = 0, nil }
	add(optFlag("no-compress", 0, noCompress), optFlag("no-z", 0, noCompress))
	setChoice := func(c *Invocation, s string) { c.compressChoice = &s }
	add(optText("compress-choice", 0, setChoice), optText("zc", 0, setChoice))
	setLevel := func(c *Invocation, n int) { c.compressLevel = &n }
	add(optNum("compress-level", 0, setLevel), optNum("zl", 0, setLevel))
	// syq's compressors are already a pool sized to the CPUs (and rsync
	// ignores the count without zstd or -z): the value is checked, as
	// popt checks an integer, and changes nothing.
	add(optNum("compress-threads", 0, func(*Invocation, int) {}), optNum("zt", 0, func(*Invocation, int) {}))
	add(optText("skip-compress", 0, func(c *Invocation, s string) { c.skipCompress = &s }))

	// Remote shell, daemon and connection settings.
	add(optText("rsh", 'e', func(c *Invocation, s string) { c.Rsh = s }))
	add(optText("rsync-path", 0, func(c *Invocation, s string) { c.RsyncPath = s }))
	// --old-args: remote names are split into words by the remote shell,
	// as before rsync 3.2.4 (RSYNC_OLD_ARGS=1 does the same).
	add(optFlag("old-args", 0, func(c *Invocation) { c.oldArgs = 1 }), optFlag("no-old-args", 0, func(c *Invocation) { c.oldArgs = -1 }))
	// syq never passes file names or options through the remote shell
	// (they travel in the handshake), which is what -s asks for; what it
	// changes is that no remote shell expands a leading "~" (remoteTilde).
	secluded := func(on int) func(*Invocation) { return func(c *Invocation) { c.secludedArgs = on } }
	add(optFlag("secluded-args", 's', secluded(1)), optFlag("protect-args", 0, secluded(1)))
	add(optFlag("no-secluded-args", 0, secluded(-1)), optFlag("no-protect-args", 0, secluded(-1)), optFlag("no-s", 0, secluded(-1)))
	// --trust-sender lets rsync skip its checks of what a sender lists;
	// syq's receiver keeps its own (they cost nothing), so the option
	// changes nothing that a sender rsync would accept shows, but that
	// rsync leaves a pulled name's "~" to the remote shell (remoteTilde).
	add(optFlag("trust-sender", 0, func(c *Invocation) { c.trustSender = true }))
	add(optText("address", 0, func(c *Invocation, s string) { c.Address = s }), optNum("port", 0, func(c *Invocation, n int) { c.Port = n }), optText("sockopts", 0, func(c *Invocation, s string) { c.SockOpts = s }))
	// syq never talks to the remote shell in non-blocking mode, so
	// --blocking-io changes nothing.
	add(optNoop("blocking-io"), optNoop("no-blocking-io"))
	add(optText("remote-option", 'M', func(c *Invocation, s string) { c.RemoteOptions = append(c.RemoteOptions, s) }))
	add(optText("password-file", 0, func(c *Invocation, s string) { c.PasswordFile = s }), optText("early-input", 0, func(c *Invocation, s string) { c.EarlyInput = s }))
	add(optText("bwlimit", 0, func(c *Invocation, s string) { c.bwlimit = s }))
	add(optFlag("no-bwlimit", 0, func(c *Invocation) { c.bwlimit = "" }))
	add(optNum("timeout", 0, func(c *Invocation, n int) { c.Opts.TimeoutSec = max(n, 0) }))
	add(optFlag("no-timeout", 0, func(c *Invocation) { c.Opts.TimeoutSec = 0 }))
	// --contimeout bounds the wait for an rsync daemon's socket
	// (daemonclient.go); over ssh it changes nothing, as in rsync.
	add(optNum("contimeout", 0, func(c *Invocation, n int) { c.ConTimeout = n }), optFlag("no-contimeout", 0, func(c *Invocation) { c.ConTimeout = 0 }))
	stopAfter := func(c *Invocation, s string) { c.stopAfter, c.stopAt = s, "" }
	add(optText("stop-after", 0, stopAfter), optText("time-limit", 0, stopAfter))
	add(optText("stop-at", 0, func(c *Invocation, s string) { c.stopAt, c.stopAfter = s, "" }))
	add(optTodo("iconv", 0, cliStrArg), optNoop("no-iconv"))
	add(optFlag("ipv4", '4', func(c *Invocation) { c.IPFamily = "4" }), optFlag("ipv6", '6', func(c *Invocation) { c.IPFamily = "6" }))
	// --protocol picks an older rsync protocol to talk to an older rsync.
	// syq talks to syq; what an old protocol changes that a user sees
	// (mtimes in whole seconds before 31) it does the same.
	add(optNum("protocol", 0, func(c *Invocation, n int) { c.protocol = n }))
	// rsync's choice of sort routine; syq's order is the same. It turns
	// off rsync's incremental recursion, which shows in -v's output.
	add(optFlag("qsort", 0, func(c *Invocation) { c.qsort = true }))

	// Batch mode (batch.go): the last of the three given wins the
	// name, as with rsync's one batch_name.
	add(optText("write-batch", 0, func(inv *Invocation, v string) { inv.batchName, inv.writeBatch = v, 1 }),
		optText("only-write-batch", 0, func(inv *Invocation, v string) { inv.batchName, inv.writeBatch = v, -1 }),
		optText("read-batch", 0, func(inv *Invocation, v string) { inv.batchName, inv.readBatch = v, true }))
	// Internal and daemon-mode switches.
	add(optFlag("server", 0, func(c *Invocation) { c.server = true }), optFlag("sender", 0, func(c *Invocation) { c.sender = true }))
	add(optTodos("daemon", "detach", "no-detach")...)
	add(optTodo("config", 0, cliStrArg), optTodo("dparam", 0, cliStrArg))

	// syq's own options.
	add(cliOpt{long: "syq-workers", arg: cliIntArg, ready: true, nonNeg: true, most: maxWorkers,
		num: func(c *Invocation, n int) { c.Opts.Workers = n }})
	add(optFlag("syq-no-tuner-cache", 0, func(c *Invocation) { c.NoTunerCache = true }))
	add(cliOpt{long: "syq-rails", arg: cliIntArg, ready: true, nonNeg: true, most: wire.MaxRails,
		num: func(c *Invocation, n int) { c.Rails = n }})
	add(optFlag("syq-no-rails", 0, func(c *Invocation) { c.NoRails = true }))
	add(cliOpt{long: "syq-rail-addrs", arg: cliStrArg, ready: true,
		str: func(c *Invocation, v string) { c.RailAddrs = append(c.RailAddrs, strings.Split(v, ",")...) }})
	add(optFlag("syq-no-bootstrap", 0, func(c *Invocation) { c.NoBootstrap = true }))
	add(optFlag("syq-rsync-form", 0, func(c *Invocation) { c.RsyncForm = true }))
	return t
}

// Lookup tables over cliOptions.
var cliLong, cliShort = indexCLIOptions(cliOptions)

func indexCLIOptions(opts []cliOpt) (map[string]*cliOpt, map[byte]*cliOpt) {
	long := make(map[string]*cliOpt, len(opts))
	short := make(map[byte]*cliOpt)
	for i := range opts {
		o := &opts[i]
		if o.long != "" {
			long[o.long] = o
		}
		if o.short != 0 {
			short[o.short] = o
		}
	}
	return long, short
}

// cliHit is one option occurrence found by cliScan.
type cliHit struct {
	opt   *cliOpt
	value string
}

// cliScan walks args the way popt walks rsync's argv and returns the option
// occurrences in order and the operands. help is true when --help was met;
// scanning stops there, as rsync prints its help at that point. posixly
// (POSIXLY_CORRECT in the environment) makes the first operand end the
// options, as popt does.
func cliScan(args []string, posixly bool) (hits []cliHit, operands []string, help bool, err error) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if len(w) < 2 || w[0] != '-' {
			if posixly {
				operands = append(operands, args[i:]...)
				break
			}
			operands = append(operands, w)
			continue
		}

		// next returns the following word as an option's value.
		next := func() (string, bool) {
			if i+1 >= len(args) {
				return "", false
			}
			i++
			return args[i], true
		}

		if strings.HasPrefix(w, "--") {
			name, inline, hasInline := strings.Cut(w[2:], "=")
			o := cliLong[name]
			if o == nil {
				return nil, nil, false, &UsageError{Msg: w + ": unknown option"}
			}
			if !o.ready {
				return nil, nil, false, cliRefuse("--" + name)
			}
			h := cliHit{opt: o}
			if o.arg == cliNoArg {
				if hasInline {
					return nil, nil, false, &UsageError{Msg: w + ": option does not take an argument"}
				}
			} else {
				valueWord := w
				if hasInline {
					h.value = inline
				} else if v, ok := next(); ok {
					h.value, valueWord = v, v
				} else {
					return nil, nil, false, &UsageError{Msg: w + ": missing argument"}
				}
				if err := cliCheckValue(o, h.value, valueWord); err != nil {
					return nil, nil, false, err
				}
			}
			if o.helpOnly {
				return hits, operands, true, nil
			}
			hits = append(hits, h)
			continue
		}

		// A bundle of short options: -avz, -aessh, -e=CMD, -@5.
		for j := 1; j < len(w); j++ {
			o := cliShort[w[j]]
			if o == nil {
				return nil, nil, false, &UsageError{Msg: w + ": unknown option"}
			}
			if !o.ready {
				return nil, nil, false, cliRefuse(o.label())
			}
			h := cliHit{opt: o}
			if o.arg == cliNoArg {
				if j+1 < len(w) && w[j+1] == '=' {
					return nil, nil, false, &UsageError{Msg: w + ": option does not take an argument"}
				}
				hits = append(hits, h)
				continue
			}
			// The rest of the word is the value (one leading '=' is
			// dropped); otherwise the next word is.
			valueWord := w
			if rest := w[j+1:]; rest != "" {
				h.value = strings.TrimPrefix(rest, "=")
			} else if v, ok := next(); ok {
				h.value, valueWord = v, v
			} else {
				return nil, nil, false, &UsageError{Msg: w + ": missing argument"}
			}
			if err := cliCheckValue(o, h.value, valueWord); err != nil {
				return nil, nil, false, err
			}
			hits = append(hits, h)
			break
		}
	}
	return hits, operands, false, nil
}

// cliRefuse is the error for an rsync option syq does not implement yet.
// It says "unknown option" as well, the words scripts (rsync's own test
// helpers among them) look for when they probe whether rsync has one.
func cliRefuse(name string) error {
	return &UsageError{Msg: "option " + name + " is not supported yet (unknown option to syq)"}
}

// cliCheckValue validates an integer option's value; word is the command
// line word that held it, which is what rsync names in the message.
func cliCheckValue(o *cliOpt, value, word string) error {
	if o.long == "info" {
		return checkInfo(value)
	}
	if o.arg != cliIntArg {
		return nil
	}
	n, err := cliParseCInt(value)
	if err != nil {
		return &UsageError{Msg: word + ": " + err.Error()}
	}
	if o.nonNeg && n < 0 {
		return &UsageError{Msg: o.label() + " needs a number of 0 or more"}
	}
	if o.most > 0 && n > o.most {
		return &UsageError{Msg: fmt.Sprintf("%s needs a number from 0 to %d", o.label(), o.most)}
	}
	return nil
}

var (
	errCNumInvalid = errors.New("invalid numeric value")
	errCNumRange   = errors.New("number too large or too small")
)

// cliParseCInt reads an integer the way popt does (strtol with base 0,
// then a range check against C's int): leading blanks, an optional sign,
// 0x for hex, a leading 0 for octal, nothing after the digits. An empty
// string is 0, as in rsync.
func cliParseCInt(s string) (int, error) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	if i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && cliDigit(s[i+2]) < 16 {
		base, i = 16, i+2
	} else if i < len(s) && s[i] == '0' {
		base = 8
	}
	start := i
	var v uint64
	big := false
	for ; i < len(s); i++ {
		d := cliDigit(s[i])
		if d >= base {
			break
		}
		if v > 1<<40 {
			big = true
		} else {
			v = v*base + d
		}
	}
	if i == start {
		// No digits: strtol reports the whole string as unparsed.
		if s == "" {
			return 0, nil
		}
		return 0, errCNumInvalid
	}
	if i != len(s) {
		return 0, errCNumInvalid
	}
	n := int64(v)
	if neg {
		n = -n
	}
	if big || n > 1<<31-1 || n < -1<<31 {
		return 0, errCNumRange
	}
	return int(n), nil
}

func cliDigit(c byte) uint64 {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0')
	case c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return uint64(c-'A') + 10
	}
	return 99
}

// cliValue is the pflag.Value behind every implemented option: Set applies
// the option to the Invocation at once, which keeps command-line order.
type cliValue struct {
	opt *cliOpt
	inv *Invocation
}

func (v *cliValue) String() string { return "" }

func (v *cliValue) Type() string {
	switch v.opt.arg {
	case cliIntArg:
		return "int"
	case cliStrArg:
		return "string"
	}
	return "switch"
}

func (v *cliValue) Set(s string) error {
	switch {
	case v.opt.on != nil:
		v.opt.on(v.inv)
	case v.opt.str != nil:
		v.opt.str(v.inv, s)
	case v.opt.num != nil:
		n, err := cliParseCInt(s)
		if err != nil {
			return err
		}
		v.opt.num(v.inv, n)
	}
	return nil
}

// cliApply runs the occurrences through a pflag.FlagSet, rewritten as
// "--name" or "--name=value" so that pflag cannot read them differently
// from popt.
func cliApply(inv *Invocation, hits []cliHit) error {
	fs := pflag.NewFlagSet("syq rsync", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	words := make([]string, 0, len(hits))
	for _, h := range hits {
		name := h.opt.flagName()
		if fs.Lookup(name) == nil {
			f := fs.VarPF(&cliValue{opt: h.opt, inv: inv}, name, "", "")
			if h.opt.arg == cliNoArg {
				f.NoOptDefVal = "on"
			}
		}
		if h.opt.arg == cliNoArg {
			words = append(words, "--"+name)
		} else {
			words = append(words, "--"+name+"="+h.value)
		}
	}
	if err := fs.Parse(words); err != nil {
		return &UsageError{Msg: err.Error()} // not reached: cliScan vetted every word
	}
	return nil
}

// newInvocation holds the settings before any option is applied.
func newInvocation() *Invocation {
	inv := &Invocation{}
	inv.Opts.MaxDelete = -1     // unlimited
	inv.Opts.WholeFile = true   // rsync's default for a local copy
	inv.Opts.ImpliedDirs = true // rsync's default
	return inv
}

// settleArgProtection decides --old-args and -s as rsync does: either
// given on the line wins over RSYNC_OLD_ARGS (a non-empty value also
// turns -s off) and RSYNC_PROTECT_ARGS, and the two together are an
// error.
func settleArgProtection(inv *Invocation) error {
	switch {
	case inv.oldArgs > 0 && inv.secludedArgs > 0:
		return &UsageError{Msg: "--secluded-args conflicts with --old-args."}
	case inv.oldArgs > 0:
		inv.Opts.OldArgs, inv.secluded = true, false
		return nil
	case inv.oldArgs == 0 && inv.secludedArgs <= 0:
		if env := os.Getenv("RSYNC_OLD_ARGS"); env != "" {
			n, _ := strconv.Atoi(env)
			inv.Opts.OldArgs, inv.secluded = n > 0, false
			return nil
		}
	}
	switch {
	case inv.secludedArgs != 0:
		inv.secluded = inv.secludedArgs > 0
	default:
		n, err := strconv.Atoi(os.Getenv("RSYNC_PROTECT_ARGS"))
		inv.secluded = err == nil && n != 0
	}
	return nil
}

// parseRsyncArgs parses a `syq rsync` command line; args exclude the
// program name and the "rsync" subcommand word.
//
// Errors are *UsageError (exit 1), or a *wire.FatalError for a rule
// file that cannot be read (exit 11).
func parseRsyncArgs(args []string) (*Invocation, error) {
	hits, operands, help, err := cliScan(args, os.Getenv("POSIXLY_CORRECT") != "")
	if err != nil {
		return nil, err
	}
	inv := newInvocation()
	if err := cliApply(inv, hits); err != nil {
		return nil, err
	}
	inv.hits = hits
	if inv.stderrErr != "" {
		return nil, &UsageError{Msg: inv.stderrErr}
	}
	if help {
		inv.ShowHelp = true
		return inv, nil
	}
	// rsync keeps -h's old meaning of --help when it is the only argument.
	if len(args) == 1 && inv.Opts.HumanReadable > 0 {
		inv.ShowHelp = true
		return inv, nil
	}
	if inv.ShowVersion {
		return inv, nil
	}
	if err := settleArgProtection(inv); err != nil {
		return nil, err
	}
	if err := settleSizes(inv); err != nil {
		return nil, err
	}
	if err := settleStopTime(inv, time.Now()); err != nil {
		return nil, err
	}
	if err := checkAcceptedValues(inv); err != nil {
		return nil, err
	}
	if err := checkDebug(inv); err != nil {
		return nil, err
	}
	if inv.bwlimit != "" {
		n, err := parseSizeArg(inv.bwlimit, 'K', "bwlimit", 512, -1, true)
		if err != nil {
			return nil, err
		}
		// rsync keeps the limit in whole KiB/s, rounded.
		inv.Opts.BwLimit = (n + 512) / 1024 * 1024
	}
	if inv.LogFile != "" {
		inv.Opts.LogFile = true
		inv.Opts.LogFileFormat = defaultLogFileFormat
		if inv.logFileFormat != nil {
			inv.Opts.LogFileFormat = *inv.logFileFormat
		}
		if err := receiver.CheckFormat(inv.Opts.LogFileFormat, inv.checksumChoice); err != nil {
			return nil, &UsageError{Msg: err.Error()}
		}
	}
	if err := settleCompress(inv); err != nil {
		return nil, err
	}
	settleInfo(inv)
	if inv.blockSize != "" {
		n, err := parseSizeArg(inv.blockSize, 'b', "block-size", 0, delta.MaxUserBlock, false)
		if err != nil {
			return nil, err
		}
		inv.Opts.BlockSize = int(n)
	}
	if f := inv.Opts.OutFormat; inv.Opts.OutFormatGiven {
		if err := receiver.CheckFormat(f, inv.checksumChoice); err != nil {
			return nil, &UsageError{Msg: err.Error()}
		}
		// rsync: a format with %i shows what -i shows (-ii: unchanged
		// items too); any format implies --info=name, which syq's
		// receiver reads as "names". The format replaces -i's own
		// line, so without %i, -i changes nothing.
		if receiver.FormatHas(f, 'i') {
			inv.Opts.Itemize = true
		} else {
			inv.Opts.Itemize, inv.Opts.ItemizeUnchanged = false, false
		}
	}
	inv.Opts.ChecksumChoice = inv.checksumChoice
	if _, err := sender.ParseChmods(inv.Opts.Chmod, 0); err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	if inv.Opts.WriteDevices {
		inv.Opts.Inplace = true // as rsync: a device is written where it is
	}
	if inv.Opts.FakeSuper && inv.Opts.Xattrs > 1 {
		return nil, &UsageError{Msg: "--fake-super conflicts with -XX"}
	}
	if inv.idMapErr != "" {
		return nil, &UsageError{Msg: inv.idMapErr}
	}
	if inv.oldDirs {
		inv.Filters = append(inv.Filters, filterArg{kind: filter.Filter, text: "- /*/*"})
		inv.Opts.Recursive, inv.Opts.Dirs = true, true
		inv.given.recursive = 1
	}
	if inv.filesFrom != "" {
		// --files-from's defaults, wherever it stands on the line: -R
		// and -d on, and -a's -r off unless -r itself was given.
		inv.Opts.Recursive = inv.given.recursive > 0
		inv.Opts.Dirs = inv.given.dirs >= 0
		inv.Opts.Relative = inv.given.relative >= 0
	}
	if inv.altDestConflict != "" {
		return nil, &UsageError{Msg: inv.altDestConflict}
	}
	if len(inv.Opts.AltDests) > 20 {
		return nil, &UsageError{Msg: fmt.Sprintf("ERROR: at most 20 --%s-dest args may be specified", inv.Opts.AltDestKind)}
	}
	// rsync reads the filter rules, and the files they name, while it
	// parses the options: a rule it refuses (exit 1) or a file it cannot
	// read (exit 11) comes before the checks below. Standard input ("-")
	// is left for the real reading. --insecure-links already decides
	// how they are opened.
	fsops.SetInsecureLinks(inv.Opts.InsecureLinks)
	if err := settleServerOptions(inv); err != nil {
		return nil, err
	}
	if _, err := buildFilters(inv, strings.NewReader(""), nil); err != nil {
		return nil, err
	}
	// The checks below come in rsync's order (its options.c), so that
	// of two usage errors the same one is reported: the --delete ones
	// before the backup and staging ones, the operands last.
	if bits.OnesCount8(inv.deleteWhens) > 1 {
		return nil, &UsageError{Msg: "You may not combine multiple --delete-WHEN options."}
	}
	if (inv.Opts.ListOnly || len(operands) < 2) && inv.given.dirs == 0 {
		// A listing (one operand is one too) shows a directory's
		// entries unless --no-d said not to, -r or not; so rsync's
		// --delete check below passes too.
		inv.Opts.Dirs = true
	}
	if inv.Opts.Delete && !inv.Opts.Recursive && !inv.Opts.Dirs {
		return nil, &UsageError{Msg: "--delete does not work without --recursive (-r) or --dirs (-d)."}
	}
	if err := settleBackup(inv); err != nil {
		return nil, err
	}
	if err := checkIDMaps(inv); err != nil {
		return nil, err
	}
	if err := settleStaging(inv); err != nil {
		return nil, err
	}
	inv.rawArgs, inv.operands = args, operands
	if err := settleBatch(inv); err != nil {
		return nil, err
	}
	if inv.readBatch {
		if err := assignReadBatch(inv, operands); err != nil {
			return nil, err
		}
		return inv, nil
	}
	if err := assignOperands(inv, operands); err != nil {
		return nil, err
	}
	if err := settleProtocol(inv); err != nil {
		return nil, err
	}
	if inv.Opts.ListOnly && inv.given.dirs == 0 {
		inv.Opts.Dirs = true // as above: "HOST:SRC :SRC2" lists too
	}
	if receiver.FormatHas(inv.Opts.OutFormat, 'f') || receiver.FormatHas(inv.Opts.LogFileFormat, 'f') || inv.Opts.Relative && anyAbsolute(inv.Sources) {
		// %f shows each file's path at the sender, and -R names from
		// an absolute path show its leading slash.
		inv.Opts.FormatSources = inv.Sources
	}
	return inv, nil
}

func anyAbsolute(paths []string) bool {
	for _, p := range paths {
		if strings.HasPrefix(p, "/") {
			return true
		}
	}
	return false
}

func given(on bool) int {
	if on {
		return 1
	}
	return -1
}

// settleBackup applies rsync's backup defaults and checks: the suffix is
// "~" unless --backup-dir is given, a suffix may not contain a slash,
// and without --backup-dir an empty suffix would overwrite the file.
func settleBackup(inv *Invocation) error {
	o := &inv.Opts
	if !o.Backup {
		return nil
	}
	switch {
	case inv.suffixSet:
		o.BackupSuffix = inv.suffix
	case o.BackupDir == "":
		o.BackupSuffix = "~"
	}
	if strings.Contains(o.BackupSuffix, "/") {
		return &UsageError{Msg: "--suffix cannot contain slashes: " + o.BackupSuffix}
	}
	if o.Backup && o.BackupDir == "" && o.BackupSuffix == "" {
		return &UsageError{Msg: "--suffix cannot be empty without a --backup-dir"}
	}
	if o.Backup && o.BackupDir == "" && !o.OmitDirTimes {
		// rsync implies --omit-dir-times here (its options.c: backups
		// beside the files would otherwise change directory times),
		// and does not pass it on: the remote side implies it for
		// itself, unless it was given a backup directory of its own.
		o.OmitDirTimes, inv.omitDirTimesImplied = true, true
	}
	if o.Backup && o.Delete && o.BackupDir == "" && !o.DeleteExcluded {
		// rsync keeps --delete from removing the backups it makes.
		inv.Filters = append(inv.Filters, filterArg{kind: filter.Filter, text: "P *" + o.BackupSuffix})
	}
	return nil
}

// settleCompress decides the compression as rsync does after parsing:
// -zz means zlibx; --compress-choice picks the algorithm ("auto" and
// none given mean zstd between two syq ends) and implies -z unless it
// is "none"; a --compress-level implies -z too, unless it is the
// algorithm's "off" level; levels out of range are clamped silently.
//
// syq builds zstd only. zlib and zlibx (also --old-compress,
// --new-compress, -zz) are sent as zstd, with zlib's level scale (1-9,
// 6 by default, -1 the default, 0 off): both ends are syq, so the bytes
// that arrive are the same and only the wire format differs. lz4 is
// refused.
func settleCompress(inv *Invocation) error {
	inv.Opts.Compress, inv.Opts.SkipCompress = "", nil
	choice := "auto"
	if inv.compressChoice != nil {
		choice = strings.ToLower(*inv.compressChoice)
	} else if inv.compress > 1 {
		choice = "zlibx"
	}
	on := inv.compress > 0
	switch choice {
	case "auto":
	case "zstd", "zlibx", "zlib":
		on = true
	case "none":
		on, choice = false, "auto"
	case "lz4":
		return &UsageError{Msg: "--compress-choice=" + *inv.compressChoice + ": syq does not build lz4 compression (it builds zstd; zlib and zlibx are sent as zstd)"}
	default:
		return &UsageError{Msg: "unknown compress name: " + *inv.compressChoice, NoPrefix: true, Code: wire.ExitUnsupported}
	}
	if inv.compressLevel != nil {
		on = true
	}
	if !on {
		return nil
	}
	var level string
	if choice == "zlib" || choice == "zlibx" {
		n := 6
		if inv.compressLevel != nil && *inv.compressLevel != -1 {
			n = *inv.compressLevel
		}
		if n == 0 {
			return nil // zlib's "off" level
		}
		// zlib's scale onto zstd's: 1-3 the fastest, its default 6
		// and up to 8 the encoder's default (zstd's 3), 9 (and more,
		// clamped) the next.
		z := 3
		switch {
		case n >= 9:
			z = 9
		case n <= 3:
			z = 1
		}
		level = wire.CompressLevel(z)
	} else {
		n := 3
		if inv.compressLevel != nil && *inv.compressLevel != 0 {
			n = *inv.compressLevel
		}
		level = wire.CompressLevel(max(-131072, min(n, 22)))
	}
	inv.Opts.Compress = level
	inv.Opts.SkipCompress = defaultSkipCompress
	if inv.skipCompress != nil {
		inv.Opts.SkipCompress = []string{}
		for _, suf := range strings.Split(*inv.skipCompress, "/") {
			if suf != "" {
				inv.Opts.SkipCompress = append(inv.Opts.SkipCompress, strings.ToLower(suf))
			}
		}
	}
	return nil
}

// defaultSkipCompress is rsync 3.x's default --skip-compress list: the
// suffixes of files that are compressed already.
var defaultSkipCompress = strings.Fields(`3g2 3gp 7z aac ace apk avi bz2 deb dmg ear
f4v flac flv gpg gz iso jar jpeg jpg lrz lz lz4 lzma lzo m1a m1v m2a m2ts m2v m4a m4b
m4p m4r m4v mka mkv mov mp1 mp2 mp3 mp4 mpa mpeg mpg mpv mts odb odf odg odi odm odp
ods odt oga ogg ogm ogv ogx opus otg oth otp ots ott oxt png qt rar rpm rz rzip spx
squashfs sxc sxd sxg sxm sxw sz tbz tbz2 tgz tlz ts txz tzo vob war webm webp xz z
zip zst`)

// checkInfo refuses an --info value with a word rsync does not know.
func checkInfo(value string) error {
	return checkOutputWords(false, value)
}

// applyStderr takes --stderr's mode, which may be abbreviated to one
// letter, as rsync's.
func applyStderr(c *Invocation, mode string) {
	switch {
	case mode != "" && strings.HasPrefix("errors", mode), mode != "" && strings.HasPrefix("client", mode):
		c.StderrAll = false
	case mode != "" && strings.HasPrefix("all", mode):
		c.StderrAll = true
	case c.stderrErr == "":
		c.stderrErr = fmt.Sprintf("--stderr mode %q is not one of errors, all, or client", mode)
	}
}

// applyInfo keeps an --info value for settleInfo; "help" asks for
// the list of words instead of a transfer.
func applyInfo(c *Invocation, value string) {
	c.infoWords = append(c.infoWords, value)
	for _, w := range strings.Split(value, ",") {
		c.InfoHelp = c.InfoHelp || strings.EqualFold(w, "help")
	}
}

// protocolVersion is the rsync protocol a run is held to, where it
// shows: --protocol, or an older one that an --rsync-path command gives
// the remote program ("rsync --protocol=29"); 0 is the current one.
func (inv *Invocation) protocolVersion() int {
	p := inv.protocol
	if inv.Remote != nil && !inv.Remote.Daemon || inv.Remote != nil && inv.Rsh != "" {
		if rp := rsyncPathProtocol(inv.RsyncPath); rp != 0 && (p == 0 || rp < p) {
			p = rp
		}
	}
	return p
}

// settleProtocol applies what an older rsync protocol changes that a
// user sees. Before 31: mtimes in whole seconds, %C's checksum (no
// negotiation), and --stats without its deletions line (printSummary). Before 30: no incremental
// recursion (-v's "building file list ... done"), --delete deletes
// before the transfer, --append verifies as --append-verify, the client
// that sends shows -i's time letter of a symlink as 'T', a daemon
// replaces a partial directory's symlink out of its module instead of
// refusing it, and ACLs and extended attributes cannot cross a
// connection.
func settleProtocol(inv *Invocation) error {
	p := inv.protocolVersion()
	if p == 0 {
		return nil
	}
	o := &inv.Opts
	o.WholeSecondTimes = p < 31
	if inv.checksumChoice == "" && p < 31 {
		// No checksum is negotiated before 31: MD5 at 30, before
		// that an MD4 of rsync's own (which %C shows as blanks).
		o.ChecksumChoice = "md5"
		if p < 30 {
			o.ChecksumChoice = receiver.OldMD4
		}
	}
	if p >= 30 {
		return nil
	}
	if inv.Remote != nil && !inv.Opts.ListOnly {
		for _, x := range []struct {
			on   bool
			name string
		}{{o.ACLs, "--acls"}, {o.Xattrs > 0, "--xattrs"}} {
			if x.on {
				return &UsageError{Code: wire.ExitProtocol, NoPrefix: true, Msg: fmt.Sprintf("%s requires protocol 30 or higher (negotiated %d).", x.name, p)}
			}
		}
	}
	inv.noIncRecurse = true
	if o.Delete && inv.deleteWhens == 0 && !o.DeleteLate {
		o.DeleteBefore, inv.deleteEarlyLate = true, true
	}
	if o.Append == 1 {
		o.Append = 2
	}
	o.SenderLinkTimesT = inv.Remote == nil || inv.Remote.Push
	o.ReplaceOutsidePartialDir = true
	return nil
}

// settleInfo sets the transfer's output levels from -v, --stats,
// --progress and --info, as rsync does.
func settleInfo(c *Invocation) {
	c.statsGiven, c.progressGiven = c.Opts.Stats, c.Opts.Progress
	levels := outputLevels(c, false, true)
	setOutputLevels(&c.Opts, false, levels)
	if c.progressGiven {
		given := *c
		given.progressGiven = false
		c.Opts.Info.NameImplied = levels["NAME"] > 0 && outputLevels(&given, false, true)["NAME"] == 0
	}
	progress := levels["PROGRESS"]
	c.Opts.Progress, c.Progress2 = progress == 1, progress >= 2
	c.Opts.Stats = c.Opts.Info.Stats >= 2
	c.Opts.HeapStats = c.Opts.Info.Stats >= 3
}

// statsLevel is --info=stats's level: 1 prints -v's closing lines, 2
// the --stats block too, 3 (and above) the heap statistics too.
func (c *Invocation) statsLevel() int {
	return c.Opts.Info.Stats
}
