package main

// Differential scenarios for -z and its options. Locally rsync accepts
// them and copies without compressing, and so does syq; TestDiffRemote
// runs them again over ssh, where both tools compress.

import (
	"fmt"
	"strings"
)

// fxCompress: text that compresses well, random bytes that do not, an
// empty file, and a compressible file whose suffix is on rsync's default
// --skip-compress list.
func fxCompress(b *fixtureBuilder) {
	b.dir("src")
	var log strings.Builder
	for i := 0; log.Len() < 600_000; i++ {
		fmt.Fprintf(&log, "Nov 30 05:%02d:%02d host app[%d]: request %d served in %d ms\n", i/60%60, i%60, 100+i%9, i, i%300)
	}
	b.text("src/app.log", log.String())
	b.file("src/noise.bin", 300_000)
	b.file("src/empty", 0)
	b.text("src/photo.JPG", strings.Repeat("not really a jpeg ", 20_000))
	b.text("src/sub/small.txt", "small\n")
	b.file("src/sub/edge", 256<<10) // exactly one data chunk
}

var compressScenarios = []diffScenario{
	{name: "z-archive", fx: fxCompress, args: dtArgs("-az", "src/", "dst/")},
	{name: "z-many-files", fx: fxMany, args: dtArgs("-az", "src/", "dst/")},
	{name: "z-big", fx: fxBig, args: dtArgs("-az", "src/", "dst/")},
	{name: "z-zz-old-new", fx: fxCompress, args: dtArgs("-azz", "--old-compress", "--new-compress", "src/", "dst/")},
	{name: "z-zc-zstd-zl", fx: fxCompress, args: dtArgs("-a", "--zc=ZSTD", "--zl=19", "src/", "dst/")},
	{name: "z-zlib-level", fx: fxCompress, args: dtArgs("-a", "--compress-choice=zlib", "--compress-level=9", "src/", "dst/")},
	{name: "z-zlib-off", fx: fxCompress, args: dtArgs("-az", "--zc=zlib", "--zl=0", "src/", "dst/")},
	{name: "z-level-implies-z", fx: fxCompress, args: dtArgs("-a", "--zl=-5", "src/", "dst/")},
	{name: "z-skip-compress", fx: fxCompress, args: dtArgs("-az", "--skip-compress=log/t[xy]t", "src/", "dst/")},
	// --debug=NSTR names the checksum and compressor chosen, and whether
	// they were negotiated or named by an option.
	{name: "nstr-negotiated", fx: fxCompress, args: dtArgs("-az", "--debug=NSTR", "src/", "dst/"), stdout: true},
	{name: "nstr-choice-level", fx: fxCompress, args: dtArgs("-a", "--zc=ZSTD", "--zl=5", "--debug=nstr", "src/", "dst/"), stdout: true},
	{name: "nstr-zlib", fx: fxCompress, args: dtArgs("-azz", "--debug=NSTR1", "src/", "dst/"), stdout: true},
	{name: "nstr-checksum", fx: fxCompress, args: dtArgs("-ac", "--cc=md5", "--debug=NSTR", "src/", "dst/"), stdout: true},
	{name: "z-skip-compress-empty", fx: fxCompress, args: dtArgs("-az", "--skip-compress=", "src/", "dst/")},
	{name: "z-choice-none", fx: fxCompress, args: dtArgs("-az", "--zc=none", "src/", "dst/")},
	{name: "z-delete-update", fx: fxCompress, pre: func(b *fixtureBuilder) {
		b.text("dst/app.log", "old")
		b.text("dst/stale", "x")
		b.dir("dst")
	}, args: dtArgs("-az", "--delete", "src/", "dst/")},
	{name: "z-unknown-choice", fx: fxPlain, args: dtArgs("-az", "--zc=foo", "src/", "dst/"), code: 4},
	{name: "z-empty-choice", fx: fxPlain, args: dtArgs("-a", "--compress-choice=", "src/", "dst/"), code: 4},
	{name: "z-unknown-choice-then-no-z", fx: fxPlain, args: dtArgs("-a", "--zc=foo", "--no-z", "src/", "dst/")},
	{name: "z-level-not-a-number", fx: fxPlain, args: dtArgs("-az", "--zl=fast", "src/", "dst/"), code: 1},
	{name: "z-level-too-large", fx: fxPlain, args: dtArgs("-az", "--compress-level=99999999999", "src/", "dst/"), code: 1},
}

func init() { diffScenarios = append(diffScenarios, compressScenarios...) }
