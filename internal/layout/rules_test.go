package layout

import (
	"errors"
	"testing"
)

// TestRulesRecord: the rules record's words read back as they were
// written, bare names among them; a word of no rule, of numbers that are
// none or of as many as its rule has not is an error that wraps
// ErrMalformed.
func TestRulesRecord(t *testing.T) {
	words := []RuleWord{{Name: RuleKarma, Numbers: []int64{1, -1}}, {Name: RuleVoteLimit},
		{Name: RulePostInterval, Numbers: []int64{-9223372036854}}, {Name: RuleCommentInterval, Numbers: []int64{0}}}
	text := FormatRules(words)
	if text != "karma=1,-1 votelimit postinterval=-9223372036854 commentinterval=0" {
		t.Errorf("FormatRules = %q", text)
	}
	got, err := ParseRules("  " + text + " ")
	if err != nil || FormatRules(got) != text || len(got) != len(words) || got[1].Numbers != nil {
		t.Errorf("ParseRules(%q) = %v, %v", text, got, err)
	}
	if got, err := ParseRules(""); err != nil || got != nil {
		t.Errorf("ParseRules(\"\") = %v, %v", got, err)
	}
	for _, bad := range []string{"nosuch=1", "karma=1", "karma=1,2,3", "postinterval=1,2", "karma=1,x", "karma=", "votelimit=1,",
		"Karma=1,1", "karma=1.5,1", "editwindow=99999999999999999999"} {
		if _, err := ParseRules("cost=1,1 " + bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseRules(%q): %v", bad, err)
		}
	}
	for i, name := range RuleNames {
		if j, ok := RuleIndex(name); !ok || j != i || !IsRule(name) {
			t.Errorf("RuleIndex(%q) = %d, %v", name, j, ok)
		}
	}
	if _, ok := RuleIndex("nosuch"); ok || IsRule("") {
		t.Errorf("a name of no rule is a rule's")
	}
}
