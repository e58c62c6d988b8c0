package fsops

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFSOf(t *testing.T) {
	dir := t.TempDir()
	fs, err := FSOf(dir)
	if err != nil || fs.Type == "" || fs.Dev == 0 {
		t.Fatalf("FSOf(%s) = %+v, %v", dir, fs, err)
	}
	// A path that does not exist yet is judged by its nearest ancestor.
	deep, err := FSOf(filepath.Join(dir, "a", "b", "c"))
	if err != nil || deep != fs {
		t.Fatalf("missing path: %+v, %v; want %+v", deep, err, fs)
	}
	// A file's own ancestor chain: a path through a regular file.
	f := filepath.Join(dir, "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := FSOf(filepath.Join(f, "x")); err != nil || got != fs {
		t.Fatalf("path under a file: %+v, %v", got, err)
	}
	if shm, err := FSOf("/dev/shm"); err == nil && (shm.Type != "tmpfs" || shm.Network) {
		t.Errorf("/dev/shm: %+v", shm)
	}
	if p, err := FSOf("/proc"); err == nil && p.Type != "0x9fa0" {
		t.Errorf("/proc (an unlisted type) named %q", p.Type)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d", "f.json")
	for _, data := range []string{"first", "second, longer"} {
		if err := WriteFileAtomic(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFileMax(path, 100)
		if err != nil || string(got) != data {
			t.Fatalf("read back %q, %v; want %q", got, err, data)
		}
	}
	if _, err := ReadFileMax(path, 3); err == nil {
		t.Fatal("ReadFileMax read past its limit")
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("left beside the file: %v", ents)
	}
	// A directory in the way: an error, nothing left behind.
	if err := WriteFileAtomic(filepath.Dir(path), []byte("x"), 0o600); err == nil {
		t.Fatal("replaced a directory")
	}
	if err := RemoveFile(path); err != nil {
		t.Fatal(err)
	}
	if err := RemoveFile(path); err != nil {
		t.Fatalf("removing a missing file: %v", err)
	}
}
