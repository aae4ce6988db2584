package voting

import (
	"errors"
	"strconv"
	"testing"
)

// FuzzParseVoteType checks that ParseVoteType accepts exactly what String
// returns for the four constants and agrees with the text methods; that
// it rejects all else with ErrInvalidVote and a VoteType that is not
// Valid, so a caller that drops the error cannot take a vote back by
// accident; that any VoteType value is Valid exactly when it is one of
// the four, and otherwise refused by MarshalText; and that it is a
// ballot exactly when it is Upvote, Downvote or CancelVote.
func FuzzParseVoteType(f *testing.F) {
	for _, s := range []string{"up", "down", "none", "", "UP", " up", "up\x00", "+1", "-1", "0", "cancel", "Cancel", "VoteType(2)", "\xff"} {
		f.Add(s, int8(len(s)-3))
	}
	f.Fuzz(func(t *testing.T, s string, n int8) {
		v, err := ParseVoteType(s)
		var u VoteType
		uerr := u.UnmarshalText([]byte(s))
		if err != nil {
			if !errors.Is(err, ErrInvalidVote) || !errors.Is(uerr, ErrInvalidVote) {
				t.Fatalf("ParseVoteType(%q) = %v; UnmarshalText = %v; want ErrInvalidVote", s, err, uerr)
			}
			if v.Valid() {
				t.Fatalf("ParseVoteType(%q) = %v with its error, a valid vote", s, v)
			}
			if u != NoVote {
				t.Fatalf("UnmarshalText(%q) changed the value to %v", s, u)
			}
			if s == "up" || s == "down" || s == "cancel" || s == "none" {
				t.Fatalf("ParseVoteType(%q) rejected a valid vote", s)
			}
		} else {
			text, merr := v.MarshalText()
			if !v.Valid() || v.String() != s || string(text) != s || merr != nil || uerr != nil || u != v {
				t.Fatalf("ParseVoteType(%q) = %v: String %q, MarshalText %q %v, UnmarshalText %v %v", s, v, v.String(), text, merr, u, uerr)
			}
		}

		w := VoteType(n)
		if w.Valid() != (n >= -1 && n <= 2) {
			t.Fatalf("VoteType(%d).Valid() = %v", n, w.Valid())
		}
		if w.IsBallot() != (n == -1 || n == 1 || n == 2) {
			t.Fatalf("VoteType(%d).IsBallot() = %v", n, w.IsBallot())
		}
		text, merr := w.MarshalText()
		switch {
		case w.Valid():
			back, err := ParseVoteType(string(text))
			if merr != nil || err != nil || back != w {
				t.Fatalf("VoteType(%d): MarshalText %q %v, parsed back %v %v", n, text, merr, back, err)
			}
		case !errors.Is(merr, ErrInvalidVote):
			t.Fatalf("VoteType(%d).MarshalText() = %q, %v; want ErrInvalidVote", n, text, merr)
		case w.String() != "VoteType("+strconv.Itoa(int(n))+")":
			t.Fatalf("VoteType(%d).String() = %q", n, w.String())
		}
	})
}
