package voting

import (
	"regexp"
	"strings"
	"testing"
)

// readOnlyCount is how many scripts write nothing (registry's, which
// TestScriptTable holds to be scriptTable's).
func readOnlyCount() int {
	return countIf(registry, func(sc script) bool { return sc.readOnly })
}

// TestScriptTable: every script is in scriptTable and every entry of it
// is a script; each script's file opens the store, as its first line, in
// the mode the table gives; a read writes nothing and never waits; a
// script that makes an id is a write's; none but Reconfigure's looks for
// a migration itself.
func TestScriptTable(t *testing.T) {
	made := map[string]bool{}
	open := regexp.MustCompile(`(?m)^(?:local [\w, ]+ = )?openStore\(KEYS, '(\w+)'\)$`)
	first := regexp.MustCompile(`^(?:--[^\n]*\n)*(.*)\n`)
	for _, sc := range registry {
		made[sc.name] = true
		m := open.FindAllStringSubmatch(sc.body, -1)
		if len(m) != 1 || m[0][1] != sc.mode {
			t.Errorf("%s: opens the store %v, want once, in mode %q", sc.name, m, sc.mode)
		}
		if f := first.FindStringSubmatch(sc.body); f == nil || !open.MatchString(f[1]) {
			t.Errorf("%s: the first line after its header is %q, not openStore", sc.name, f)
		}
		if sc.readOnly && (sc.wait || sc.allowOOM || sc.mode[0] != 'r') {
			t.Errorf("%s: writes nothing, yet waits %v, allow-oom %v, mode %q", sc.name, sc.wait, sc.allowOOM, sc.mode)
		}
		if sc.once && sc.mode[0] != 'w' {
			t.Errorf("%s: makes an id in mode %q", sc.name, sc.mode)
		}
		// Migrations apart: a store of this layout runs no migration
		// code; the identity check alone finds a move under way.
		if sc.name != "reconfigure" && strings.Contains(sc.body, "moving(") {
			t.Errorf("%s: checks for a migration itself (moving), not through its identity check", sc.name)
		}
	}
	for name := range scriptTable {
		if !made[name] {
			t.Errorf("scriptTable names %s, which is no script", name)
		}
	}
}

// TestLibNames: no file of lua/lib/ shares a name with a script, so a
// reader never mistakes a helper for the script that calls it.
func TestLibNames(t *testing.T) {
	for _, name := range libFiles {
		if _, ok := scriptTable[name]; ok {
			t.Errorf("lua/lib/%s.lua shares its name with the script lua/%s.lua", name, name)
		}
	}
}
