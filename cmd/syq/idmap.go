package main

import (
	"strings"

	"syq/receiver"
)

// setIDMap records --usermap (k 0) or --groupmap (k 1), which also turn
// on -o or -g at that point of the command line, with rsync's refusals
// of a second map or one that clashes with --chown.
func (c *Invocation) setIDMap(k int, via, spec string) {
	if c.idMapErr != "" {
		return
	}
	opt := [2]string{"--usermap", "--groupmap"}[k]
	switch {
	case c.idMapVia[k] == "chown" && via == "chown":
		c.idMapErr = "You can only specify a " + [2]string{"user", "group"}[k] + "-affecting --chown once."
		return
	case c.idMapVia[k] == "chown":
		c.idMapErr = opt + " conflicts with prior --chown."
		return
	case c.idMapVia[k] != "" && via == "chown":
		c.idMapErr = "--chown conflicts with prior " + opt + "."
		return
	case c.idMapVia[k] != "":
		c.idMapErr = "You can only specify " + opt + " once."
		return
	}
	c.idMapVia[k] = via
	if k == 0 {
		c.Opts.UserMap, c.Opts.Owner = spec, true
	} else {
		c.Opts.GroupMap, c.Opts.Group = spec, true
	}
}

// applyChown is --chown=USER:GROUP: "*:USER" as the user map when USER
// is given, "*:GROUP" as the group map when GROUP is.
func applyChown(c *Invocation, s string) {
	user, group, _ := strings.Cut(s, ":")
	if user != "" {
		c.setIDMap(0, "chown", "*:"+user)
	}
	if group != "" {
		c.setIDMap(1, "chown", "*:"+group)
	}
}

// checkIDMaps checks the maps' grammar on the client, so a bad one stops
// the transfer before anything starts (rsync's receiver says the same).
func checkIDMaps(inv *Invocation) error {
	for k, spec := range []string{inv.Opts.UserMap, inv.Opts.GroupMap} {
		if spec == "" {
			continue
		}
		if err := receiver.CheckIDMap(spec, k == 1); err != nil {
			return &UsageError{Msg: err.Error(), NoPrefix: true}
		}
	}
	return nil
}
