package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/votekit/voting"
)

// TestModerationExportImport: a store with the vote log, events and a
// shadowed user checks clean, and export | import | export gives the
// same lines, and the imported store the same users' votes, voters and
// suspensions.
func TestModerationExportImport(t *testing.T) {
	backends(t, func(t *testing.T, addr string, do func(string, ...interface{}) (interface{}, error)) {
		ctx := context.Background()
		now := time.Now()
		opts := func(p string) []voting.Option {
			return []voting.Option{voting.WithKeyPrefix(p), voting.WithClock(func() time.Time { return now }),
				voting.WithVoteLog(), voting.WithVoteEvents(1000), voting.WithKarma(1, -1)}
		}
		src, a, c := commentedStore(t, addr, "msrc", opts("msrc")...)
		if err := src.Suspend(ctx, "sam", voting.Shadow, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"bob", "carol", "sam"} {
			if _, err := src.Vote(ctx, u, a.ID, voting.Upvote); err != nil {
				t.Fatal(err)
			}
			if _, err := src.VoteComment(ctx, u, c.ID, voting.Downvote); err != nil {
				t.Fatal(err)
			}
		}
		if code, out, errs := votectl(t, addr, "", "-prefix", "msrc", "check"); code != 0 {
			t.Errorf("check: %d\n%s%s", code, out, errs)
		}
		_, export, _ := votectl(t, addr, "", "-prefix", "msrc", "export")
		if code, _, errs := votectl(t, addr, export, "-prefix", "mdst", "import"); code != 0 {
			t.Fatalf("import: %d %s", code, errs)
		}
		if _, again, _ := votectl(t, addr, "", "-prefix", "mdst", "export"); again != export {
			t.Errorf("export | import | export differs:\n%s\n%s", export, again)
		}
		dst, err := voting.New(pool(addr, "mdst"), opts("mdst")...)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"bob", "carol", "sam"} {
			v1, c1, err1 := src.VotesBy(ctx, u, "", 100)
			v2, c2, err2 := dst.VotesBy(ctx, u, "", 100)
			if fmt.Sprint(v1, c1, err1) != fmt.Sprint(v2, c2, err2) {
				t.Errorf("VotesBy(%s): %v %q %v before, %v %q %v after", u, v1, c1, err1, v2, c2, err2)
			}
			r1, err1 := src.VoteOf(ctx, u, a.ID)
			r2, err2 := dst.VoteOf(ctx, u, a.ID)
			if r1 != r2 || fmt.Sprint(err1) != fmt.Sprint(err2) {
				t.Errorf("VoteOf(%s) = %v, %v before, %v, %v after", u, r1, err1, r2, err2)
			}
		}
		for _, st := range []*voting.Store{src, dst} {
			m, until, err := st.Suspended(ctx, "sam")
			if err != nil || m != voting.Shadow || !until.Equal(now.Add(time.Hour).Truncate(time.Millisecond)) {
				t.Errorf("Suspended(sam) = %v, %v, %v", m, until, err)
			}
		}
		v1, _, err1 := src.Voters(ctx, a.ID, "", 100)
		v2, _, err2 := dst.Voters(ctx, a.ID, "", 100)
		if fmt.Sprint(v1, err1) != fmt.Sprint(v2, err2) {
			t.Errorf("Voters: %v, %v before, %v, %v after", v1, err1, v2, err2)
		}
	})
}
