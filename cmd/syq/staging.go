package main

import (
	"os"
	"path"

	"syq/filter"
)

// tmpPartialDir is the partial directory --delay-updates uses when no
// --partial-dir is given, as rsync's.
const tmpPartialDir = ".~tmp~"

// settleStaging applies rsync's rules for -T, --partial-dir and
// --delay-updates once every option is read: --delay-updates implies a
// partial directory, --partial-dir implies --partial, --partial alone
// takes RSYNC_PARTIAL_DIR from the environment, and a relative partial
// directory is hidden from the transfer (and so from --delete) by a
// perishable exclude rule appended to the user's rules.
func settleStaging(inv *Invocation) error {
	o := &inv.Opts
	if o.Append != 0 {
		if inv.wholeFileGiven && inv.Opts.WholeFile {
			return &UsageError{Msg: "--append cannot be used with --whole-file"}
		}
		o.Inplace = true
	}
	if o.DelayUpdates && o.PartialDir == "" {
		o.PartialDir = tmpPartialDir
	}
	if o.Inplace {
		if o.PartialDir != "" {
			mode, other := "inplace", "partial-dir"
			if o.Append != 0 {
				mode = "append"
			}
			if o.DelayUpdates {
				other = "delay-updates"
			}
			return &UsageError{Msg: "--" + mode + " cannot be used with --" + other}
		}
		o.Partial = false // as rsync: writing in place keeps what it wrote anyway
		return nil
	}
	if o.Partial && o.PartialDir == "" {
		o.PartialDir = os.Getenv("RSYNC_PARTIAL_DIR")
	}
	if o.PartialDir == "" {
		return nil
	}
	if o.PartialDir = path.Clean(o.PartialDir); o.PartialDir == "." {
		o.PartialDir = ""
	}
	o.Partial = true
	if o.PartialDir != "" && !path.IsAbs(o.PartialDir) {
		inv.Filters = append(inv.Filters, filterArg{kind: filter.Filter, text: "-p " + o.PartialDir + "/"})
	}
	return nil
}
