package main

// Building the filter rules of a transfer from the command line (and, in
// the helper, from the rule texts the client sent).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"syq/filter"
	"syq/fsops"
	"syq/sender"
	"syq/wire"
)

// filterArg is one filter option as given: a rule, or (fromFile) the
// name of a file of rules or patterns.
type filterArg struct {
	kind     filter.Kind
	text     string
	fromFile bool
	// debugFilter is the --debug=FILTER level given before this option,
	// which is the one rsync traces its rules at.
	debugFilter int
}

// buildFilters compiles the command line's filter rules; nil when there
// are none. A rule rsync would refuse is a usage error (exit 1); a rule
// file that cannot be read is exit 11, as in rsync. What rsync prints on
// the way goes to notify, if not nil.
func buildFilters(inv *Invocation, stdin io.Reader, notify func(filter.Notice)) (*filter.List, error) {
	if len(inv.Filters) == 0 && !inv.CVSExclude {
		return nil, nil
	}
	read := func(name string) ([]byte, error) {
		if name == "-" {
			return io.ReadAll(stdin)
		}
		return fsops.ReadFile(name)
	}
	b := filter.NewBuilder(filter.Options{
		DeleteExcluded: inv.Opts.DeleteExcluded,
		From0:          inv.From0,
		ReadFile:       read,
		HomeCVSIgnore:  homeCVSIgnore(),
		CVSIgnore:      os.Getenv("CVSIGNORE"),
		Notify:         notify,
	})
	for _, f := range inv.Filters {
		var err error
		b.SetDebugFilter(f.debugFilter)
		if f.fromFile {
			var data []byte
			if data, err = read(f.text); err != nil {
				what := "exclude"
				if f.kind == filter.Include {
					what = "include"
				}
				return nil, &wire.FatalError{Code: wire.ExitFileIO, Err: fmt.Errorf("[client] failed to open %s file %s: %s", what, f.text, fsops.ErrText(err))}
			}
			err = b.AddFrom(f.kind, f.text, bytes.NewReader(data))
		} else {
			err = b.Add(f.kind, f.text)
		}
		if err != nil {
			return nil, filterError(f.text, err)
		}
	}
	if inv.CVSExclude {
		for _, r := range []string{":C", "-C"} {
			if err := b.Add(filter.Filter, r); err != nil {
				return nil, filterError(r, err)
			}
		}
	}
	// The per-directory files are read at the level the whole command
	// line sets, -v included.
	b.SetDebugFilter(inv.Opts.DebugFilter)
	return b.List(), nil
}

// helperFilters rebuilds, in the helper, the rules the client encoded,
// reading the merge files they name with read. trace, if not nil, takes
// the --debug=FILTER lines rsync's server prints as it adds the rules it
// was sent. from0 says the merge files are NUL-separated (mergeFrom0).
func helperFilters(opts *wire.Options, from0 bool, read func(string) ([]byte, error), trace func(filter.Notice)) (*filter.List, error) {
	if len(opts.FilterRules) == 0 {
		return nil, nil
	}
	b := filter.NewBuilder(filter.Options{
		From0:          from0,
		DeleteExcluded: opts.DeleteExcluded,
		HomeCVSIgnore:  homeCVSIgnore(),
		CVSIgnore:      os.Getenv("CVSIGNORE"),
		ReadFile:       read,
		// The client has already warned about its own rules (an
		// over-long one never comes this far): only traces remain.
		Notify: func(n filter.Notice) {
			if n.Trace && trace != nil {
				trace(n)
			}
		},
	})
	// The rules arrive once the server has its whole command line, -v
	// included, unlike the client's, which are traced as they are given.
	b.SetDebugFilter(opts.DebugFilter)
	for _, r := range opts.FilterRules {
		if err := b.Add(filter.Filter, r); err != nil {
			return nil, filterError(r, err)
		}
	}
	return b.List(), nil
}

// mergeFrom0 says whether the helper reads merge files NUL-separated, as
// rsync's server does whenever it was given --from0: rsync's client
// passes it with a --files-from list read on the server's host when it
// was given -0 itself, and always with a list of its own that it sends
// (NUL-separated) to a pulling server. rsync's --from0 covers merge files
// too, so such a server reads a newline-separated .rsync-filter as one
// rule, which matches nothing.
func mergeFrom0(setup *wire.Setup) bool {
	return setup.Options.FilesFrom != "" && setup.Options.From0 || setup.FilesFromBase != ""
}

func filterError(rule string, err error) error {
	var se *filter.SyntaxError
	if errors.As(err, &se) {
		return &UsageError{Msg: se.Error(), NoPrefix: true} // rsync prints these bare
	}
	var oe *filter.OpenError
	if errors.As(err, &oe) {
		// rsync's words, whatever kind of rule named the file.
		return &wire.FatalError{Code: wire.ExitFileIO, Err: fmt.Errorf("[client] failed to open exclude file %s: %s", oe.Name, fsops.ErrText(oe.Err))}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return &wire.FatalError{Code: wire.ExitFileIO, Err: fmt.Errorf("failed to open filter file %s: %v", rule, err)}
	}
	return &wire.FatalError{Code: wire.ExitFileIO, Err: fmt.Errorf("filter %s: %v", rule, err)}
}

// homeCVSIgnore is ~/.cvsignore, which -C adds to its list.
func homeCVSIgnore() []byte {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	b, _ := fsops.ReadFile(filepath.Join(home, ".cvsignore"))
	return b
}

// expandFilesFrom turns --files-from into operands: each listed path below
// the one source, after a "/./" so -R keeps the path from there. Leading
// slashes go and ".." is resolved within the source, as rsync does; blank
// entries and ";"/"#" comments are skipped. A list on the remote host
// (HOST:FILE, :FILE) is read there: its path goes to the helper in
// Opts.FilesFrom and the operands are made where it is read.
func expandFilesFrom(inv *Invocation, stdin io.Reader) error {
	if inv.filesFrom == "" {
		return nil
	}
	if len(inv.Sources) != 1 {
		return &UsageError{Msg: "--files-from needs exactly one source directory", ShowUsage: true} // rsync prints its usage
	}
	if strings.HasPrefix(inv.filesFrom, ":") || isRemote(inv.filesFrom) {
		path := strings.TrimPrefix(inv.filesFrom, ":")
		if _, host, p, ok := splitRemote(inv.filesFrom); ok {
			if inv.Remote != nil && host != "" && host != inv.Remote.Host {
				return &UsageError{Msg: "--files-from hostname is not the same as the transfer hostname"}
			}
			path = p
		}
		if inv.Remote == nil {
			return &UsageError{Msg: "--files-from cannot be remote when the transfer is local"}
		}
		inv.Opts.FilesFrom, inv.Opts.From0 = path, inv.From0
		return nil
	}
	if inv.Remote == nil || inv.Remote.Push {
		if err := sender.CheckFilesFromDir(inv.Sources[0]); err != nil {
			return err
		}
	}
	var data []byte
	var err error
	if inv.filesFrom == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = fsops.ReadFile(inv.filesFrom)
	}
	if err != nil {
		// rsync's wording: strerror alone, no errno number.
		return &wire.FatalError{Code: wire.ExitSyntax, Err: fmt.Errorf("failed to open files-from file %s: %s", inv.filesFrom, fsops.Strerror(err))}
	}
	inv.filesFromBase = inv.Sources[0]
	inv.Sources = filesFromOperands(data, inv.Sources[0], inv.From0, inv.Opts.Relative)
	return nil
}

// filesFromOperands makes the operands of a --files-from list's data
// below the source directory src.
func filesFromOperands(data []byte, src string, from0, relative bool) []string {
	sep := "\n"
	if from0 {
		sep = "\x00"
	}
	src = strings.TrimSuffix(src, "/")
	if src == "" {
		src = "/"
	}
	// rsync reads the names from within the source directory, so a "/./"
	// in its path marks nothing: only the names' own do.
	for strings.Contains(src, "/./") {
		src = strings.ReplaceAll(src, "/./", "/")
	}
	ops := []string{}
	for _, line := range strings.Split(string(data), sep) {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		slash := strings.HasSuffix(line, "/")
		// With -R a "/./" in a name says where its path starts, as in
		// an operand; the part before it is a directory below the source.
		prefix := ""
		if i := strings.Index(line, "/./"); i >= 0 && relative {
			prefix = strings.TrimPrefix(path.Clean("/"+line[:i]), "/")
			line = line[i+3:]
		}
		p := strings.TrimPrefix(path.Clean("/"+line), "/")
		if p == "" {
			p = "."
		}
		if slash && p != "." {
			p += "/"
		}
		if relative && p != "." && strings.HasPrefix(line, "./") {
			p = "./" + p // rsync lists "." too for a name starting "./"
		}
		switch {
		case prefix != "":
			ops = append(ops, src+"/"+prefix+"/./"+p)
		case relative:
			ops = append(ops, src+"/./"+p)
		default:
			ops = append(ops, src+"/"+p)
		}
	}
	return ops
}

// readFilesFrom reads the helper's --files-from list (Options.FilesFrom).
// The client of rsync whose server cannot read it ends with exit 12 (the
// server is gone), so a failure here is that code too.
func readFilesFrom(path string) ([]byte, error) {
	data, err := fsops.ReadFile(path)
	if err != nil {
		return nil, &wire.FatalError{Code: wire.ExitStreamIO, Err: fmt.Errorf("failed to open files-from file %s: %s", path, fsops.Strerror(err))}
	}
	return data, nil
}

// helperFilterTrace is where the helper says, as rsync's server does,
// which of the rules it was sent it added: to the client, as the side
// role names. rsync sends its rules to a receiver only when it deletes or
// prunes, so only then does a receiving server trace them.
func helperFilterTrace(role string, opts *wire.Options, report func(class int, msg string)) func(filter.Notice) {
	side := "sender"
	if role != "sender" {
		if !opts.Delete && !opts.PruneEmptyDirs {
			return nil
		}
		side = "Receiver" // rsync's name for it before it forks
	}
	return func(n filter.Notice) {
		report(wire.FilterNotice(side, n))
	}
}
