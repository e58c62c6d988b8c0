package main

// Differential scenarios for what an older --protocol changes that a
// user sees (rsync's "make check29/check30").

// preOldLink: dst holds every symlink of fxBasic's src pointing
// elsewhere, an extra file, and src's top directory.
func preOldLink(b *fixtureBuilder) {
	b.symlink("dst/link-rel", "elsewhere")
	b.symlink("dst/sub/uplink", "elsewhere")
	b.text("dst/gone", "extra")
	b.text("dst/sub/gone-too", "extra")
	b.dir("dst/sub")
	b.dir("dst")
}

var protocolScenarios = []diffScenario{
	// Before 30 rsync does not recurse incrementally ("building file
	// list ... done"), deletes before the transfer, and counts no
	// created files before 29 and no deleted ones before 31.
	{name: "protocol-29-v-delete-stats", fx: fxBasic, pre: preOldLink, args: dtArgs("-av", "--delete", "--stats", "--protocol=29", "src/", "dst/"), stdout: true},
	{name: "protocol-30-v-delete-stats", fx: fxBasic, pre: preOldLink, args: dtArgs("-av", "--delete", "--stats", "--protocol=30", "src/", "dst/"), stdout: true, sorted: true},
	{name: "protocol-29-delete-after", fx: fxPlain, pre: preAttrOnly, args: dtArgs("-av", "--delete-after", "--protocol=29", "src/", "dst/"), stdout: true},
	// A sending client before 30 shows a symlink's time as 'T'.
	{name: "protocol-29-itemize-links", fx: fxBasic, pre: preOldLink, args: dtArgs("-iplrtc", "--protocol=29", "src/", "dst/"), stdout: true, sorted: true},
	{name: "protocol-30-itemize-links", fx: fxBasic, pre: preOldLink, args: dtArgs("-iplrtc", "--protocol=30", "src/", "dst/"), stdout: true, sorted: true},
	// --append verifies before 30, as --append-verify.
	{name: "protocol-29-append", fx: fxBasic, pre: preAppend, args: dtArgs("-ai", "--append", "--protocol=29", "src/", "dst/"), stdout: true, sorted: true},
	// No checksum is negotiated before 31: %C shows blanks before 30
	// (rsync's own MD4); at 30 MD5 (TestOutFormatSumProtocol30).
	{name: "protocol-29-out-format-sum", fx: fxPlain, args: dtArgs("-a", "--out-format=%n|%C", "--protocol=29", "src/", "dst/"), stdout: true, sorted: true},
	// --update compares whole seconds: a destination file changed later
	// in the same second is not newer (whole-second times before 31
	// made syq say it was; so did nanoseconds at any protocol).
	{name: "update-same-second", fx: fxPlain, pre: preSubSecond, args: dtArgs("-aii", "--update", "--info=skip", "src/", "dst/"), stdout: true, sorted: true},
	{name: "update-same-second-protocol-29", fx: fxPlain, pre: preSubSecond, args: dtArgs("-aii", "--update", "--info=skip", "--protocol=29", "src/", "dst/"), stdout: true, sorted: true},
	{name: "update-modify-window-ns", fx: fxPlain, pre: preSubSecond, args: dtArgs("-aii", "--update", "--info=skip", "--modify-window=-1", "src/", "dst/"), stdout: true, sorted: true},
}

func init() { diffScenarios = append(diffScenarios, protocolScenarios...) }
