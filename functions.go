package voting

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/gomodule/redigo/redis"
)

// The store's scripts run as one Redis Functions library where the server
// has Functions (Redis 7), and as EVALSHA scripts elsewhere (miniredis,
// Redis 6, a user that may not run FUNCTION LOAD or FCALL).
//
// A script sent with EVALSHA re-runs its whole chunk on every call:
// lib.lua's helpers are created again each time, which costs more than
// most calls' own work. A library is run once, when FUNCTION LOAD loads
// it, and each FCALL calls a function it registered; the helpers are
// created once per server. So both forms are generated here, in Go, from
// the sources as they are (lib.lua and lua/<name>.lua):
//
//   - the library is lib.lua followed by each script's body wrapped as a
//     function of (KEYS, ARGV), which the body reads as it reads them in
//     a script; read scripts are flagged no-writes, so FCALL_RO runs them
//     and a replica may, and those that only remove or renew a TTL
//     allow-oom, so a full Redis runs them as it runs them as scripts;
//   - each EVALSHA script is its body after only the lib.lua helpers it
//     uses, found by name (libParts), so it re-creates no more than those.
//
// The library is named after its content, voting_<hash>, as are its
// functions, so stores of two versions of this package can share a
// server during a rolling deploy, each calling its own code.
//
// The library is loaded when a call finds it missing: on a new server,
// after FUNCTION FLUSH, or after a restart without persistence, as an
// EVALSHA that gets NOSCRIPT falls back to EVAL. Functions persist in
// RDB and AOF and replicate to replicas. On a cluster the connection is
// bound to the store's slot (getConn), so the library reaches the node
// that holds the store's keys.

// readOnlyScripts are the scripts that write nothing: their functions
// are flagged no-writes.
var readOnlyScripts = map[string]bool{
	"articles": true, "page": true, "top_since": true, "votes": true, "count": true, "groups": true,
	"group_read": true, "karma": true, "top_users": true,
}

// allowOOMScripts are the scripts that only remove (Delete, Prune, Drop,
// RemoveFromGroups, the pages' cleanup of gone articles) or renew a
// TTL, and the group page, whose warm read renews its cache's TTL: their
// functions are flagged allow-oom. Redis refuses a function without it
// or no-writes, whole, on a server at its maxmemory under noeviction,
// where it runs the same code as a script (EVALSHA) until a command that
// may grow memory: without the flag Delete, Prune and Drop, the calls
// that free memory, and the reads that write a little, would fail on a
// full Redis 7 and pass on one without Functions. A cold group page's
// build step may so add its few hundred members past maxmemory.
var allowOOMScripts = map[string]bool{
	"delete": true, "prune": true, "drop": true, "group_remove": true,
	"user_page": true, "group_page": true, "group_renew": true,
}

// library is the store's scripts as one Functions library.
type library struct {
	name   string // voting_<hash of the content>
	source string // what FUNCTION LOAD takes
}

// functionName returns the name of script name's function in a library
// called lib.
func functionName(lib, name string) string { return lib + "_" + name }

// newLibrary returns the library of scripts, whose sources are bodies
// (without lib.lua).
func newLibrary(scripts []script) library {
	var body strings.Builder
	body.WriteString(libLua)
	for _, sc := range scripts {
		flags := "{}"
		switch {
		case sc.readOnly:
			flags = "{'no-writes'}"
		case allowOOMScripts[sc.name]:
			flags = "{'allow-oom'}"
		}
		// The marker stands for the library's name, which is the hash of
		// all of this.
		body.WriteString("\nredis.register_function{function_name = '" + functionName("\x00", sc.name) +
			"', flags = " + flags + ", callback = function(KEYS, ARGV)\n")
		body.WriteString(sc.body)
		body.WriteString("\nend}\n")
	}
	sum := sha1.Sum([]byte(body.String()))
	name := "voting_" + hex.EncodeToString(sum[:8])
	return library{name: name, source: "#!lua name=" + name + "\n" + strings.ReplaceAll(body.String(), "\x00", name)}
}

// libPart is one top-level statement of lib.lua (a helper or a constant)
// with the comment above it, and the names it defines.
type libPart struct {
	names []string
	text  string
}

var (
	luaComment = regexp.MustCompile(`--[^\n]*`)
	luaName    = regexp.MustCompile(`[.:]?[A-Za-z_][A-Za-z0-9_]*`)
	luaLocal   = regexp.MustCompile(`^local\s+(?:function\s+([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_, ]*?)\s*=)`)
)

// libParts splits lib, lib.lua's source, into its top-level statements,
// which are local definitions: each starts at a line that starts with
// "local", and takes the comment lines above it. Any other line that is
// not a comment or blank (indented, or "end", "}") continues the
// statement above.
func libParts(lib string) []libPart {
	var parts []libPart
	var pending []string // comment and blank lines not yet in a part
	for _, line := range strings.SplitAfter(lib, "\n") {
		m := luaLocal.FindStringSubmatch(line)
		if m == nil {
			if len(parts) > 0 && strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "--") {
				parts[len(parts)-1].text += strings.Join(pending, "") + line // the body of the last part
				pending = nil
			} else {
				pending = append(pending, line)
			}
			continue
		}
		p := libPart{text: strings.Join(pending, "") + line}
		pending = nil
		if m[1] != "" {
			p.names = []string{m[1]}
		} else {
			for _, n := range strings.Split(m[2], ",") {
				p.names = append(p.names, strings.TrimSpace(n))
			}
		}
		parts = append(parts, p)
	}
	return parts
}

// usedNames returns the names code uses, its comments left out; field
// names (after a dot or colon) are not names.
func usedNames(code string) map[string]bool {
	used := map[string]bool{}
	for _, n := range luaName.FindAllString(luaComment.ReplaceAllString(code, ""), -1) {
		if n[0] != '.' && n[0] != ':' {
			used[n] = true
		}
	}
	return used
}

// trimLib returns the parts of lib.lua that body uses, directly or
// through other parts, in their order in lib.lua.
func trimLib(parts []libPart, body string) string {
	used := usedNames(body)
	in := make([]bool, len(parts))
	for changed := true; changed; {
		changed = false
		for i := len(parts) - 1; i >= 0; i-- {
			if in[i] {
				continue
			}
			for _, n := range parts[i].names {
				if used[n] {
					in[i], changed = true, true
					for u := range usedNames(parts[i].text) {
						used[u] = true
					}
					break
				}
			}
		}
	}
	var b strings.Builder
	for i, p := range parts {
		if in[i] {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// functions is a store's knowledge of whether its server runs the
// library: off once a server refused Functions (no FCALL, or FUNCTION
// LOAD or FCALL not allowed), from which point the store sends scripts.
type functions struct {
	off atomic.Bool
}

// exec runs sc on c under ctx: as FCALL of its function, FCALL_RO when
// it writes nothing, where the server has Functions, loading the library
// when it is missing; as a script (runScript) where it has not. replica
// says c is the read pool's.
func (s *Store) exec(ctx context.Context, c redis.Conn, sc script, replica bool, keysAndArgs []interface{}) (interface{}, error) {
	if s.funcs.off.Load() {
		return runScript(ctx, c, sc, replica, keysAndArgs)
	}
	cmd := "FCALL"
	if sc.readOnly {
		cmd = "FCALL_RO"
	}
	args := make([]interface{}, 0, 2+len(keysAndArgs))
	args = append(args, *sc.function, sc.keyCount)
	args = append(args, keysAndArgs...)
	reply, err := do(ctx, c, cmd, args)
	switch {
	case isRefusal(err):
		s.funcs.off.Store(true)
		return runScript(ctx, c, sc, replica, keysAndArgs)
	case !isNoFunction(err):
		return reply, err
	}
	// The library is missing: load it and call again, in one round trip.
	// Another client may load it first ("already exists"); a load that
	// fails otherwise, or a flush between the two, leaves the call to the
	// script.
	if err := c.Send("FUNCTION", "LOAD", lib.source); err != nil {
		return nil, contextError(ctx, err)
	}
	if err := c.Send(cmd, args...); err != nil {
		return nil, contextError(ctx, err)
	}
	if err := c.Flush(); err != nil {
		return nil, contextError(ctx, err)
	}
	_, loadErr := receive(ctx, c)
	reply, err = receive(ctx, c)
	if loadErr != nil && !isRedisError(loadErr) {
		return nil, contextError(ctx, loadErr)
	}
	if isRefusal(loadErr) || isRefusal(err) {
		s.funcs.off.Store(true)
	}
	if isNoFunction(err) || isRefusal(err) {
		return runScript(ctx, c, sc, replica, keysAndArgs)
	}
	return reply, contextError(ctx, err)
}

// runScript runs sc as a script: EVALSHA_RO on a connection of the read
// pool (runRO), EVALSHA on the primary (run).
func runScript(ctx context.Context, c redis.Conn, sc script, replica bool, keysAndArgs []interface{}) (interface{}, error) {
	if replica {
		return runRO(ctx, c, sc, keysAndArgs)
	}
	return run(ctx, c, sc.Script, keysAndArgs)
}

// do sends one command on c under ctx, which redigo watches only where
// it can be done, as run does.
func do(ctx context.Context, c redis.Conn, cmd string, args []interface{}) (interface{}, error) {
	if cc, ok := c.(redis.ConnWithContext); ok && ctx.Done() != nil {
		reply, err := cc.DoContext(ctx, cmd, args...)
		return reply, contextError(ctx, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.Do(cmd, args...)
}

func isRedisError(err error) bool {
	_, ok := err.(redis.Error)
	return ok
}

// isNoFunction reports whether err says the function called is not on
// the server.
func isNoFunction(err error) bool {
	e, ok := err.(redis.Error)
	return ok && strings.HasPrefix(string(e), "ERR Function not found")
}

// isRefusal reports whether err says the server will not run Functions
// for this store: it has no FCALL or FUNCTION (miniredis, Redis before
// 7), or the user may not run them (ACL).
func isRefusal(err error) bool {
	e, ok := err.(redis.Error)
	if !ok {
		return false
	}
	msg := strings.ToLower(string(e))
	switch {
	case strings.HasPrefix(msg, "err unknown command"), strings.HasPrefix(msg, "err unknown subcommand"):
		return true
	case strings.HasPrefix(msg, "noperm"):
		return strings.Contains(msg, "'fcall") || strings.Contains(msg, "'function")
	}
	return false
}

var (
	// registry is every script newScript made, in the order it made them.
	registry []script
	// lib is the library of the scripts of registry.
	lib library
)

func init() {
	lib = newLibrary(registry)
	for _, sc := range registry {
		*sc.function = functionName(lib.name, sc.name)
	}
}
