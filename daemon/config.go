// Package daemon owns rsync's daemon: the rsyncd.conf file (its global
// section and [module] sections), what a module allows (hosts, users
// and their passwords, refused options, read-only and write-only
// modules, the daemon's own filter rules), and both halves of the
// conversation before a transfer: the server's session (greeting,
// module list, authentication, the module's confinement, its pre- and
// post-xfer exec and transfer log, the listening daemon) and the
// client's (greeting, password response, arguments). It knows no byte
// layout (wire speaks the greeting) and makes no system calls (fsops
// does); the transfer itself is the Server's Transfer, which cmd/syq
// builds from the helper.
package daemon

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"syq/fsops"
)

// DefaultConfig is where the daemon reads its configuration unless
// --config names another file.
const DefaultConfig = "/etc/rsyncd.conf"

// DefaultLockFile is the "lock file" of a module that names none.
const DefaultLockFile = "/var/run/rsyncd.lock"

// DefaultLogFormat is the "log format" of a module that names none.
const DefaultLogFormat = "%o %h [%a] %m (%u) %f %l"

// kind is the type of a parameter's value.
type kind int

const (
	kString kind = iota
	kBool
	kBool3 // yes, no, or unset
	kInt
)

// param describes one rsyncd.conf parameter rsync knows.
type param struct {
	label  string // the name as rsync's manual spells it
	global bool   // allowed only in the global section
	kind   kind
	def    string // the default value ("" for none)
	// todo: syq knows the parameter but does not implement it; a
	// module that sets it (to anything but its default) is refused.
	todo bool
}

// params is rsync's parameter table (its daemon-parm.txt), by key.
var params = func() map[string]*param {
	list := []param{
		{label: "address", global: true}, {label: "bind address", global: true},
		{label: "daemon chroot", global: true, todo: true},
		{label: "daemon gid", global: true, todo: true},
		{label: "daemon uid", global: true, todo: true},
		{label: "motd file", global: true},
		{label: "pid file", global: true},
		{label: "proxy protocol hosts", global: true, todo: true},
		{label: "socket options", global: true},
		{label: "listen backlog", global: true, kind: kInt, def: "5"},
		{label: "port", global: true, kind: kInt, def: "0"}, {label: "rsync port", global: true, kind: kInt, def: "0"},
		{label: "proxy protocol", global: true, kind: kBool, def: "no", todo: true},

		{label: "auth digest", todo: true},
		{label: "auth users"},
		{label: "charset", todo: true},
		{label: "comment"},
		{label: "dont compress"},
		{label: "early exec"},
		{label: "exclude"},
		{label: "exclude from"},
		{label: "filter"},
		{label: "gid"},
		{label: "hosts allow"},
		{label: "hosts deny"},
		{label: "include"},
		{label: "include from"},
		{label: "incoming chmod"},
		{label: "lock file", def: DefaultLockFile},
		{label: "log file"},
		{label: "log format", def: DefaultLogFormat},
		{label: "name"},
		{label: "name converter"},
		{label: "outgoing chmod"},
		{label: "post-xfer exec"},
		{label: "pre-xfer exec"},
		{label: "refuse options"},
		{label: "secrets file"},
		{label: "syslog tag", def: "rsyncd"},
		{label: "uid"},
		{label: "path"},
		{label: "temp dir"},
		{label: "max connections", kind: kInt, def: "0"},
		{label: "max verbosity", kind: kInt, def: "1"},
		{label: "timeout", kind: kInt, def: "0"},
		{label: "syslog facility"},
		{label: "fake super", kind: kBool, def: "no"},
		{label: "forward lookup", kind: kBool, def: "yes"},
		{label: "ignore errors", kind: kBool, def: "no"},
		{label: "ignore nonreadable", kind: kBool, def: "no", todo: true},
		{label: "insecure links", kind: kBool, def: "no"},
		{label: "list", kind: kBool, def: "yes"},
		{label: "read only", kind: kBool, def: "yes"},
		{label: "reverse lookup", kind: kBool, def: "yes"},
		{label: "strict modes", kind: kBool, def: "yes"},
		{label: "transfer logging", kind: kBool, def: "no"},
		{label: "write only", kind: kBool, def: "no"},
		{label: "munge symlinks", kind: kBool3},
		{label: "numeric ids", kind: kBool3},
		{label: "open noatime", kind: kBool3},
		{label: "use chroot", kind: kBool3},
	}
	m := make(map[string]*param, len(list))
	for i := range list {
		m[key(list[i].label)] = &list[i]
	}
	return m
}()

// aliases name the same setting twice, as in rsync.
var aliases = map[string]string{key("bind address"): key("address"), key("rsync port"): key("port")}

// key folds a parameter name the way rsync compares them: letters in any
// case, white space ignored.
func key(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r != ' ' && r != '\t' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Config is a parsed rsyncd.conf.
type Config struct {
	Path    string
	global  map[string]string
	Modules []*Module
	// Notes are what rsync logs about the file (unknown parameters,
	// badly formed lines); the daemon writes them to its log.
	Notes []string
}

// Module is one [module] section. Its parameters not set in the section
// come from the global section, then from rsync's defaults.
type Module struct {
	Name   string
	params map[string]string
	cfg    *Config
}

// Parse reads the configuration file at path. Parameters given on the
// daemon's command line (--dparam NAME=VALUE) are set in the global
// section after the file, and so win over it.
func Parse(path string, dparams []string) (*Config, error) {
	c := &Config{Path: path, global: map[string]string{}}
	if err := c.readFile(path, 0, true); err != nil {
		return nil, err
	}
	for _, dp := range dparams {
		name, value, ok := strings.Cut(dp, "=")
		if !ok {
			return nil, fmt.Errorf("--dparam %q: expected NAME=VALUE", dp)
		}
		if err := c.set(nil, strings.TrimSpace(name), strings.TrimSpace(value)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// ParseText parses configuration text (for tests).
func ParseText(text string) (*Config, error) {
	c := &Config{global: map[string]string{}}
	if err := c.parse(text, "", 0, true); err != nil {
		return nil, err
	}
	return c, nil
}

// maxDepth bounds &include nesting.
const maxDepth = 16

// maxConfigBytes bounds one configuration file.
const maxConfigBytes = 4 << 20

func (c *Config) readFile(path string, depth int, manageGlobals bool) error {
	if depth > maxDepth {
		return fmt.Errorf("%s: &include nested too deeply", path)
	}
	data, err := fsops.ReadFileMax(path, maxConfigBytes)
	if err != nil {
		return fmt.Errorf("failed to open %s: %w", path, err)
	}
	return c.parse(string(data), filepath.Dir(path), depth, manageGlobals)
}

// parse reads rsyncd.conf text: "[name]" starts a module ("[global]"
// returns to the global section), "name = value" sets a parameter, '#'
// and ';' start comment lines, and a line ending in '\' continues on
// the next. "&include FILE|DIR" and "&merge FILE|DIR" read more files.
func (c *Config) parse(text, dir string, depth int, manageGlobals bool) error {
	var cur *Module
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), maxConfigBytes)
	var pending string
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := pending + sc.Text()
		pending = ""
		if strings.HasSuffix(line, "\\") {
			pending = strings.TrimSuffix(line, "\\")
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if t[0] == '[' {
			end := strings.IndexByte(t, ']')
			if end < 0 {
				return fmt.Errorf("%s line %d: badly formed section header %q", c.Path, lineNo, t)
			}
			name := strings.TrimSpace(t[1:end])
			if strings.EqualFold(name, "global") {
				cur = nil
				continue
			}
			if name == "" || strings.ContainsAny(name, "/]") {
				return fmt.Errorf("%s line %d: bad module name %q", c.Path, lineNo, name)
			}
			cur = c.module(name)
			continue
		}
		name, value, ok := strings.Cut(t, "=")
		if !ok {
			if name, arg, ok := strings.Cut(t, " "); ok && (strings.EqualFold(name, "&include") || strings.EqualFold(name, "&merge")) {
				if err := c.include(strings.TrimSpace(arg), dir, depth, strings.EqualFold(name, "&include")); err != nil {
					return err
				}
				continue
			}
			c.Notes = append(c.Notes, fmt.Sprintf("Ignoring badly formed line in configuration file: %s", t))
			continue
		}
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if strings.EqualFold(name, "&include") || strings.EqualFold(name, "&merge") {
			if err := c.include(value, dir, depth, strings.EqualFold(name, "&include")); err != nil {
				return err
			}
			continue
		}
		if err := c.set(cur, name, value); err != nil {
			return fmt.Errorf("%s line %d: %w", c.Path, lineNo, err)
		}
	}
	return sc.Err()
}

// include reads another file, or every file of a directory whose name
// ends in ".conf", in name order. An included file starts in the global
// section, as in rsync.
func (c *Config) include(path, dir string, depth int, inc bool) error {
	if path == "" {
		return nil
	}
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	st, err := fsops.StatPath(path)
	if err != nil {
		return fmt.Errorf("unable to stat config file %q: %w", path, err)
	}
	if !st.IsDir() {
		return c.readFile(path, depth+1, inc)
	}
	d, err := fsops.OpenDirPath(path)
	if err != nil {
		return fmt.Errorf("unable to open config dir %q: %w", path, err)
	}
	all, err := d.Names()
	d.Close()
	if err != nil {
		return fmt.Errorf("unable to read config dir %q: %w", path, err)
	}
	var names []string
	for _, n := range all {
		if strings.HasSuffix(n, ".conf") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if err := c.readFile(filepath.Join(path, n), depth+1, inc); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) module(name string) *Module {
	for _, m := range c.Modules {
		if m.Name == name {
			return m
		}
	}
	m := &Module{Name: name, params: map[string]string{}, cfg: c}
	c.Modules = append(c.Modules, m)
	return m
}

// set records one parameter; m is nil for the global section.
func (c *Config) set(m *Module, name, value string) error {
	k := key(name)
	if a, ok := aliases[k]; ok {
		k = a
	}
	p := params[k]
	if p == nil || strings.HasPrefix(name, "-") {
		c.Notes = append(c.Notes, fmt.Sprintf("IGNORING unknown parameter %q", name))
		return nil
	}
	if m != nil && p.global {
		c.Notes = append(c.Notes, fmt.Sprintf("Global parameter %s found in module section!", name))
		return nil
	}
	switch p.kind {
	case kBool, kBool3:
		if _, ok := parseBool(value, p.kind == kBool3); !ok {
			c.Notes = append(c.Notes, fmt.Sprintf("Badly formed boolean in configuration file: %q.", value))
			return nil
		}
	}
	if m == nil {
		c.global[k] = value
	} else {
		m.params[k] = value
	}
	return nil
}

// parseBool reads rsync's booleans: yes/true/1 and no/false/0, in any
// case; with unset, also "unset" and "-1" (result -1).
func parseBool(v string, unset bool) (int, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "yes", "true", "1":
		return 1, true
	case "no", "false", "0":
		return 0, true
	case "unset", "-1":
		if unset {
			return -1, true
		}
	}
	return 0, false
}

// Global returns a global parameter's value (its default when unset).
func (c *Config) Global(name string) string {
	k := key(name)
	if a, ok := aliases[k]; ok {
		k = a
	}
	if v, ok := c.global[k]; ok {
		return v
	}
	if p := params[k]; p != nil {
		return p.def
	}
	return ""
}

// Module finds a module by name (rsync compares names as it compares
// parameter names).
func (c *Config) Module(name string) *Module {
	for _, m := range c.Modules {
		if key(m.Name) == key(name) {
			return m
		}
	}
	return nil
}

// value returns a parameter's value for the module and whether it was
// set (in the module or the global section).
func (m *Module) value(name string) (string, bool) {
	k := key(name)
	if v, ok := m.params[k]; ok {
		return v, true
	}
	if v, ok := m.cfg.global[k]; ok {
		return v, true
	}
	if p := params[k]; p != nil {
		return p.def, false
	}
	return "", false
}

// String returns a string parameter, %VAR% references expanded from the
// environment as rsync does.
func (m *Module) String(name string) string {
	v, _ := m.value(name)
	return ExpandVars(v)
}

// Bool returns a boolean parameter.
func (m *Module) Bool(name string) bool {
	v, _ := m.value(name)
	b, _ := parseBool(v, false)
	return b == 1
}

// Bool3 returns a yes/no/unset parameter: 1, 0, or -1 when unset.
func (m *Module) Bool3(name string) int {
	v, set := m.value(name)
	if !set {
		return -1
	}
	b, ok := parseBool(v, true)
	if !ok {
		return -1
	}
	return b
}

// Int returns an integer parameter (atoi's reading: leading digits).
func (m *Module) Int(name string) int {
	v, _ := m.value(name)
	return fsops.Atoi(strings.TrimSpace(v))
}

// Unimplemented names the first parameter the module sets that syq
// knows but does not implement; "" when there is none.
func (m *Module) Unimplemented() string {
	var names []string
	for _, src := range []map[string]string{m.params, m.cfg.global} {
		for k, v := range src {
			p := params[k]
			if p == nil || !p.todo {
				continue
			}
			if v == "" || v == p.def || p.kind != kString && !truthy(v) {
				continue
			}
			names = append(names, p.label)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return names[0]
}

func truthy(v string) bool { b, _ := parseBool(v, true); return b == 1 }

// ExpandVars replaces %NAME% with the environment variable NAME, leaving
// the text as it is when no such variable is set (rsync's expand_vars).
func ExpandVars(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b bytes.Buffer
	for {
		i := strings.IndexByte(s, '%')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], '%')
		if j < 0 {
			break
		}
		name := s[i+1 : i+1+j]
		if v, ok := os.LookupEnv(name); ok && name != "" {
			b.WriteString(s[:i])
			b.WriteString(v)
			s = s[i+2+j:]
			continue
		}
		b.WriteString(s[:i+1])
		s = s[i+1:]
	}
	b.WriteString(s)
	return b.String()
}

// Exec returns a shell-command parameter (pre-xfer exec, post-xfer exec)
// with its %VAR% references expanded for the shell that runs it: a
// %RSYNC_*% value (which comes from the client) is quoted for where it
// stands in the command, and one holding a shell metacharacter is an
// error, as in rsync (the hook may be an access check, so it is neither
// run with it nor skipped).
func (m *Module) Exec(name string) (string, error) {
	v, _ := m.value(name)
	return expandShell(v)
}

// shellUnsafe lists the bytes a client's value may not hold in a hook.
const shellUnsafe = "'\"`$\\;&|<>()*?[]# !~{}"

func expandShell(s string) (string, error) {
	const (
		unquoted = iota
		single
		double
	)
	var b strings.Builder
	ctx, escaped := unquoted, false
	for i := 0; i < len(s); {
		c := s[i]
		if c == '%' && i+1 < len(s) && s[i+1] >= 'A' && s[i+1] <= 'Z' {
			if j := strings.IndexByte(s[i+1:], '%'); j >= 0 {
				name := s[i+1 : i+1+j]
				if val, ok := os.LookupEnv(name); ok {
					if strings.HasPrefix(name, "RSYNC_") {
						for _, r := range []byte(val) {
							if strings.IndexByte(shellUnsafe, r) >= 0 || r < 0x20 || r == 0x7f {
								return "", fmt.Errorf("refusing to run shell hook: %%%s%% holds a shell metacharacter", name)
							}
						}
						val = shellQuote(val, ctx == single, ctx == double)
					}
					b.WriteString(val)
					i += j + 2
					continue
				}
			}
		}
		switch {
		case ctx == single:
			if c == '\'' {
				ctx = unquoted
			}
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case ctx == double:
			if c == '"' {
				ctx = unquoted
			}
		case c == '\'':
			ctx = single
		case c == '"':
			ctx = double
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), nil
}

// shellQuote quotes a value for its place in a shell command: inside
// single quotes only a quote needs care; elsewhere the value is wrapped
// in single quotes (and, inside double quotes, also backslash-escaped,
// for a hook that hands the word to a second shell).
func shellQuote(v string, inSingle, inDouble bool) string {
	var b strings.Builder
	if !inSingle {
		b.WriteByte('\'')
	}
	for _, c := range []byte(v) {
		switch {
		case inDouble && strings.IndexByte("\\\"`$", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\'':
			b.WriteString(`'\''`)
		default:
			b.WriteByte(c)
		}
	}
	if !inSingle {
		b.WriteByte('\'')
	}
	return b.String()
}
