package main

import (
	"context"
	"errors"
	"flag"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/votekit/voting"
)

// thisLayout is the layout this votectl reads (voting.LayoutVersion), as
// the store's identity and votectl's messages write it.
var thisLayout = strconv.Itoa(voting.LayoutVersion)

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
			{[]string{"info"}, []string{`store "src"`, "article", "voted", "total", "health:",
				"identity recorded: " + thisLayout + " orders=top,hot,best,controversial karma cost", "rules: karma=1,-1 cost=1,2", "no problems"}},
			{[]string{"article", "1"}, []string{`"title": "title "`, `"groups": [`, `"voters": 4`, `"open": true`}},
			{[]string{"user", "alice"}, []string{`"karma":`, `"submitted": [`, `"upvoted": [`}},
			{[]string{"options"}, []string{`"karma": true`, `"user_pages": true`, `"top"`, `"recorded": true`, `"karma_per_upvote": 1`}},
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
		// The default store's, whose node functions reads on the cluster.
		fill(t, addr, voting.DefaultKeyPrefix)
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

// TestOptionsChange changes a store's recorded options with the flags of
// examples/newsapi: the store then takes writes of a store of those
// options, and refuses those of its old ones.
func TestOptionsChange(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		old, err := voting.New(pool(addr, "opt"), voting.WithKeyPrefix("opt"))
		if err != nil {
			t.Fatal(err)
		}
		a, err := old.Post(context.Background(), "alice", "a title", "https://example.com/x")
		if err != nil {
			t.Fatal(err)
		}
		code, out, errs := votectl(t, addr, "", "-prefix", "opt", "options", "-karma", "1,-1", "-user-pages", "-unique-links", "-orders", "top")
		if code != 0 || !strings.Contains(out, "after:  "+thisLayout+" orders=top karma userpages uniquelinks") {
			t.Fatalf("options: %d %q %s", code, out, errs)
		}
		if _, err := old.Vote(context.Background(), "bob", a.ID, voting.Upvote); !errors.Is(err, voting.ErrIncompatible) {
			t.Errorf("a vote of the old options after the change: %v, want ErrIncompatible", err)
		}
		now, err := voting.New(pool(addr, "opt"), voting.WithKeyPrefix("opt"), voting.WithOrders(voting.Top), voting.WithKarma(1, -1),
			voting.WithUserPages(), voting.WithUniqueLinks())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := now.Vote(context.Background(), "bob", a.ID, voting.Upvote); err != nil {
			t.Errorf("a vote of the new options: %v", err)
		}
		if code, _, errs := votectl(t, addr, "", "-prefix", "opt", "options", "-orders", "sideways"); code != 2 {
			t.Errorf("a bad -orders: %d %s", code, errs)
		}
	})
}

// TestInterspersed: a command's flags may follow its arguments or sit
// between them; a word that names none of its flags, and all after
// "--", stay arguments in their order.
func TestInterspersed(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.String("mode", "", "")
	fs.Bool("comment", false, "")
	for _, c := range []struct{ in, want []string }{
		{[]string{"bob", "-mode", "shadow"}, []string{"-mode", "shadow", "bob"}},
		{[]string{"-mode", "shadow", "bob", "-comment", "7"}, []string{"-mode", "shadow", "-comment", "bob", "7"}},
		{[]string{"bob", "--mode=x", "-1"}, []string{"--mode=x", "bob", "-1"}},
		{[]string{"bob", "--", "-mode", "x"}, []string{"bob", "--", "-mode", "x"}},
		{[]string{"bob", "-mode"}, []string{"bob", "-mode"}},
	} {
		if got := interspersed(fs, c.in); !slices.Equal(got, c.want) {
			t.Errorf("interspersed(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
