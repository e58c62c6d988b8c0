package main

// Differential scenarios for differences the random remote arm found
// (TestDiffRandom's push and pull); like every diffScenario they run
// locally and, through TestDiffRemote, as a push and as a pull.

var randRemoteScenarios = []diffScenario{
	// Without -p a pulled file's %B is the mode it gets here (rsync's
	// receiving process shows it after it set it): the umask's for a new
	// file, no set-id bits, the old file's own for one replaced; pushed
	// or local, the sender's.
	{name: "out-format-B-no-perms", fx: fxBasic, args: dtArgs("-rlt", "--out-format=%o %n %l %B", "src/", "dst/"), stdout: true, sorted: true},
	{name: "out-format-B-no-perms-existing", fx: fxBasic, pre: preAttrsOnly, args: dtArgs("-rltI", "-E", "--out-format=%o %n %B", "src/", "dst/"), stdout: true, sorted: true},
	// --append-verify whose old part differs sends the file again and
	// lists it again: %B there too is the mode the file gets.
	{name: "out-format-B-no-perms-append-verify", fx: fxBasic, pre: preUpdate, args: dtArgs("-a", "--no-perms", "--append-verify", "--out-format=%o %n %l %B", "src/", "dst/"), stdout: true, sorted: true},
	// A pulling rsync's generator lists what it deletes through the
	// client's --chmod, so %B of a deletion shows the mode so changed.
	{name: "out-format-B-delete-chmod", fx: fxBasic, pre: preExtras, args: dtArgs("-a", "--delete", "--out-format=%o %n %B", "--chmod=u+rwx,go-w", "src/", "dst/"), stdout: true, sorted: true},
}

func init() { diffScenarios = append(diffScenarios, randRemoteScenarios...) }
