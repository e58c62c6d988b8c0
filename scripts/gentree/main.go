// Command gentree writes a deterministic benchmark tree (incompressible
// bytes, or log lines for the text kind).
//
//	go run ./scripts/gentree -kind small -n 20000 DIR        # 20,000 x 4 KiB in 256 dirs
//	go run ./scripts/gentree -kind large -size 2G DIR
//	go run ./scripts/gentree -kind many-large -k 8 -size 256M DIR
//	go run ./scripts/gentree -kind mixed -n 10000 -size 32M DIR
//	go run ./scripts/gentree -kind empty -n 1000000 -dirs 1000 DIR
//	go run ./scripts/gentree -kind text -k 16 -size 64M DIR         # compressible log lines
//
// The same flags always give the same tree (names, sizes, bytes, modes,
// links, mtimes); -seed picks another one. DIR must be missing or empty.
package main

import (
	"flag"
	"fmt"
	"os"

	"syq/scripts/gentree/gen"
)

func main() {
	var (
		kind     = flag.String("kind", "small", "small | large | many-large | mixed | empty | text")
		n        = flag.Int("n", 20000, "number of files (small, mixed, empty)")
		dirs     = flag.Int("dirs", 0, "number of directories (small: 256, empty: 1000)")
		fileSize = flag.String("file-size", "4K", "bytes per file for small")
		size     = flag.String("size", "0", "bytes per file (large, many-large, text); largest file (mixed, default 64M)")
		k        = flag.Int("k", 8, "number of files for many-large and text")
		seed     = flag.Uint64("seed", 1, "PRNG seed")
		workers  = flag.Int("workers", 0, "writer goroutines (0 = GOMAXPROCS); does not change the tree")
	)
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: gentree [flags] DIR\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	fs, err := gen.ParseBytes(*fileSize)
	if err != nil {
		fatal(err)
	}
	sz, err := gen.ParseBytes(*size)
	if err != nil {
		fatal(err)
	}
	spec := gen.Spec{Kind: *kind, N: *n, Dirs: *dirs, FileSize: fs, Size: sz, K: *k, Seed: *seed, Workers: *workers}
	res, err := gen.Generate(flag.Arg(0), spec)
	if err != nil {
		fatal(err)
	}
	fmt.Printf("%s: %d files (%d hard-link names), %d dirs, %d symlinks, %d bytes in %.2fs\n",
		spec.Describe(), res.Files, res.HardLinks, res.Dirs, res.Symlinks, res.Bytes, res.Elapsed.Seconds())
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "gentree:", err)
	os.Exit(1)
}
