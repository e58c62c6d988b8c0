package tuner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"syq/fsops"
)

// cacheVersion is the cache file's format. A file of another version is
// ignored and rewritten: it only ever holds hints.
const cacheVersion = 1

// maxRoutes bounds the cache; beyond it the least recently used routes go.
const maxRoutes = 64

// maxCacheBytes bounds what is read: a larger file is not a tuner cache.
const maxCacheBytes = 1 << 20

// maxSure is the confidence ceiling: that many runs in a row ended on the
// same setting.
const maxSure = 5

// Entry is what the cache remembers about one route.
type Entry struct {
	Workers     int     `json:"workers"`       // the setting that gave the best measured rate
	Dir         int     `json:"dir,omitempty"` // +1/-1: the next run probes this way first
	Sure        int     `json:"sure"`          // runs in a row that ended on Workers (1..maxSure)
	Runs        int     `json:"runs"`          // runs recorded
	Rate        float64 `json:"rate"`          // the last run's rate in work units per second
	FilesPerSec float64 `json:"files_per_sec"` // the last run's files per second
	BytesPerSec float64 `json:"bytes_per_sec"` // ... and bytes per second
	Updated     int64   `json:"updated"`       // unix seconds
}

// Cache is the tuner's memory across runs, one entry per route.
type Cache struct {
	Version int               `json:"version"`
	Routes  map[string]*Entry `json:"routes"`
	// Rails: the rail counts of remote routes (rails.go).
	Rails map[string]*RailEntry `json:"rails,omitempty"`
}

// CachePath is ${XDG_CACHE_HOME:-~/.cache}/syq/tuner.json.
func CachePath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("tuner cache: %w", err)
	}
	return filepath.Join(dir, "syq", "tuner.json"), nil
}

// errNoCache is a cache file that does not exist yet: not worth a word.
var errNoCache = errors.New("no cache file yet")

// LoadCache reads the cache at path. It always returns a usable cache;
// the error says why it is empty (missing, unreadable, corrupt, another
// version), for a debug line.
func LoadCache(path string) (*Cache, error) {
	empty := &Cache{Version: cacheVersion, Routes: map[string]*Entry{}}
	b, err := fsops.ReadFileMax(path, maxCacheBytes)
	if err != nil {
		if os.IsNotExist(err) {
			return empty, errNoCache
		}
		return empty, fmt.Errorf("tuner cache %s unreadable, ignored: %w", path, err)
	}
	var c Cache
	if err := json.Unmarshal(b, &c); err != nil {
		return empty, fmt.Errorf("tuner cache %s corrupt, ignored: %w", path, err)
	}
	if c.Version != cacheVersion {
		return empty, fmt.Errorf("tuner cache %s has format version %d, not %d; ignored", path, c.Version, cacheVersion)
	}
	for k, e := range c.Routes {
		if e == nil || !e.valid() {
			delete(c.Routes, k) // a damaged entry is dropped, the rest kept
		}
	}
	if c.Routes == nil {
		c.Routes = map[string]*Entry{}
	}
	for k, e := range c.Rails {
		if e == nil || !e.valid() {
			delete(c.Rails, k)
		}
	}
	return &c, nil
}

func (e *Entry) valid() bool {
	return e.Workers >= 1 && e.Workers <= MaxWorkers && e.Sure >= 0 && e.Sure <= maxSure &&
		e.Runs >= 0 && e.Rate >= 0 && e.Dir >= -1 && e.Dir <= 1
}

// Save writes the cache atomically (temporary file and rename in the same
// directory): a reader never sees half a file, and of two runs saving at
// once the last one wins. Routes beyond maxRoutes are dropped, least
// recently updated first.
func (c *Cache) Save(path string) error {
	c.Version = cacheVersion
	if len(c.Routes) > maxRoutes {
		keys := make([]string, 0, len(c.Routes))
		for k := range c.Routes {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := c.Routes[keys[i]], c.Routes[keys[j]]
			if a.Updated != b.Updated {
				return a.Updated < b.Updated
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys[:len(keys)-maxRoutes] {
			delete(c.Routes, k)
		}
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := fsops.WriteFileAtomic(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("tuner cache %s: %w", path, err)
	}
	return nil
}

// Record folds one finished run into the route's entry: the setting the
// run found best, where its search was heading, and its rate.
func (c *Cache) Record(key string, r Result, now time.Time) {
	e := c.Routes[key]
	if e == nil {
		e = &Entry{}
		c.Routes[key] = e
	}
	if e.Workers == r.Workers {
		e.Sure = min(e.Sure+1, maxSure)
	} else {
		e.Workers, e.Sure = r.Workers, 1
	}
	e.Dir = r.Dir
	e.Runs++
	e.Rate, e.FilesPerSec, e.BytesPerSec = r.Rate, r.FilesPerSec, r.BytesPerSec
	e.Updated = now.Unix()
}

// Show prints the cache at path for people.
func Show(w io.Writer, path string) error {
	c, err := LoadCache(path)
	switch {
	case errors.Is(err, errNoCache):
		fmt.Fprintf(w, "tuner cache %s: empty (no run has recorded a route yet)\n", path)
		return nil
	case err != nil:
		fmt.Fprintf(w, "%v\n", err)
		return nil
	}
	if len(c.Routes) == 0 {
		fmt.Fprintf(w, "tuner cache %s: empty\n", path)
		return nil
	}
	fmt.Fprintf(w, "tuner cache %s: %d route(s)\n", path, len(c.Routes))
	keys, width := sortedKeys(c.Routes, len("ROUTE"))
	fmt.Fprintf(w, "%-*s  %7s  %5s  %4s  %10s  %10s  %s\n", width, "ROUTE", "WORKERS", "SURE", "RUNS", "FILES/S", "MB/S", "UPDATED")
	for _, k := range keys {
		e := c.Routes[k]
		fmt.Fprintf(w, "%-*s  %7d  %3d/%d  %4d  %10.0f  %10.1f  %s\n", width, k, e.Workers, e.Sure, maxSure, e.Runs,
			e.FilesPerSec, e.BytesPerSec/1e6, time.Unix(e.Updated, 0).UTC().Format("2006-01-02 15:04:05Z"))
	}
	return nil
}

// Reset removes the cache at path.
func Reset(path string) error {
	if err := fsops.RemoveFile(path); err != nil {
		return fmt.Errorf("tuner cache %s: %w", path, err)
	}
	return nil
}

// sortedKeys gives a table's route keys in order and the width of its
// first column: the longest key, at least header wide.
func sortedKeys[V any](m map[string]V, header int) ([]string, int) {
	keys := make([]string, 0, len(m))
	width := header
	for k := range m {
		keys = append(keys, k)
		width = max(width, len(k))
	}
	sort.Strings(keys)
	return keys, width
}
