package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"syq/wire"
)

// version is syq's release; builds may override it with -ldflags -X.
var version = "0.1.0-dev"

// versionText is what --version / -V prints (with a trailing newline).
func versionText() string {
	return fmt.Sprintf("syq rsync-compatible %s  protocol version syq-%d (rsync 3.x command lines)\n", version, wire.ProtocolVersion)
}

// capabilitiesJSON is -VV: rsync's JSON layout, saying truthfully what
// this syq supports (test suites read it to decide what to test).
func capabilitiesJSON() string {
	type caps struct {
		FileBits         int    `json:"file_bits"`
		InumBits         int    `json:"inum_bits"`
		TimestampBits    int    `json:"timestamp_bits"`
		LongIntBits      int    `json:"long_int_bits"`
		Socketpairs      bool   `json:"socketpairs"`
		Symlinks         bool   `json:"symlinks"`
		Symtimes         bool   `json:"symtimes"`
		Hardlinks        bool   `json:"hardlinks"`
		HardlinkSpecials bool   `json:"hardlink_specials"`
		HardlinkSymlinks bool   `json:"hardlink_symlinks"`
		IPv6             bool   `json:"IPv6"`
		Atimes           bool   `json:"atimes"`
		Batchfiles       bool   `json:"batchfiles"`
		Inplace          bool   `json:"inplace"`
		Append           bool   `json:"append"`
		ACLs             bool   `json:"ACLs"`
		ACLAt            bool   `json:"ACL_at"`
		Xattrs           bool   `json:"xattrs"`
		SecludedArgs     string `json:"secluded_args"`
		Iconv            bool   `json:"iconv"`
		Prealloc         bool   `json:"prealloc"`
		StopAt           bool   `json:"stop_at"`
		Crtimes          bool   `json:"crtimes"`
		IDN              bool   `json:"IDN"`
	}
	v := struct {
		Program        string   `json:"program"`
		Version        string   `json:"version"`
		Protocol       string   `json:"protocol"`
		Copyright      string   `json:"copyright"`
		URL            string   `json:"url"`
		Capabilities   caps     `json:"capabilities"`
		Optimizations  struct{} `json:"optimizations"`
		ChecksumList   []string `json:"checksum_list"`
		CompressList   []string `json:"compress_list"`
		DaemonAuthList []string `json:"daemon_auth_list"`
		License        string   `json:"license"`
		Caveat         string   `json:"caveat"`
	}{
		Program: "syq", Version: version, Protocol: fmt.Sprintf("syq-%d", wire.ProtocolVersion),
		Copyright: "(C) the syq authors", URL: "see README.md",
		Capabilities: caps{
			FileBits: 64, InumBits: 64, TimestampBits: 64, LongIntBits: 64,
			Socketpairs: true, Symlinks: true, Symtimes: true, Hardlinks: true, HardlinkSymlinks: true,
			IPv6: true, Inplace: true, SecludedArgs: "no", StopAt: true, Atimes: true, Append: true,
			Xattrs: true, Prealloc: true, ACLs: true, Batchfiles: true,
			IDN: true, // daemon hosts and hosts allow/deny entries (daemon.HostToASCII)
		},
		ChecksumList:   []string{"xxh128", "xxh3", "xxh64", "md5", "md4", "sha1"},
		CompressList:   []string{"zstd", "none"},
		DaemonAuthList: []string{wire.DaemonDigest},
		License:        "Apache-2.0",
		Caveat:         "syq comes with ABSOLUTELY NO WARRANTY",
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b) + "\n"
}

// helpText is what --help (or a lone -h) prints. It lists only what syq
// implements; every other rsync option is recognised and refused with an
// error rather than silently ignored.
const helpText = `syq rsync: copy files with rsync's command line, faster.

Usage: syq rsync [OPTION]... SRC [SRC]... DEST
  or   syq rsync [OPTION]... SRC            (list SRC, copy nothing)

A trailing slash on SRC means "the contents of SRC", as in rsync. HOST:PATH
and USER@HOST:PATH reach another machine through ssh (or -e COMMAND); syq
installs its helper there when it is missing. HOST::MODULE/PATH and
rsync://HOST[:PORT]/MODULE/PATH reach a syq daemon ("syq rsync --daemon",
configured by rsyncd.conf as rsync's); an rsync daemon's module list is
shown, but transfers need syq on both ends. rsync options syq does not
implement yet are refused with an error instead of being ignored.

Options (applied left to right, so "-a --no-p" differs from "--no-p -a")
 -v, --verbose           print more about what is happening; repeat for more
 -q, --quiet             print errors only
     --stderr=e|a|c      errors (the default) and client: errors on stderr;
                         all: every line on stderr (--msgs2stderr)
 -a, --archive           shorthand for -rlptgoD
 -r, --recursive         descend into directories
     --files-from=FILE   copy exactly the paths FILE lists below SRC ("-": stdin);
                         implies -R and -d, and -a does not imply -r
 -R, --relative          keep each operand's path (from a /./ in it)
     --no-implied-dirs   with -R: do not send the directories on the way
 -d, --dirs              copy directories without recursing
     --old-dirs          (also --old-d) -r with "- /*/*": one level down
 -l, --links             recreate symlinks as symlinks
 -L, --copy-links        copy what symlinks point to, not the links
     --copy-unsafe-links copy what links leaving the tree point to
     --safe-links        ignore symlinks that leave the tree
     --munge-links       munge symlinks to make them safe & unusable
                         (this side only; -M--munge-links for the other)
 -k, --copy-dirlinks     copy what symlinks to directories point to
 -K, --keep-dirlinks     treat a symlink to a directory in DEST as that directory
 -H, --hard-links        keep hard-linked files hard-linked
 -p, --perms             copy permission bits
 -t, --times             copy modification times
 -O, --omit-dir-times    do not copy modification times of directories
 -X, --xattrs            copy extended attributes (-XX: rsync's own records too)
 -A, --acls              copy POSIX ACLs (implies --perms)
     --insecure-links    follow symlinks on the paths you name even when
                         another user owns them (refused by default)
     --confine-root=DIR  refuse merge files and lists resolving outside DIR
 -U, --atimes            copy access times of files (not directories)
 -J, --omit-link-times   do not copy modification times of symlinks
     --open-noatime      read sources without changing their access times
 -E, --executability     without -p: keep regular files executable as the source is
     --chmod=CHMOD       change the listed permissions (rsync's rules, e.g. Dg+s,Fo-w)
 -o, --owner             copy file owners (needs root)
 -g, --group             copy file groups
     --devices           recreate device nodes (needs root)
     --specials          recreate fifos and sockets
 -D                      both --devices and --specials
     --copy-devices      copy device contents as a regular file
     --write-devices     write to devices as files (implies --inplace)
     --super             receiver attempts super-user activities
                         (--no-super: acts as an ordinary user even as root)
     --fake-super        store/recover privileged attrs using xattrs
     --numeric-ids       keep numeric uid/gid, do not map by name
     --usermap=STRING    custom username mapping
     --groupmap=STRING   custom groupname mapping
     --chown=USER:GROUP  simple username/groupname mapping
 -c, --checksum          compare file contents, not size and mtime
     --size-only         compare sizes only
 -I, --ignore-times      copy even files whose size and mtime match
 -u, --update            leave alone files that are newer at the destination
     --max-size=SIZE     skip files larger than SIZE (rsync's units: 1.5K, 2MB, 3G+1)
     --min-size=SIZE     skip files smaller than SIZE
     --ignore-missing-args  a missing SRC is not an error
     --delete-missing-args  delete what a missing SRC names at DEST
     --remove-source-files  the sender deletes what the receiver has safely
                         (also --remove-sent-files)
     --existing          only update files that already exist at DEST
                         (same as --ignore-non-existing)
     --ignore-existing   never touch files that already exist at DEST
 -W, --whole-file        send whole files (the default for local copies)
     --no-whole-file     use the delta algorithm (also --no-W; over ssh, the default)
 -B, --block-size=SIZE   force a fixed delta block size (at most 128K)
     --inplace           write into destination files directly
     --append            append data onto shorter files
     --append-verify     --append w/old data in file checksum
     --partial           keep a partly copied file if interrupted
     --partial-dir=DIR   put a partially transferred file into DIR
     --delay-updates     put all updated files into place at end
 -T, --temp-dir=DIR      create temporary files in directory DIR
 -m, --prune-empty-dirs  prune empty directory chains from file-list
 -S, --sparse            write runs of zero bytes as holes
     --fsync             flush each written file to disk
     --preallocate       reserve each new file's blocks before writing it
     --mkpath            create missing directories on the DEST path
 -n, --dry-run           show what would happen, change nothing
     --delete            remove destination files absent from the source
     --del, --delete-during  the same as --delete
     --delete-before, --delete-after, --delete-delay
                         accepted: syq deletes per directory as it goes,
                         which ends in the same tree (-after/-delay keep
                         --fuzzy candidates until the directory is written)
     --compare-dest=DIR  skip files that DIR (relative to DEST) has unchanged
     --copy-dest=DIR     ... and copy them locally from DIR
     --link-dest=DIR     ... and hard-link them from DIR (snapshots)
 -y, --fuzzy             a missing file takes a similar one as its delta basis
                         (-yy: also in the --*-dest directories)
 -b, --backup            keep replaced and deleted files as NAME~
     --backup-dir=DIR    ... below DIR instead (relative to DEST)
     --suffix=SUFFIX     backup suffix (default ~, none with --backup-dir)
     --delete-excluded   also delete excluded files on the receiving side
     --max-delete=NUM    remove at most NUM files (0: report, remove none)
     --ignore-errors     delete even after I/O errors
     --force             remove a non-empty directory in the way of a file
     --modify-window=NUM compare mtimes to within NUM seconds (-1: nanoseconds)
 -x, --one-file-system   stay on the source file system (-xx: also skip
                         the mount-point directories)
 -f, --filter=RULE       add a filter rule (rsync's full rule syntax)
 -F                      same as --filter='dir-merge /.rsync-filter';
                         repeated: --filter='- .rsync-filter' too
     --exclude=PATTERN   exclude files matching PATTERN
     --include=PATTERN   do not exclude files matching PATTERN
     --exclude-from=FILE read exclude patterns from FILE ("-": stdin)
     --include-from=FILE read include patterns from FILE
 -C, --cvs-exclude       ignore files the way CVS does
 -0, --from0             rule files are separated by NUL bytes
 -h, --human-readable    print sizes with K/M/G units (-hh: powers of 1024)
 -8, --8-bit-output      show bytes outside ASCII in names as they are
     --outbuf=N|L|B      accepted; syq writes every output line whole
     --out-format=FORMAT one line per change in FORMAT (also --log-format; rsync's
                         %n %L %i %o %l %b %M %B %U %G %t %p and widths)
     --log-file=FILE     append what happened to FILE, each line stamped
     --log-file-format=FMT  the item lines of --log-file (default "%i %n%L")
     --stats             print transfer statistics at the end
 -i, --itemize-changes   print a change line per item (-ii: unchanged too)
     --progress          show progress while copying (--no-progress: never)
     --info=progress2    one line of whole-transfer progress (--info=help)
     --debug=FLAGS       rsync's names checked; syq prints none of rsync's
                         debug output (SYQ_DEBUG=1 shows syq's own decisions)
 -P                      both --partial and --progress
     --list-only         list the sources instead of copying
 -z, --compress          compress what travels over the network with zstd
                         (local copies ignore it, as rsync does)
     --compress-choice=STR, --zc=STR  zstd, or none; zlib and zlibx (and
                         --old-compress, --new-compress, -zz) are sent as zstd
     --compress-level=NUM, --zl=NUM  zstd's level (3 by default; clamped to
                         -131072..22; zlib's 1-9 with zlib names)
     --skip-compress=LIST  send files with these suffixes uncompressed
                         (slash-separated, e.g. gz/jpg/mp[34]; default: rsync's list)
     --compress-threads=NUM, --zt=NUM  accepted; syq's compressors are a
                         pool sized to the CPUs
 -e, --rsh=COMMAND       remote shell command (default: $RSYNC_RSH or ssh)
     --rsync-path=PROGRAM  the syq to run on the remote side (may be a
                         command such as "sudo /opt/syq")
     --timeout=SECONDS   end a remote transfer when no data arrives for that long
     --contimeout=SECONDS  how long to wait for a daemon's TCP connection
     --port=PORT         a daemon's TCP port (default 873)
     --address=ADDRESS   the local address to connect to a daemon from
 -4, --ipv4              use IPv4 (daemon socket, rails; ssh gets -4 too)
 -6, --ipv6              use IPv6 (daemon socket, rails; ssh gets -6 too)
     --sockopts=OPTIONS  socket options of a daemon's TCP connection
                         (SO_KEEPALIVE, SO_SNDBUF=N, TCP_NODELAY, ...)
     --password-file=FILE  a daemon module's password (else $RSYNC_PASSWORD)
     --no-motd           do not show a daemon's message of the day
     --early-input=FILE  send FILE (at most 5120 bytes) to a daemon module's
                         "early exec" program
     --daemon            serve rsyncd.conf's modules (--config=FILE, default
                         /etc/rsyncd.conf; --no-detach, --port, --address,
                         --log-file, --dparam=NAME=VALUE)
     --bwlimit=RATE      limit the data rate (KiB/s; K, M, G suffixes)
     --write-batch=FILE  also record the transfer in FILE (syq's own format,
                         not rsync's) and write FILE.sh, which replays it
     --only-write-batch=FILE  like --write-batch but w/o updating dest
     --read-batch=FILE   apply a batch syq recorded to DEST ("-": stdin)
     --stop-after=MINS   stop the transfer after MINS minutes (also --time-limit)
     --stop-at=y-m-dTh:m stop the transfer at this local time
     --checksum-choice=NAME  (--cc) accepted for rsync's names; syq always
                         checks with its own strong hash (--checksum-seed too)
     --max-alloc=SIZE    accepted and checked; syq's memory is bounded anyway
     --protocol=NUM      accepted (20-32); below 31 mtimes are whole seconds
     --qsort             accepted; the file order is rsync's
 -s, --secluded-args     accepted (also --protect-args): syq never passes
                         names through the remote shell
     --trust-sender      accepted; syq's receiver checks the file list anyway
     --old-args          remote names are split into words by the remote shell
                         (also RSYNC_OLD_ARGS=1); wildcards expand there always
 -M, --remote-option=OPT an rsync option for the remote side only
     --blocking-io       accepted; syq's remote shell I/O is always blocking
     --no-OPTION         switch off OPTION, e.g. --no-perms, --no-p, --no-D
 -V, --version           print syq's version and exit
     --help              print this help and exit (-h does too, when alone)

syq-only options
     --syq-workers=N     parallel copy workers (0 picks a number itself)
     --syq-no-tuner-cache
                         neither use nor update the tuner's per-route cache
                         ('syq tuner show' prints it, 'syq tuner reset' clears it)
     --syq-rails=N       remote mode: number of parallel data lanes
     --syq-no-rails      remote mode: keep all data on the ssh connection
     --syq-rail-addrs=A,B
                         remote mode: the remote host's addresses data
                         lanes may use (default: all of them)
     --syq-no-bootstrap  remote mode: do not install syq on the remote host
     --syq-rsync-form    remote mode: run the helper as "rsync --server ..." at
                         once (a host whose key runs only rsync, e.g. rrsync)
`

// errDaemonHelp is --help (-h) among --daemon's options: the daemon's
// usage is printed and nothing else is done.
var errDaemonHelp = errors.New("--daemon --help")

// daemonHelpText is what --daemon --help prints after the version line:
// the options syq's daemon takes (parseDaemonFlags).
const daemonHelpText = `Usage: syq rsync --daemon [OPTION]...
     --daemon            serve the modules of rsyncd.conf over TCP
     --config=FILE       read FILE instead of /etc/rsyncd.conf
 -M, --dparam=NAME=VAL   set a global parameter of the config file
     --address=ADDRESS   listen on this address only
     --port=PORT         listen on PORT instead of 873
     --no-detach         stay in the foreground (--detach: the default)
     --log-file=FILE     log to FILE instead of the config's "log file"
 -v, --verbose           accepted, as rsync's daemon accepts it
 -4, --ipv4 / -6, --ipv6 accepted, as rsync's daemon accepts them
 -h, --help              show this help (with --daemon)

Other options given with --daemon are refused. See rsyncd.conf(5) for the
configuration file, which syq reads as rsync does.
`
