package wire

// Options are the transfer settings that both halves of a transfer read.
// cmd/syq fills them from the command line; in remote mode they travel to
// the helper in the handshake, which is why they live here.
type Options struct {
	// What the sender walks and lists.
	Recursive bool // -r
	Dirs      bool // -d: transfer directories without recursing
	Links     bool // -l: copy symlinks as symlinks
	HardLinks bool // -H
	Devices   bool // --devices (part of -D)
	// CopyDevices (--copy-devices): the sender lists a character or
	// block device as a regular file of the device's size, with its
	// permissions and the time of listing, and sends its contents.
	CopyDevices bool
	// WriteDevices (--write-devices, which implies --inplace): a
	// receiver writes a regular file's data into a device that stands
	// under its name instead of replacing the device.
	WriteDevices    bool
	Specials        bool // --specials (part of -D)
	OneFileSys      bool // -x: do not cross filesystem boundaries
	SkipMountDirs   bool // -xx: also leave out the mount-point directories themselves
	CopyLinks       bool // -L: follow symlinks in the source
	CopyDirLinks    bool // -k: follow symlinks to directories in the source
	CopyUnsafeLinks bool // --copy-unsafe-links: follow symlinks that leave the tree
	SafeLinks       bool // --safe-links: the receiver ignores symlinks that leave the tree
	// InsecureLinks (--insecure-links): paths the user names for the
	// receiving side follow symlinks whoever owns them.
	InsecureLinks bool
	KeepDirLinks  bool // -K: a destination symlink to a directory counts as that directory
	// MungeLinks (--munge-links) is for the side that reads it, as in
	// rsync where each side needs its own: a receiver prefixes every
	// symlink target it makes with MungePrefix, a sender strips that
	// prefix from the targets it lists. The command line gives it to
	// the local side only; -M--munge-links to the remote (in a local
	// copy: the receiving) side.
	MungeLinks  bool
	Relative    bool // -R (refused until built)
	ImpliedDirs bool // --implied-dirs (default true with -R)
	ListOnly    bool // --list-only, or a single source without a destination
	// OldArgs (--old-args): the remote sender splits each operand into
	// words as a shell would, before expanding wildcards.
	OldArgs bool
	// FilterRules carry the client's filter rules to a remote helper, as
	// rule texts (filter.List.Encode); locally the halves share the list.
	FilterRules    []string
	DeleteExcluded bool // --delete-excluded
	// FilesFrom is the path, on the helper's machine, of a --files-from
	// list named as HOST:FILE or :FILE; From0 says its names end in NUL.
	// A helper that sends takes its operands from it; one that receives
	// sends it to the client (LogFilesFrom), whose sender does.
	FilesFrom string
	From0     bool

	Chmod []string // --chmod rule lists, applied to the listed modes

	// What the receiver preserves.
	Perms         bool // -p
	Executability bool // -E: without -p, keep files executable as the source is
	Times         bool // -t
	OmitDirTimes  bool // -O
	OmitLinkTimes bool // -J
	Atimes        bool // -U: access times of non-directories
	Xattrs        int  // -X count: extended attributes (-XX: rsync's own records too)
	// ACLs (-A): POSIX ACLs travel among the extended attributes, under
	// the kernel's names (fsops.ACLAccess, fsops.ACLDefault).
	ACLs       bool
	Owner      bool // -o
	Group      bool // -g
	NumericIDs bool // --numeric-ids
	// Super is --super (1: the receiver attempts what only root may do,
	// whoever runs it) or --no-super (-1: it acts as an ordinary user
	// even as root); 0 decides by the effective uid.
	Super int
	// FakeSuper (--fake-super) is for the side that reads it: a receiver
	// keeps what only root could set (owner, group, the full mode,
	// device numbers, ACLs) in "user.rsync.%..." extended attributes
	// instead, and makes devices and specials as plain files; a sender
	// reads those records back as the entry's metadata. Locally both
	// halves have it; -M--fake-super gives it to the remote (or, in a
	// local copy, the receiving) side only.
	FakeSuper bool

	// How the receiver decides what to transfer.
	Checksum        bool // -c
	SizeOnly        bool // --size-only
	IgnoreTimes     bool // -I
	Update          bool // -u
	Existing        bool // --existing
	IgnoreExisting  bool // --ignore-existing
	ModifyWindowSec int64
	// WholeSecondTimes: mtimes travel in whole seconds, as in rsync's
	// protocols before 31 (--protocol=29 or 30).
	WholeSecondTimes bool
	// SenderLinkTimesT: -i shows a symlink's time letter as 'T' ("not
	// kept"), as rsync's sending client does before protocol 30 (it
	// shows the lines and does not learn that the receiver sets
	// symlink times); the symlink's time is kept all the same.
	SenderLinkTimesT bool
	// ReplaceOutsidePartialDir: a partial directory's name that is a
	// symlink leading out of a daemon's module is replaced by a
	// directory, as any non-directory there is, not refused: rsync's
	// daemon refuses it only to a peer of protocol 30 or later, which
	// could have it redirect an in-place partial update. The link is
	// never followed either way.
	ReplaceOutsidePartialDir bool
	MaxSize                  *int64 // --max-size: larger files are skipped (nil: no limit)
	MinSize                  *int64 // --min-size: smaller files are skipped (nil: no limit)

	// How the receiver writes.
	WholeFile bool // -W (always true locally unless --no-whole-file)
	// Fuzzy is the -y count: a missing file takes a similar one of its
	// directory as its delta basis (2: also in the --*-dest directories).
	Fuzzy int
	// DebugFuzzy is --debug=FUZZY's level: the fuzzy choices are shown.
	DebugFuzzy int
	// DebugFilter is --debug=FILTER's level (-vv gives 1): the rule
	// that hid, showed or protected a name is shown.
	DebugFilter int
	// DebugDeltasum is --debug=DELTASUM's level (-vv gives 1, -vvv 2):
	// at 2 the sender shows each file's match counts.
	DebugDeltasum int
	// DebugFlist is --debug=FLIST's level (-vv gives 1): the generator
	// says whether it sends deltas.
	DebugFlist int
	// DebugDel is --debug=DEL's level (-vv gives 1): --delete-before's
	// pass names each top directory it goes into.
	DebugDel  int
	BlockSize int  // -B: the delta block length (0: chosen per file)
	Inplace   bool // --inplace
	Partial   bool // --partial
	Sparse    bool // -S
	Fsync     bool // --fsync
	// Preallocate (--preallocate) reserves each new file's blocks before
	// writing it.
	Preallocate bool
	// OpenNoatime (--open-noatime): the sender reads without updating
	// the source files' access times.
	OpenNoatime bool
	MkPath      bool // --mkpath
	DryRun      bool // -n
	// OnlyWriteBatch (--only-write-batch): the receiver decides as in a
	// dry run (which DryRun then is) but still wants the data, which
	// goes to the batch file only.
	OnlyWriteBatch bool

	// AltDests are --compare-dest, --copy-dest or --link-dest
	// directories (one kind per transfer, as rsync allows), relative to
	// the destination unless absolute; AltDestKind says which.
	AltDests    []string
	AltDestKind string // AltCompare, AltCopy or AltLink

	// Backups (-b): replaced and deleted files are moved to NAME+suffix,
	// below BackupDir (relative to the destination) when set.
	Backup       bool
	BackupDir    string
	BackupSuffix string

	// Missing operands: skipped silently, or (delete) also deleted at
	// the destination.
	IgnoreMissingArgs bool
	DeleteMissingArgs bool

	// RemoveSourceFiles: the sender deletes each non-directory the
	// receiver reports as synced (--remove-source-files).
	RemoveSourceFiles bool

	// Deletion.
	Delete bool // --delete (during)
	// DeleteLate (--delete-delay, --delete-after): with --fuzzy, a
	// directory's extraneous files go only once its files are written,
	// so they may serve as bases.
	DeleteLate bool
	// DeleteAfter (--delete-after, with DeleteLate): the destination's
	// directories are listed again once every file is in place, as
	// rsync's pass after the transfer does, so what appeared in them
	// meanwhile (a --backup-dir inside the destination) is extraneous
	// too.
	DeleteAfter bool
	// DeleteBefore (--delete-before): rsync deletes in a pass before
	// the transfer, so a directory's own line shows the mtime its
	// deletions gave it.
	DeleteBefore bool
	MaxDelete    int  // --max-delete; <0 means unlimited
	IgnoreErrors bool // --ignore-errors
	Force        bool // --force: delete a non-empty directory that a non-directory replaces

	// Output.
	Verbose int // -v count
	// Info is what rsync's --info words show, each level from -v unless
	// --info gave it.
	Info             InfoLevels
	Quiet            bool // -q
	Itemize          bool // -i
	ItemizeUnchanged bool // -ii: itemize unchanged items too
	Stats            bool // --stats
	// HeapStats (--info=stats3): every syq process of the transfer
	// reports its memory statistics at the end, the helper as a line of
	// its standard output.
	HeapStats bool
	// OutFormat is --out-format: each line shown is this format
	// expanded (with %i it shows what -i shows, otherwise what -v does).
	OutFormat string
	// OutFormatGiven: --out-format was given, maybe empty (rsync then
	// prints an empty line for each item).
	OutFormatGiven bool
	// LogFile: the client keeps a --log-file, so the receiver sends it
	// each item's line formatted with LogFileFormat (none when empty),
	// and the notes it shows.
	LogFile       bool
	LogFileFormat string
	// FormatSources are the source operands as given, sent only when
	// output needs them: a format with %f (each file's path at the
	// sender), or -R with an absolute source (whose names rsync shows
	// with their leading slash).
	FormatSources []string
	// ChecksumChoice is --checksum-choice as given; it names the hash
	// %C shows.
	ChecksumChoice string
	HumanReadable  int  // -h count; -1 after --no-h (plain digits, no thousands separators)
	EightBitOutput bool // -8: names show bytes outside ASCII unescaped
	Progress       bool // whole-transfer progress line on a terminal

	// TimeoutSec (--timeout) ends a remote transfer with exit 30 when
	// nothing arrives for that long; 0 waits forever.
	TimeoutSec int

	// BwLimit (--bwlimit) holds each side's writes of a remote transfer,
	// and a local copy's data, to this many bytes per second; 0: no limit.
	BwLimit int64

	// Compression (-z) of what each side sends over the network: the
	// encoder level (CompressLevel), "" for none. SkipCompress lists the
	// file-name suffixes (--skip-compress, rsync's default list unless
	// given) whose data goes out plain. Local copies ignore both, as
	// rsync does.
	Compress     string
	SkipCompress []string

	// Where the receiver writes before a file takes its name (rsync's
	// -T, --partial-dir and --delay-updates; receiver/stage.go).
	TempDir      string // -T: temp files go here; relative to the destination unless absolute
	PartialDir   string // --partial-dir: partial files are kept here, per directory unless absolute
	DelayUpdates bool   // --delay-updates: updated files wait in PartialDir until the end

	// PruneEmptyDirs (-m): the sender leaves out directories that would
	// hold no non-directory (sender/prune.go).
	PruneEmptyDirs bool

	// UserMap and GroupMap are --usermap and --groupmap as given (--chown
	// becomes "*:USER" and "*:GROUP"); the receiver maps ids with them.
	UserMap  string
	GroupMap string

	// Append is 1 for --append (a shorter destination file gets the
	// rest of the source added, a longer or equal one is left alone) and
	// 2 for --append-verify (which also checks the data already there and
	// rewrites what differs); receiver/append.go.
	Append int

	// Tuning (syq-only).
	Workers int // --syq-workers; 0 = automatic
}

// Kinds of alternate destination directories (Options.AltDestKind).
const (
	AltCompare = "compare"
	AltCopy    = "copy"
	AltLink    = "link"
)

// InfoLevels are the levels of the rsync --info words syq acts on
// (rsync gives NONREG1 without -v; -v adds COPY1, DEL1, FLIST1, MISC1,
// NAME1 and SYMSAFE1, -vv BACKUP1, MISC2, MOUNT1, NAME2, REMOVE1 and
// SKIP1).
type InfoLevels struct {
	NonReg int // 1: each non-regular file the receiver does not make
	Mount  int // 1: each mount point -xx leaves out (the sender)
	Misc   int // 1: the options a batch file changes
	Flist  int // 1: the client's file-list banner; 2: its counts under it
	Stats  int // 1: -v's closing lines; 2: --stats's block; 3: heap statistics too
	// NameImplied: NAME's level is --progress's alone, which rsync's
	// client keeps to itself (its receiving server names nothing).
	NameImplied bool
	Name        int // 1: what changes; 2: also what is up to date
	Skip        int // 1: why an entry was left alone (--update, --existing, ...)
	Backup      int // 1: each backup made
	Del         int // 1: each deletion
	SymSafe     int // 1: each unsafe symlink --copy-unsafe-links copies as its referent (the sender)
	Remove      int // 1: each source file --remove-source-files removes (the sender)
}
