package voting

import "testing"

// TestParseVote checks the vote reply parser on good replies and on
// malformed ones, which must be errors, never panics.
func TestParseVote(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reply  []interface{}
		status int64
		want   VoteResult
		ok     bool
	}{
		{"applied", []interface{}{int64(0), int64(-1), []byte("1700000432"), int64(3), int64(2)}, 0,
			VoteResult{Previous: Downvote, Score: 1700000432, Upvotes: 3, Downvotes: 2}, true},
		{"not found", []interface{}{int64(1)}, 1, VoteResult{}, true},
		{"closed", []interface{}{int64(2)}, 2, VoteResult{}, true},
		{"empty", nil, 0, VoteResult{}, false},
		{"short", []interface{}{int64(0), int64(1)}, 0, VoteResult{}, false},
		{"bad status", []interface{}{[]byte("x")}, 0, VoteResult{}, false},
		{"bad score", []interface{}{int64(0), int64(0), []byte("x"), int64(1), int64(0)}, 0, VoteResult{}, false},
		{"bad counter", []interface{}{int64(0), int64(0), []byte("1"), nil, int64(0)}, 0, VoteResult{}, false},
	} {
		status, r, err := parseVote(tc.reply)
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want ok=%v", tc.name, err, tc.ok)
			continue
		}
		if tc.ok && (status != tc.status || r != tc.want) {
			t.Errorf("%s: %d, %+v; want %d, %+v", tc.name, status, r, tc.status, tc.want)
		}
	}
}
