package voting

import (
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

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
