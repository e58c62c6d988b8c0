package wire

// Options are the transfer settings that both halves of a transfer read.
// cmd/syq fills them from the command line; in remote mode they travel to
// the helper in the handshake, which is why they live here.
type Options struct {
	// What the sender walks and lists.
	Recursive       bool // -r
	Dirs            bool // -d: transfer directories without recursing
	Links           bool // -l: copy symlinks as symlinks
	HardLinks       bool // -H
	Devices         bool // --devices (part of -D)
	Specials        bool // --specials (part of -D)
	OneFileSys      bool // -x: do not cross filesystem boundaries
	SkipMountDirs   bool // -xx: also leave out the mount-point directories themselves
	CopyLinks       bool // -L: follow symlinks in the source
	CopyDirLinks    bool // -k: follow symlinks to directories in the source
	CopyUnsafeLinks bool // --copy-unsafe-links: follow symlinks that leave the tree
	SafeLinks       bool // --safe-links: the receiver ignores symlinks that leave the tree
	KeepDirLinks    bool // -K: a destination symlink to a directory counts as that directory
	Relative        bool // -R (refused until built)
	ImpliedDirs     bool // --implied-dirs (default true with -R)
	ListOnly        bool // --list-only, or a single source without a destination
	// FilterRules carry the client's filter rules to a remote helper, as
	// rule texts (filter.List.Encode); locally the halves share the list.
	FilterRules    []string
	DeleteExcluded bool // --delete-excluded

	Chmod []string // --chmod rule lists, applied to the listed modes

	// What the receiver preserves.
	Perms         bool // -p
	Executability bool // -E: without -p, keep files executable as the source is
	Times         bool // -t
	OmitDirTimes  bool // -O
	Owner         bool // -o
	Group         bool // -g
	NumericIDs    bool // --numeric-ids

	// How the receiver decides what to transfer.
	Checksum        bool // -c
	SizeOnly        bool // --size-only
	IgnoreTimes     bool // -I
	Update          bool // -u
	Existing        bool // --existing
	IgnoreExisting  bool // --ignore-existing
	ModifyWindowSec int64
	MaxSize         *int64 // --max-size: larger files are skipped (nil: no limit)
	MinSize         *int64 // --min-size: smaller files are skipped (nil: no limit)

	// How the receiver writes.
	WholeFile bool // -W (always true locally unless --no-whole-file)
	BlockSize int  // -B: the delta block length (0: chosen per file)
	Inplace   bool // --inplace
	Partial   bool // --partial
	Sparse    bool // -S
	Fsync     bool // --fsync
	MkPath    bool // --mkpath
	DryRun    bool // -n

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
	Delete       bool // --delete (during)
	MaxDelete    int  // --max-delete; <0 means unlimited
	IgnoreErrors bool // --ignore-errors
	Force        bool // --force: delete a non-empty directory that a non-directory replaces

	// Output.
	Verbose          int  // -v count
	Quiet            bool // -q
	Itemize          bool // -i
	ItemizeUnchanged bool // -ii: itemize unchanged items too
	Stats            bool // --stats
	// OutFormat is --out-format: each line shown is this format
	// expanded (with %i it shows what -i shows, otherwise what -v does).
	OutFormat     string
	HumanReadable int  // -h count; -1 after --no-h (plain digits, no thousands separators)
	Progress      bool // whole-transfer progress line on a terminal

	// TimeoutSec (--timeout) ends a remote transfer with exit 30 when
	// nothing arrives for that long; 0 waits forever.
	TimeoutSec int

	// Tuning (syq-only).
	Workers int // --syq-workers; 0 = automatic
}

// Kinds of alternate destination directories (Options.AltDestKind).
const (
	AltCompare = "compare"
	AltCopy    = "copy"
	AltLink    = "link"
)
