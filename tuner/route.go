package tuner

import (
	"fmt"
	"strings"

	"syq/fsops"
)

// Route is what a transfer's speed depends on outside syq: where the data
// comes from and goes to. Its Key names it in the cache.
type Route struct {
	Kind    string // "local", "push" or "pull"
	Src     string // source filesystem type ("" for the remote side)
	Dst     string // destination filesystem type ("" for the remote side)
	SameFS  bool   // local: source and destination on one filesystem
	Network bool   // a network filesystem on the local side, either end
	Peer    string // remote: the host as given, and the address pair if known
}

// Key is the cache key: stable across runs over the same route.
func (r Route) Key() string {
	switch r.Kind {
	case "local":
		if r.SameFS {
			return "local same-fs " + r.Src
		}
		return fmt.Sprintf("local %s -> %s", r.Src, r.Dst)
	default:
		fs := r.Src
		if r.Kind == "pull" {
			fs = r.Dst
		}
		return fmt.Sprintf("%s %s %s", r.Kind, r.Peer, fs)
	}
}

// String describes the route for SYQ_DEBUG.
func (r Route) String() string {
	s := r.Key()
	if r.Network {
		s += " (network filesystem)"
	}
	return s
}

// LocalRoute looks at the source operands and the destination of a copy
// on this machine. The first source that can be examined stands for all;
// a destination that does not exist yet is judged by its parent.
func LocalRoute(sources []string, dest string) Route {
	r := Route{Kind: "local"}
	var src, dst fsops.FS
	var srcOK bool
	for _, s := range sources {
		if fs, err := fsops.FSOf(s); err == nil {
			src, srcOK = fs, true
			break
		}
	}
	dst, err := fsops.FSOf(dest)
	dstOK := err == nil
	r.Src, r.Dst = fsName(src, srcOK), fsName(dst, dstOK)
	r.SameFS = srcOK && dstOK && src.Dev == dst.Dev
	r.Network = src.Network || dst.Network
	return r
}

// RemoteRoute is a push or a pull with peer (the host as the user named
// it, plus the rail's address pair when one is open); local is the path
// on this side.
func RemoteRoute(push bool, peer, local string) Route {
	r := Route{Kind: "pull", Peer: peer}
	if push {
		r.Kind = "push"
	}
	fs, err := fsops.FSOf(local)
	name := fsName(fs, err == nil)
	if push {
		r.Src = name
	} else {
		r.Dst = name
	}
	r.Network = fs.Network
	return r
}

func fsName(fs fsops.FS, ok bool) string {
	if !ok {
		return "unknown"
	}
	return strings.ReplaceAll(fs.Type, " ", "_")
}
