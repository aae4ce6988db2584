package voting

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/votekit/voting/internal/layout"
)

// TestVotesBy checks the vote log: votes on articles and comments, newest
// first, changes moving an entry, cancels removing it, cursors over the
// whole log, gone items left out, and the refusal without WithVoteLog.
func TestVotesBy(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteLog(), WithKarma(1, -1))
		var ids []string
		for i := 0; i < 5; i++ {
			a, err := s.Post(ctx, "poster", fmt.Sprintf("t%d", i), "")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, a.ID)
		}
		c, err := s.Comment(ctx, ids[0], "", "poster", "hello")
		if err != nil {
			t.Fatal(err)
		}
		vote := func(id string, v VoteType) {
			t.Helper()
			clock.Add(time.Second)
			if _, err := s.Vote(ctx, "mod", id, v); err != nil {
				t.Fatal(err)
			}
		}
		vote(ids[0], Upvote)
		vote(ids[1], Downvote)
		vote(ids[2], Upvote)
		vote(ids[3], Upvote)
		vote(ids[3], CancelVote) // removed
		vote(ids[0], Downvote)   // moves to the front
		clock.Add(time.Second)
		if _, err := s.VoteComment(ctx, "mod", c.ID, Upvote); err != nil {
			t.Fatal(err)
		}
		// VoteBatch logs too.
		clock.Add(time.Second)
		if _, err := s.VoteBatch(ctx, []Ballot{{User: "mod", ID: ids[4], Vote: Upvote}}); err != nil {
			t.Fatal(err)
		}
		want := []UserVote{
			{ID: ids[4], Vote: Upvote},
			{ID: c.ID, Comment: true, Vote: Upvote},
			{ID: ids[0], Vote: Downvote},
			{ID: ids[2], Vote: Upvote},
			{ID: ids[1], Vote: Downvote},
		}
		for _, limit := range []int{1, 2, 3, 1000} {
			var got []UserVote
			cursor := ""
			for n := 0; ; n++ {
				page, next, err := s.VotesBy(ctx, "mod", cursor, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) > limit {
					t.Fatalf("limit %d: page of %d", limit, len(page))
				}
				got = append(got, page...)
				if next == "" {
					break
				}
				if n > 10 {
					t.Fatal("no end")
				}
				cursor = next
			}
			for i := range got {
				got[i].At = time.Time{}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("limit %d: votes by %v, want %v", limit, got, want)
			}
		}
		page, _, err := s.VotesBy(ctx, "mod", "", 1)
		if err != nil || len(page) != 1 || !page[0].At.Equal(epoch.Add(8*time.Second)) {
			t.Fatalf("newest %v, %v; want at %v", page, err, epoch.Add(8*time.Second))
		}
		// An article gone leaves the log's pages.
		if err := s.Delete(ctx, ids[2]); err != nil {
			t.Fatal(err)
		}
		page, next, err := s.VotesBy(ctx, "mod", "", 1000)
		if err != nil || next != "" || len(page) != 4 {
			t.Fatalf("after delete: %v %q %v", page, next, err)
		}
		// The poster's own upvotes are no entries.
		if page, _, err := s.VotesBy(ctx, "poster", "", 10); err != nil || len(page) != 0 {
			t.Fatalf("poster's log %v, %v", page, err)
		}
		for _, bad := range []int{0, MaxModerationPage + 1} {
			if _, _, err := s.VotesBy(ctx, "mod", "", bad); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("limit %d: %v", bad, err)
			}
		}
		if _, _, err := s.VotesBy(ctx, "mod", "nope", 10); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("bad cursor: %v", err)
		}
		plain, _ := newStore(t, b)
		if _, _, err := plain.VotesBy(ctx, "mod", "", 10); !errors.Is(err, ErrNotAllowed) {
			t.Fatalf("without WithVoteLog: %v", err)
		}
	})
}

// TestVoters walks the voters of an article and a comment in small
// pages: each voter once, the poster included, with their votes.
func TestVoters(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		a := mustPost(t, s, "poster", "title")
		c := mustComment(t, s, a.ID, "", "cposter", "hello")
		other := mustComment(t, s, a.ID, "", "x", "other")
		want, cwant := map[string]VoteType{"poster": Upvote}, map[string]VoteType{"cposter": Upvote}
		for i := 0; i < 300; i++ {
			u := fmt.Sprintf("u%03d", i)
			v := Upvote
			if i%3 == 0 {
				v = Downvote
			}
			if _, err := s.Vote(ctx, u, a.ID, v); err != nil {
				t.Fatal(err)
			}
			want[u] = v
			if i%2 == 0 {
				if _, err := s.VoteComment(ctx, u, c.ID, v); err != nil {
					t.Fatal(err)
				}
				cwant[u] = v
			}
			if _, err := s.VoteComment(ctx, u, other.ID, Downvote); err != nil {
				t.Fatal(err)
			}
		}
		// A cancelled vote is no voter.
		if _, err := s.Vote(ctx, "u001", a.ID, CancelVote); err != nil {
			t.Fatal(err)
		}
		delete(want, "u001")
		walk := func(read func(cursor string, limit int) ([]Voter, string, error), limit int) map[string]VoteType {
			t.Helper()
			got := map[string]VoteType{}
			cursor := ""
			for n := 0; ; n++ {
				page, next, err := read(cursor, limit)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range page {
					if _, dup := got[v.User]; dup {
						t.Fatalf("voter %s twice", v.User)
					}
					got[v.User] = v.Vote
				}
				if next == "" {
					return got
				}
				if n > 1000 {
					t.Fatal("no end")
				}
				cursor = next
			}
		}
		for _, limit := range []int{7, 1000} {
			got := walk(func(cursor string, limit int) ([]Voter, string, error) { return s.Voters(ctx, a.ID, cursor, limit) }, limit)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("limit %d: voters %v, want %v", limit, got, want)
			}
			got = walk(func(cursor string, limit int) ([]Voter, string, error) {
				return s.CommentVoters(ctx, c.ID, cursor, limit)
			}, limit)
			if fmt.Sprint(got) != fmt.Sprint(cwant) {
				t.Fatalf("limit %d: comment voters %v, want %v", limit, got, cwant)
			}
		}
		if _, _, err := s.Voters(ctx, "999", "", 10); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown article: %v", err)
		}
		if _, _, err := s.CommentVoters(ctx, "999", "", 10); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown comment: %v", err)
		}
		if b.mr != nil {
			b.mr.FastForward(DefaultVoteWindow + time.Second)
			if _, _, err := s.Voters(ctx, a.ID, "", 10); !errors.Is(err, ErrVotingClosed) {
				t.Fatalf("closed article: %v", err)
			}
		}
	})
}

// TestVotersShrinking walks the voters of an article and of a comment
// whose voter records are hash tables (over 128 fields: 1,000 voters)
// while 950 of them cancel after the first page, which would shrink the
// tables were their fields deleted (Redis shrinks a hash's table on an
// HDEL that leaves it a tenth full, and HSCAN may then return a field
// twice): no voter is listed twice, every voter whose vote stood
// throughout is listed, with their vote, and the records keep the
// cancelled votes' fields as "0", which reads as no vote. The comment's
// poster downvotes after the first page too: listed once at most.
func TestVotersShrinking(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		a := mustPost(t, s, "poster", "title")
		c := mustComment(t, s, a.ID, "", "cposter", "hello")
		const n, cancelled = 1000, 950
		user := func(i int) string { return fmt.Sprintf("u%04d", i) }
		vote := func(i int) VoteType { return []VoteType{Upvote, Downvote}[i%2] }
		stands := func(i int) bool { return i%20 == 0 } // 50 of 1,000
		votes := func(v func(i int) VoteType) []Ballot {
			var ballots []Ballot
			for i := 0; i < n; i++ {
				if v(i) != NoVote {
					ballots = append(ballots, Ballot{User: user(i), ID: a.ID, Vote: v(i)})
				}
			}
			return ballots
		}
		cancels := func(i int) VoteType {
			if stands(i) {
				return NoVote
			}
			return CancelVote
		}
		// voteAll casts ballots on the article, or on the comment.
		voteAll := func(ballots []Ballot, comment bool) {
			t.Helper()
			if !comment {
				res, err := s.VoteBatch(ctx, ballots)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res {
					if r.Err != nil {
						t.Fatal(r.Err)
					}
				}
				return
			}
			for _, x := range ballots {
				if _, err := s.VoteComment(ctx, x.User, c.ID, x.Vote); err != nil {
					t.Fatal(err)
				}
			}
		}
		voteAll(votes(vote), false)
		voteAll(votes(vote), true)
		votedKey, cvotedKey := s.keys.votedKey(a.ID), s.keys.cvoted+a.ID
		if b.mr == nil {
			for _, key := range []string{votedKey, cvotedKey} {
				pool := b.pool
				if b.node != nil {
					pool = b.node(key) // the key's node in the cluster
				}
				if e, err := redis.String(serverDo(t, pool, "OBJECT", "ENCODING", key), nil); err != nil || e != "hashtable" {
					t.Fatalf("%s: encoding %q, %v; want hashtable", key, e, err)
				}
			}
		}
		// walk reads every page of read, limit 10, calling between after
		// the first; it fails on a voter listed twice.
		walk := func(read func(cursor string) ([]Voter, string, error), between func()) map[string]VoteType {
			t.Helper()
			got := map[string]VoteType{}
			cursor := ""
			for page := 0; ; page++ {
				list, next, err := read(cursor)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range list {
					if _, dup := got[v.User]; dup {
						t.Fatalf("page %d: voter %s twice", page, v.User)
					}
					got[v.User] = v.Vote
				}
				if next == "" {
					if page == 0 {
						if b.mr == nil {
							t.Fatal("a record of 1,000 voters read in one page")
						}
						between() // miniredis's HSCAN reads a hash whole
					}
					return got
				}
				if page == 0 {
					between()
				}
				if page > n {
					t.Fatal("no end")
				}
				cursor = next
			}
		}
		// check checks that got lists every voter whose vote stood.
		check := func(what string, got map[string]VoteType) {
			t.Helper()
			if len(got) > n+1 {
				t.Errorf("%s: %d voters listed", what, len(got))
			}
			for i := 0; i < n; i++ {
				if v, ok := got[user(i)]; stands(i) && (!ok || v != vote(i)) {
					t.Errorf("%s: %s, whose vote stood, listed %v, %v; want %v", what, user(i), v, ok, vote(i))
				}
			}
		}
		got := walk(func(cursor string) ([]Voter, string, error) { return s.Voters(ctx, a.ID, cursor, 10) },
			func() { voteAll(votes(cancels), false) })
		check("voters", got)
		if got["poster"] != Upvote {
			t.Errorf("voters: poster listed %v, want up", got["poster"])
		}
		got = walk(func(cursor string) ([]Voter, string, error) { return s.CommentVoters(ctx, c.ID, cursor, 10) },
			func() {
				voteAll(votes(cancels), true)
				voteAll([]Ballot{{User: "cposter", Vote: Downvote}}, true)
			})
		check("comment voters", got)
		if v, ok := got["cposter"]; ok && v != Upvote && v != Downvote {
			t.Errorf("comment voters: cposter listed %v", v)
		}

		// The cancelled votes keep their fields, "0": no field is deleted.
		for _, f := range [][2]string{{votedKey, user(1)}, {cvotedKey, layout.CVoteField(c.ID, user(1))}} {
			if v, err := redis.String(b.do(t, "HGET", f[0], f[1]), nil); err != nil || v != "0" {
				t.Errorf("%s %s: %q, %v; want \"0\"", f[0], f[1], v, err)
			}
		}
		// The voters' fields and "": the article's poster's, and the comment
		// poster's downvote.
		for key, want := range map[string]int{votedKey: n + 2, cvotedKey: n + 2} {
			if l, err := redis.Int(b.do(t, "HLEN", key), nil); err != nil || l != want {
				t.Errorf("HLEN %s = %d, %v; want %d", key, l, err, want)
			}
		}
		// "0" reads as no vote, and a vote cast again counts.
		if v, err := s.VoteOf(ctx, user(1), a.ID); err != nil || v != NoVote {
			t.Errorf("VoteOf a cancelled vote: %v, %v", v, err)
		}
		if vs, err := s.VotesOf(ctx, user(1), []string{a.ID}); err != nil || vs[0] != NoVote {
			t.Errorf("VotesOf a cancelled vote: %v, %v", vs, err)
		}
		if vs, err := s.CommentVotesOf(ctx, user(1), []string{c.ID}); err != nil || vs[0] != NoVote {
			t.Errorf("CommentVotesOf a cancelled vote: %v, %v", vs, err)
		}
		if r, err := s.Vote(ctx, user(1), a.ID, Upvote); err != nil || r.Previous != NoVote {
			t.Errorf("a vote after a cancel: %+v, %v", r, err)
		}
		if r, err := s.VoteComment(ctx, user(1), c.ID, Upvote); err != nil || r.Previous != NoVote {
			t.Errorf("a comment vote after a cancel: %+v, %v", r, err)
		}
		got = walk(func(cursor string) ([]Voter, string, error) { return s.Voters(ctx, a.ID, cursor, 10) }, func() {})
		if len(got) != n-cancelled+2 || got[user(1)] != Upvote { // the poster's and user(1)'s again
			t.Errorf("voters after the votes again: %d listed, %s %v", len(got), user(1), got[user(1)])
		}
	})
}

// TestSuspend checks Refuse and Shadow on every call they guard, their
// end at until, Unsuspend, Suspended, RetryAfter, and that a refused
// call changes nothing.
func TestSuspend(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteLog(), WithKarma(1, -1), WithUserPages())
		a := mustPost(t, s, "poster", "title")
		c := mustComment(t, s, a.ID, "", "poster", "body")
		if mode, until, err := s.Suspended(ctx, "bad"); err != nil || mode != 0 || !until.IsZero() {
			t.Fatalf("not suspended: %v %v %v", mode, until, err)
		}
		end := epoch.Add(time.Hour + 500*time.Millisecond)
		if err := s.Suspend(ctx, "bad", Refuse, end); err != nil {
			t.Fatal(err)
		}
		if mode, until, err := s.Suspended(ctx, "bad"); err != nil || mode != Refuse || !until.Equal(end) {
			t.Fatalf("Suspended = %v %v %v, want refuse %v", mode, until, err, end)
		}
		refused := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, ErrNotAllowed) || RetryAfter(err) < time.Hour || RetryAfter(err) > time.Hour+time.Second {
				t.Fatalf("%s while refused: %v (retry after %v)", what, err, RetryAfter(err))
			}
		}
		// The record carries the latest end of the suspensions; the
		// identity's checks and Reconfigure see the identity through it.
		record := func() string {
			t.Helper()
			r, err := redis.String(b.storePool(s).Get().Do("GET", s.keys.record))
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		marked := s.Identity().String() + "\n" + strconv.FormatInt(end.UnixMilli(), 10)
		if got := record(); got != marked {
			t.Fatalf("record %q, want %q", got, marked)
		}
		if err := s.CheckIdentity(ctx); err != nil {
			t.Fatalf("CheckIdentity with a suspension: %v", err)
		}
		if id, ok, err := s.Recorded(ctx); err != nil || !ok || id.String() != s.Identity().String() {
			t.Fatalf("Recorded with a suspension: %v %v %v", id, ok, err)
		}
		if _, err := s.Reconfigure(ctx); err != nil || record() != marked {
			t.Fatalf("Reconfigure with a suspension: %v, record %q", err, record())
		}
		if _, err := s.Post(ctx, "good", "another", ""); err != nil {
			t.Fatalf("another's Post with a suspension on: %v", err)
		}
		before := b.storeKeys(t, s)
		_, err := s.Vote(ctx, "bad", a.ID, Upvote)
		refused("Vote", err)
		_, err = s.VoteComment(ctx, "bad", c.ID, Downvote)
		refused("VoteComment", err)
		r, err := s.VoteBatch(ctx, []Ballot{{User: "bad", ID: a.ID, Vote: Upvote}, {User: "good", ID: a.ID, Vote: CancelVote}})
		if err != nil || len(r) != 2 || r[1].Err != nil {
			t.Fatalf("VoteBatch: %v, %v", r, err)
		}
		refused("a ballot", r[0].Err)
		_, err = s.Post(ctx, "bad", "t", "")
		refused("Post", err)
		_, err = s.Comment(ctx, a.ID, "", "bad", "b")
		refused("Comment", err)
		if after := b.storeKeys(t, s); !slices.Equal(before, after) {
			t.Fatalf("keys before %v, after %v", before, after)
		}
		if got, err := s.Article(ctx, a.ID); err != nil || got.Upvotes != 1 || got.Downvotes != 0 {
			t.Fatalf("article after refusals: %+v, %v", got, err)
		}
		// It ends by itself.
		clock.Add(time.Hour + time.Second)
		if mode, _, err := s.Suspended(ctx, "bad"); err != nil || mode != 0 {
			t.Fatalf("after its end: %v, %v", mode, err)
		}
		if _, err := s.Vote(ctx, "bad", a.ID, Upvote); err != nil {
			t.Fatal(err)
		}
		// Shadow: seen by the voter, counted nowhere; a vote that counted
		// before, changed, is taken back.
		if err := s.Suspend(ctx, "bad", Shadow, clock.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		vr, err := s.Vote(ctx, "bad", a.ID, Downvote)
		if err != nil || vr.Previous != Upvote || vr.Upvotes != 1 || vr.Downvotes != 1 {
			t.Fatalf("shadow vote told %+v, %v", vr, err)
		}
		if got, err := s.Article(ctx, a.ID); err != nil || got.Upvotes != 1 || got.Downvotes != 0 {
			t.Fatalf("article after a shadow vote: %+v, %v", got, err)
		}
		if v, err := s.VoteOf(ctx, "bad", a.ID); err != nil || v != Downvote {
			t.Fatalf("the shadowed user sees %v, %v", v, err)
		}
		if votes, err := s.VotesOf(ctx, "bad", []string{a.ID}); err != nil || votes[0] != Downvote {
			t.Fatalf("VotesOf %v, %v", votes, err)
		}
		vr, err = s.VoteComment(ctx, "bad", c.ID, Upvote)
		if err != nil || vr.Upvotes != 2 {
			t.Fatalf("shadow comment vote told %+v, %v", vr, err)
		}
		if list, err := s.CommentsByID(ctx, []string{c.ID}); err != nil || list[0].Upvotes != 1 {
			t.Fatalf("comment after a shadow vote: %+v, %v", list, err)
		}
		if votes, err := s.CommentVotesOf(ctx, "bad", []string{c.ID}); err != nil || votes[0] != Upvote {
			t.Fatalf("CommentVotesOf %v, %v", votes, err)
		}
		if k, err := s.Karma(ctx, "poster"); err != nil || k != 0 {
			t.Fatalf("poster's karma %d, %v", k, err)
		}
		// Unsuspended, a shadow vote counts from none when changed; the
		// last suspension gone, the record is the identity again.
		if err := s.Unsuspend(ctx, "bad"); err != nil {
			t.Fatal(err)
		}
		if got := record(); got != s.Identity().String() {
			t.Fatalf("record after the last Unsuspend %q", got)
		}
		if vr, err := s.Vote(ctx, "bad", a.ID, Upvote); err != nil || vr.Previous != Downvote || vr.Upvotes != 2 || vr.Downvotes != 0 {
			t.Fatalf("after Unsuspend: %+v, %v", vr, err)
		}
		if err := s.Suspend(ctx, "bad", Suspension(9), clock.Now().Add(time.Hour)); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("bad mode: %v", err)
		}
		if err := s.Suspend(ctx, "bad", Refuse, clock.Now()); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("until now: %v", err)
		}
	})
}

// TestVoteEvents checks the stream: one event for each change, in order,
// none for a vote that changes nothing or a shadowed one, the reversals
// and suspensions, the cursor, and the cap.
func TestVoteEvents(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteLog(), WithVoteEvents(1000), WithKarma(1, -1))
		a := mustPost(t, s, "poster", "title")
		c := mustComment(t, s, a.ID, "", "poster", "body")
		mustVote(t, s, "u", a.ID, Upvote)
		mustVote(t, s, "u", a.ID, Upvote) // no change, no event
		clock.Add(time.Second)
		mustVote(t, s, "u", a.ID, Downvote)
		if _, err := s.VoteComment(ctx, "u", c.ID, Upvote); err != nil {
			t.Fatal(err)
		}
		if _, err := s.VoteBatch(ctx, []Ballot{{User: "w", ID: a.ID, Vote: Upvote}}); err != nil {
			t.Fatal(err)
		}
		mustVote(t, s, "w", a.ID, CancelVote)
		if err := s.Suspend(ctx, "sh", Shadow, clock.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		mustVote(t, s, "sh", a.ID, Upvote) // shadowed: no event
		if err := s.Unsuspend(ctx, "sh"); err != nil {
			t.Fatal(err)
		}
		if err := s.Unsuspend(ctx, "nobody"); err != nil { // no suspension: no event
			t.Fatal(err)
		}
		if n, err := s.ReverseVotes(ctx, "u"); err != nil || n != 2 {
			t.Fatalf("ReverseVotes: %d, %v", n, err)
		}
		at0, at1 := epoch, epoch.Add(time.Second)
		want := []VoteEvent{
			{Kind: "vote", User: "u", Target: a.ID, From: NoVote, To: Upvote, At: at0},
			{Kind: "vote", User: "u", Target: a.ID, From: Upvote, To: Downvote, At: at1},
			{Kind: "vote", User: "u", Target: c.ID, Comment: true, From: NoVote, To: Upvote, At: at1},
			{Kind: "vote", User: "w", Target: a.ID, From: NoVote, To: Upvote, At: at1},
			{Kind: "vote", User: "w", Target: a.ID, From: Upvote, To: NoVote, At: at1},
			{Kind: "suspend", User: "sh", Target: "shadow", At: at1},
			{Kind: "unsuspend", User: "sh", At: at1},
			{Kind: "reversed", User: "u", Target: c.ID, Comment: true, From: Upvote, To: NoVote, At: at1},
			{Kind: "reversed", User: "u", Target: a.ID, From: Downvote, To: NoVote, At: at1},
		}
		var got []VoteEvent
		after := ""
		for {
			page, next, err := s.VoteEvents(ctx, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				if next != after {
					t.Fatalf("an empty page moved the cursor from %q to %q", after, next)
				}
				break
			}
			got = append(got, page...)
			after = next
		}
		for i := range got {
			if got[i].ID == "" {
				t.Fatalf("event %d without an ID", i)
			}
			got[i].ID = ""
		}
		if !slices.Equal(got, want) {
			t.Fatalf("events\n%v\nwant\n%v", got, want)
		}
		if _, _, err := s.VoteEvents(ctx, "x", 10); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("bad cursor: %v", err)
		}
		plain, _ := newStore(t, b)
		if _, _, err := plain.VoteEvents(ctx, "", 10); !errors.Is(err, ErrNotAllowed) {
			t.Fatalf("without WithVoteEvents: %v", err)
		}
		// The cap: about maxLen entries (XADD MAXLEN ~ trims whole nodes).
		capped, _ := newStore(t, b, WithVoteEvents(10))
		a, err := capped.Post(ctx, "poster", "title", "")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 300; i++ {
			mustVote(t, capped, fmt.Sprintf("u%d", i), a.ID, Upvote)
		}
		n, err := redis.Int(b.storePool(capped).Get().Do("XLEN", capped.keys.events))
		if err != nil || n < 10 || n > 10+200 {
			t.Fatalf("XLEN of a stream capped at about 10: %d, %v", n, err)
		}
	})
}
