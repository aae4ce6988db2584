package main

import (
	"strings"
	"testing"
)

// Bad input: exit 2, one clear line, nothing written.
func TestBadInput(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		fill(t, addr, "src")
		_, export, _ := votectl(t, addr, "", "-prefix", "src", "export")
		lines := strings.Split(export, "\n")
		lines[3] = `{"type":"article","id":"x"}`
		for _, tc := range []struct {
			stdin string
			args  []string
			want  string
		}{
			{"", []string{"-prefix", "src", "nosuch"}, "unknown command"},
			{"", []string{"-prefix", "none", "info"}, `no store under prefix "none"`},
			{"", []string{"-prefix", "none", "export"}, `no store under prefix "none"`},
			{"", []string{"-prefix", "src", "article", "abc"}, "not an id"},
			{strings.Join(lines, "\n"), []string{"-prefix", "dst", "import"}, "line 4: "},
			{"", []string{"-prefix", "dst", "import", "-resume"}, "nothing to resume"},
		} {
			code, out, errs := votectl(t, addr, tc.stdin, tc.args...)
			if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("%q: exit %d, stderr %q, want 2 and %q\n%s", tc.args, code, errs, tc.want, out)
			}
		}
		if n, _ := do("KEYS", "{dst}:*"); len(n.([]interface{})) != 0 {
			t.Errorf("a refused import wrote %d keys", len(n.([]interface{})))
		}
		if code, _, errs := votectl(t, "127.0.0.1:1", "", "info"); code != 2 || errs == "" {
			t.Errorf("no server: %d %q", code, errs)
		}
	})
}

// An interrupted import (its marker left) is refused, and resumed.
func TestImportResume(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		fill(t, addr, "src")
		_, export, _ := votectl(t, addr, "", "-prefix", "src", "export")
		do("SET", "{dst}:votectl:import", "x")
		do("SET", "{dst}:article:1", "partial")
		if code, _, errs := votectl(t, addr, export, "-prefix", "dst", "import"); code != 2 || !strings.Contains(errs, "-resume") {
			t.Fatalf("import over an unfinished one: %d %q", code, errs)
		}
		if code, _, errs := votectl(t, addr, export, "-prefix", "dst", "import", "-resume"); code != 0 {
			t.Fatalf("import -resume: %d %q", code, errs)
		}
		_, again, _ := votectl(t, addr, "", "-prefix", "dst", "export")
		if again != export {
			t.Errorf("export after a resumed import differs")
		}
	})
}

func TestCommandsRead(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		fill(t, addr, "src")
		for _, tc := range []struct {
			args []string
			want []string
		}{
			{[]string{"info"}, []string{`store "src"`, "article", "voted", "total", "health:"}},
			{[]string{"article", "1"}, []string{`"title": "title "`, `"groups": [`, `"voters": 4`, `"open": true`}},
			{[]string{"user", "alice"}, []string{`"karma":`, `"submitted": [`, `"upvoted": [`}},
			{[]string{"options"}, []string{`"karma": true`, `"user_pages": true`, `"top"`}},
		} {
			code, out, errs := votectl(t, addr, "", append([]string{"-prefix", "src"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("%q: %d %s", tc.args, code, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%q lacks %q:\n%s", tc.args, w, out)
				}
			}
		}
	})
}

// functions lists this version's library, and -prune deletes others.
func TestFunctions(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		fill(t, addr, "src")
		if _, err := do("FUNCTION", "LIST"); err != nil {
			t.Skip("no Functions on this server")
		}
		do("FUNCTION", "LOAD", "#!lua name=voting_old\nredis.register_function('voting_old_x', function() return 1 end)")
		code, out, errs := votectl(t, addr, "", "functions")
		if code != 0 || !strings.Contains(out, "this version") || !strings.Contains(out, "voting_old  other version") {
			t.Fatalf("functions: %d %s %s", code, out, errs)
		}
		code, out, _ = votectl(t, addr, "", "functions", "-prune")
		if code != 0 || !strings.Contains(out, "voting_old  deleted") || !strings.Contains(out, "this version") {
			t.Fatalf("functions -prune: %d %s", code, out)
		}
	})
}
