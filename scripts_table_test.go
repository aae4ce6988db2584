package voting

import (
	"regexp"
	"testing"
)

// readOnlyCount is how many scripts write nothing.
func readOnlyCount() int {
	n := 0
	for _, spec := range scriptTable {
		if spec.readOnly {
			n++
		}
	}
	return n
}

// TestScriptTable: every script is in scriptTable and every entry of it
// is a script; each script's file opens the store, as its first line, in
// the mode the table gives; a read writes nothing and never waits; a
// script that makes an id is a write's.
func TestScriptTable(t *testing.T) {
	made := map[string]bool{}
	open := regexp.MustCompile(`(?m)^(?:local [\w, ]+ = )?openStore\(KEYS, '(\w)'\)$`)
	first := regexp.MustCompile(`^(?:--[^\n]*\n)*(.*)\n`)
	for _, sc := range registry {
		made[sc.name] = true
		m := open.FindAllStringSubmatch(sc.body, -1)
		if len(m) != 1 || m[0][1] != string(sc.mode) {
			t.Errorf("%s: opens the store %v, want once, in mode %q", sc.name, m, sc.mode)
		}
		if f := first.FindStringSubmatch(sc.body); f == nil || !open.MatchString(f[1]) {
			t.Errorf("%s: the first line after its header is %q, not openStore", sc.name, f)
		}
		if sc.readOnly && (sc.wait || sc.allowOOM || sc.mode != modeRead) {
			t.Errorf("%s: writes nothing, yet waits %v, allow-oom %v, mode %q", sc.name, sc.wait, sc.allowOOM, sc.mode)
		}
		if sc.once && sc.mode != modeWrite {
			t.Errorf("%s: makes an id in mode %q", sc.name, sc.mode)
		}
	}
	for name := range scriptTable {
		if !made[name] {
			t.Errorf("scriptTable names %s, which is no script", name)
		}
	}
}
