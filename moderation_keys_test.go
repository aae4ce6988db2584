package voting

// The vote log and the events as a vote writes them: named in the store's
// identity rather than sent with each call (lib/base.lua moderationIn),
// and written first unchecked where nothing comes before them, so that
// a foreign value there fails the vote after its counts and score are
// put back (lib/ballot.lua vote).

import (
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/internal/layout"
	"github.com/votekit/voting/testkit/redistest"
)

// TestModerationKeys keeps what lib/base.lua moderationIn reads in a
// store's identity, and the keys it names, to identity.go's words and
// keys.go's keys: the words as the identity spells them, the keys as
// the record's siblings in its hash tag.
func TestModerationKeys(t *testing.T) {
	for _, w := range []string{"' " + layout.OptionVoteLog + " '", "' " + layout.OptionEvents + "=(%d+) '",
		"tag .. '" + layout.UserVotes + "'", "tag .. '" + layout.Events + "'"} {
		if !strings.Contains(libLua, w) {
			t.Errorf("lib/base.lua moderationIn reads no %s", w)
		}
	}
	s, err := New(&redis.Pool{}, WithVoteLog(), WithVoteEvents(100))
	if err != nil {
		t.Fatal(err)
	}
	if got := " " + s.Identity().String() + " "; !strings.Contains(got, " "+layout.OptionVoteLog+" ") ||
		!strings.Contains(got, " "+layout.OptionEvents+"=100 ") {
		t.Errorf("identity %q names neither the log nor the events as moderationIn reads them", got)
	}
	for _, prefix := range []string{"voting", "site:news", "a}b"} {
		k := newKeys(prefix)
		tag := strings.TrimSuffix(k.record, "store")
		if tag+layout.UserVotes != k.userVotes || tag+layout.Events != k.events {
			t.Errorf("prefix %q: the log's prefix %q or the events' %q is not the record's sibling", prefix, k.userVotes, k.events)
		}
	}
}

// TestForeignValueAtModerationKeys runs TestForeignValueAtEveryKey's
// check on stores with a vote log, vote events or both, alone (a vote
// writes the first of them unchecked and puts its writes back where it
// fails) and with user pages and karma (a vote checks them before its
// first write): every vote, batch, comment vote and suspension either
// succeeds or fails having changed nothing. (ReverseVotes takes back an
// item whole before the next, and may fail after the items before it:
// reverse.lua.)
func TestForeignValueAtModerationKeys(t *testing.T) {
	t.Parallel() // under prefixes of its own
	srv := redistest.Shared(t)
	b := newBackend(t, "redis", srv.Addr, nil)
	sets := []struct {
		name string
		opts []Option
	}{
		{"log", []Option{WithVoteLog()}},
		{"events", []Option{WithVoteEvents(100)}},
		{"log and events", []Option{WithVoteLog(), WithVoteEvents(100)}},
		{"with pages and karma", []Option{WithVoteLog(), WithVoteEvents(100), WithUserPages(), WithKarma(1, -1)}},
	}
	for _, set := range sets {
		fixture := func(t *testing.T) (*Store, []Article) {
			s, _ := newStore(t, b, set.opts...)
			list := []Article{mustPost(t, s, "alice", "first"), mustPost(t, s, "dave", "second")}
			mustVote(t, s, "bob", list[0].ID, Upvote)
			mustVote(t, s, "carol", list[0].ID, Downvote)
			mustVote(t, s, "bob", list[1].ID, Upvote)
			c := mustComment(t, s, list[0].ID, "", "dave", "a comment")
			if _, err := s.VoteComment(ctx, "erin", c.ID, Upvote); err != nil {
				t.Fatal(err)
			}
			return s, list
		}
		ops := append(ballotOps[:len(ballotOps):len(ballotOps)], []storeOp{
			{"comment vote", func(s *Store, a []Article) error { _, err := s.VoteComment(ctx, "frank", "1", Upvote); return err }},
			{"comment cancel", func(s *Store, a []Article) error { _, err := s.VoteComment(ctx, "erin", "1", CancelVote); return err }},
			{"suspend", func(s *Store, a []Article) error {
				return s.Suspend(ctx, "frank", Refuse, a[0].Posted.AddDate(1, 0, 0))
			}},
		}...)
		for _, op := range ops {
			t.Run(set.name+"/"+op.name, func(t *testing.T) {
				t.Parallel() // each on stores of its own
				foreignValueAtEveryKey(t, b, fixture, op.name, op.call)
			})
		}
	}
}
