package tuner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"syq/fsops"
)

func TestLocalRoute(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	fs, err := fsops.FSOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The destination does not exist yet: judged by its parent.
	r := LocalRoute([]string{src + "/"}, filepath.Join(dir, "new", "dst"))
	if !r.SameFS || r.Src != fs.Type || r.Dst != fs.Type || r.Key() != "local same-fs "+fs.Type {
		t.Fatalf("same-fs route: %+v key %q", r, r.Key())
	}
	// A missing source is skipped for one that exists.
	if r2 := LocalRoute([]string{filepath.Join(dir, "gone"), src}, dir); r2.Key() != r.Key() {
		t.Fatalf("missing first source: %q", r2.Key())
	}
	// Another filesystem: /dev/shm (tmpfs) when the temp dir is not on it.
	shm, err := fsops.FSOf("/dev/shm")
	if err != nil || shm.Dev == fs.Dev {
		t.Logf("no second filesystem to compare with (%v); cross-fs part not checked", err)
		return
	}
	x := LocalRoute([]string{src}, "/dev/shm/syq-tuner-test-none")
	if x.SameFS || x.Dst != shm.Type || !strings.HasPrefix(x.Key(), "local "+fs.Type+" -> ") {
		t.Fatalf("cross-fs route: %+v key %q", x, x.Key())
	}
}

func TestRouteKeys(t *testing.T) {
	for _, c := range []struct {
		r    Route
		want string
	}{
		{Route{Kind: "local", Src: "ext4", Dst: "ext4", SameFS: true}, "local same-fs ext4"},
		{Route{Kind: "local", Src: "nfs", Dst: "xfs", Network: true}, "local nfs -> xfs"},
		{Route{Kind: "push", Src: "ext4", Peer: "me@host 10.0.0.1->10.0.0.2"}, "push me@host 10.0.0.1->10.0.0.2 ext4"},
		{Route{Kind: "pull", Dst: "btrfs", Peer: "host"}, "pull host btrfs"},
	} {
		if got := c.r.Key(); got != c.want {
			t.Errorf("key of %+v: %q, want %q", c.r, got, c.want)
		}
	}
	if s := (Route{Kind: "local", Src: "nfs", Dst: "xfs", Network: true}).String(); !strings.Contains(s, "network") {
		t.Errorf("a network route does not say so: %q", s)
	}
}
