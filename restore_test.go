package voting

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/internal/layout"
	"github.com/votekit/voting/internal/restore"
)

// TestRestoreEntries: restore.PutEntries writes a vote's entries (the
// voter's log, karma, pages and voter record's field) as the store's own
// vote wrote them, byte for byte; writing them again changes nothing; a
// foreign value at one of its keys fails the call before it writes any.
func TestRestoreEntries(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteLog(), WithKarma(2, -1), WithUserPages())
		a, err := s.Post(ctx, "alice", "A", "")
		if err != nil {
			t.Fatal(err)
		}
		id, posted := a.ID, a.Posted.Unix()
		clock.Add(90 * time.Second)
		if _, err := s.Vote(ctx, "bob", id, Upvote); err != nil {
			t.Fatal(err)
		}
		voted := clock.Now().Unix()
		before := snapshot(t, b, s)
		k := s.keys
		b.do(t, "DEL", k.userVotesKey("bob"), k.karma, k.submittedKey("alice"), k.upvotedKey("bob"))
		b.do(t, "HDEL", k.votedKey(id), "bob")
		es := []restore.Entry{
			{Kind: restore.Voter, ID: id, User: "bob", Vote: 1},
			{Kind: restore.VoteLog, User: "bob", Item: "article", ID: id, Vote: 1, N: float64(voted)},
			{Kind: restore.Karma, User: "alice", N: 2},
			{Kind: restore.Page, Item: "submitted", User: "alice", ID: id, N: float64(posted)},
			{Kind: restore.Page, Item: "upvoted", User: "bob", ID: id, N: float64(voted)},
		}
		for i := 0; i < 2; i++ {
			if err := restore.PutEntries(ctx, s, es); err != nil {
				t.Fatal(err)
			}
			unchanged(t, b, s, before)
		}

		// A shadowed user's vote keeps the store's shadow value.
		if err := restore.PutEntries(ctx, s, []restore.Entry{{Kind: restore.Voter, ID: id, User: "carol", Vote: -1, Shadow: true}}); err != nil {
			t.Fatal(err)
		}
		if v, err := redis.String(b.do(t, "HGET", k.votedKey(id), "carol"), nil); err != nil || v != "-1s" {
			t.Errorf("carol's shadow vote: %q, %v", v, err)
		}

		// A foreign value at the last entry's key: nothing is written.
		before = snapshot(t, b, s)
		b.do(t, "SET", k.threadKey(id), "foreign")
		err = restore.PutEntries(ctx, s, []restore.Entry{{Kind: restore.Karma, User: "alice", N: 99},
			{Kind: restore.Thread, ID: id, Text: "1", Item: "1"}})
		if err == nil || !strings.Contains(err.Error(), "holds a string") {
			t.Errorf("a foreign value: %v", err)
		}
		b.do(t, "DEL", k.threadKey(id))
		unchanged(t, b, s, before)

		// An entry the store never writes.
		if err := restore.PutEntries(ctx, s, []restore.Entry{{Kind: "nothing"}}); err == nil {
			t.Error("an entry of no kind: no error")
		}
	})
}

// TestRestoreVoteLogLines: a vote log's entries (restore.VoteLog) append
// their lines at their offsets and link the voter records' plain votes
// to them, as the store's votes write them: an article's, a comment's
// (its record read for its article) and a comment poster's implied
// upvote cast again (its field set); written again, they find their
// lines and change nothing. A line whose offset is not where the log
// ends, or that the log holds another line at, fails the call before it
// writes anything. A repair's LogKill takes back a line no vote links,
// and LogLink links or unlinks a vote where its record holds what the
// check read.
func TestRestoreVoteLogLines(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteLog())
		a, err := s.Post(ctx, "alice", "A", "")
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Comment(ctx, a.ID, "", "bob", "hi")
		if err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Minute)
		at := clock.Now().Unix()
		if _, err := s.Vote(ctx, "carol", a.ID, Upvote); err != nil {
			t.Fatal(err)
		}
		for _, x := range []struct {
			user string
			v    VoteType
		}{{"carol", Downvote}, {"bob", CancelVote}, {"bob", Upvote}} {
			if _, err := s.VoteComment(ctx, x.user, c.ID, x.v); err != nil {
				t.Fatal(err)
			}
		}
		before := snapshot(t, b, s)
		k := s.keys
		cvoted := k.cvoted + a.ID
		// The logs gone, and the votes plain, bob's own upvote implied.
		b.do(t, "DEL", k.userVotesKey("carol"), k.userVotesKey("bob"))
		b.do(t, "HSET", k.votedKey(a.ID), "carol", "1")
		b.do(t, "HSET", cvoted, c.ID+":carol", "-1")
		b.do(t, "HDEL", cvoted, c.ID+":bob")
		first := layout.LogEntry{ID: a.ID, Vote: 1, At: at}.Line()
		es := []restore.Entry{
			{Kind: restore.VoteLog, User: "carol", Item: "article", ID: a.ID, Vote: 1, N: float64(at)},
			{Kind: restore.VoteLog, User: "carol", Item: "comment", ID: c.ID, Vote: -1, N: float64(at), Offset: int64(len(first))},
			{Kind: restore.VoteLog, User: "bob", Item: "comment", ID: c.ID, Vote: 1, N: float64(at)},
		}
		for i := 0; i < 2; i++ {
			if err := restore.PutEntries(ctx, s, es); err != nil {
				t.Fatal(err)
			}
			unchanged(t, b, s, before)
		}

		// A line off the log's end, or over another line: nothing is
		// written.
		for _, x := range []struct {
			e    restore.Entry
			want string
		}{
			{restore.Entry{Kind: restore.VoteLog, User: "dave", Item: "article", ID: a.ID, Vote: 1, N: float64(at), Offset: 5},
				"goes at offset 5, where the log at " + k.userVotesKey("dave") + " holds 0 bytes"},
			{restore.Entry{Kind: restore.VoteLog, User: "carol", Item: "article", ID: a.ID, Vote: -1, N: float64(at)},
				fmt.Sprintf("holds %d bytes and not that line", len(first)+len(layout.LogEntry{Comment: true, ID: c.ID, Vote: -1, At: at}.Line()))},
			{restore.Entry{Kind: restore.VoteLog, User: "carol", Item: "article", ID: a.ID, Vote: 1, N: float64(at), Offset: -1},
				`uvote entry of user "carol" on article 1: offset -1 is no offset`},
			{restore.Entry{Kind: restore.LogKill, User: "carol", Item: "article", ID: a.ID, Vote: 2},
				"vote 2 is neither 1 nor -1"},
		} {
			err := restore.PutEntries(ctx, s, []restore.Entry{{Kind: restore.Karma, User: "alice", N: 5}, x.e})
			if err == nil || !strings.Contains(err.Error(), x.want) {
				t.Errorf("%+v: %v, want an error saying %q", x.e, err, x.want)
			}
			unchanged(t, b, s, before)
		}
		b.do(t, "HSET", k.userVotesKey("erin"), "x", "y")
		err = restore.PutEntries(ctx, s, []restore.Entry{{Kind: restore.Karma, User: "alice", N: 5},
			{Kind: restore.VoteLog, User: "erin", Item: "article", ID: a.ID, Vote: 1, N: float64(at)}})
		if err == nil || !strings.Contains(err.Error(), "holds a hash, not a string") {
			t.Errorf("a foreign value at a log: %v", err)
		}
		b.do(t, "DEL", k.userVotesKey("erin"))
		unchanged(t, b, s, before)

		// LogKill: carol's line, which her vote links, stays; dave's stray
		// line is taken back.
		b.do(t, "APPEND", k.userVotesKey("dave"), first)
		err = restore.PutEntries(ctx, s, []restore.Entry{
			{Kind: restore.LogKill, User: "carol", Item: "article", ID: a.ID, Vote: 1},
			{Kind: restore.LogKill, User: "dave", Item: "article", ID: a.ID, Vote: 1}})
		if err != nil {
			t.Fatal(err)
		}
		for user, want := range map[string]string{"carol": "+", "dave": "x"} {
			if v, _ := redis.String(b.do(t, "GETRANGE", k.userVotesKey(user), 0, 0), nil); v != want {
				t.Errorf("%s's first line after LogKill: sign %q, want %q", user, v, want)
			}
		}

		// LogLink: a value other than the one read is left; else the vote
		// is unlinked, and linked again.
		for _, x := range []struct {
			text string
			off  int64
			want string
		}{{"1", 0, "1@0"}, {"1@0", -1, "1"}, {"1@0", 0, "1"}, {"1", 0, "1@0"}} {
			err := restore.PutEntries(ctx, s, []restore.Entry{{Kind: restore.LogLink, User: "carol", Item: "article", ID: a.ID,
				Vote: 1, Text: x.text, Offset: x.off}})
			v, _ := redis.String(b.do(t, "HGET", k.votedKey(a.ID), "carol"), nil)
			if err != nil || v != x.want {
				t.Errorf("LogLink of %q to %d: %q, %v; want %q", x.text, x.off, v, err, x.want)
			}
		}
	})
}
