package voting

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/votekit/voting/internal/layout"
)

// The vote log is a journal of a line a vote (layout.LogEntry): these
// tests hold what the journal adds to the log's contract.

// journalOf reads user's vote log as its entries, oldest first, and
// fails on a line the store never writes.
func journalOf(t *testing.T, b *backend, s *Store, user string) []layout.LogEntry {
	t.Helper()
	text, err := redis.Bytes(b.do(t, "GET", s.keys.userVotesKey(user)), nil)
	if err != nil && !errors.Is(err, redis.ErrNil) {
		t.Fatal(err)
	}
	var es []layout.LogEntry
	if rest := layout.LogLines(text, 0, func(e layout.LogEntry, off int64, ok bool) {
		if !ok {
			t.Errorf("%s's log: no line at %d: %q", user, off, text)
		}
		es = append(es, e)
	}); len(rest) != 0 {
		t.Errorf("%s's log ends in half a line: %q", user, text)
	}
	return es
}

// TestJournalMarksChangedVotes: a switch and a cancel mark the line of
// the vote they change taken back, in place, and append the new vote's;
// the voter record's field names the new line.
func TestJournalMarksChangedVotes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteLog())
		a := mustPost(t, s, "p", "a")
		c := mustPost(t, s, "p", "c")
		at := clock.Now().Unix()
		mustVote(t, s, "u", a.ID, Upvote)
		mustVote(t, s, "u", c.ID, Upvote)
		mustVote(t, s, "u", a.ID, Downvote)
		mustVote(t, s, "u", c.ID, CancelVote)
		want := []layout.LogEntry{{ID: a.ID, At: at}, {ID: c.ID, At: at}, {ID: a.ID, Vote: -1, At: at}}
		got := journalOf(t, b, s, "u")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("u's log %+v, want %+v", got, want)
		}
		off := int64(len(want[0].Line()) + len(want[1].Line()))
		v, err := redis.String(b.do(t, "HGET", s.keys.votedKey(a.ID), "u"), nil)
		if err != nil || v != layout.LoggedVoteValue(-1, off) {
			t.Errorf("u's vote on %s: %q, %v; want %q", a.ID, v, err, layout.LoggedVoteValue(-1, off))
		}
		if page, _, err := s.VotesBy(ctx, "u", "", 10); err != nil || len(page) != 1 || page[0].Vote != Downvote {
			t.Errorf("VotesBy: %+v, %v; want the downvote alone", page, err)
		}
	})
}

// TestJournalStaleOffset: a voter record's field may name a line of a
// log that Reconfigure dropped (the log turned off, then on): the vote
// that changes it leaves the new log's line at that offset alone.
func TestJournalStaleOffset(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		logged, clock := newStore(t, b, WithVoteLog())
		plain, err := New(b.pool, WithKeyPrefix(logged.keys.prefix), WithClock(clock.Now))
		if err != nil {
			t.Fatal(err)
		}
		plain.pool = logged.pool
		a := mustPost(t, logged, "p", "a")
		c := mustPost(t, logged, "p", "c")
		mustVote(t, logged, "u", a.ID, Upvote) // "1@0", in the log dropped next
		for _, s := range []*Store{plain, logged} {
			if _, err := s.Reconfigure(ctx); err != nil {
				t.Fatal(err)
			}
		}
		mustVote(t, logged, "u", c.ID, Upvote) // the new log's line at 0
		mustVote(t, logged, "u", a.ID, Downvote)
		page, _, err := logged.VotesBy(ctx, "u", "", 10)
		if err != nil || len(page) != 2 || page[0].ID != a.ID || page[1].ID != c.ID || page[1].Vote != Upvote {
			t.Errorf("VotesBy: %+v, %v; want the downvote on %s, then the upvote on %s", page, err, a.ID, c.ID)
		}
	})
}

// TestJournalPagesOverTakenBack: a walk of a log of many lines taken
// back lists each standing vote once, in order, with pages that may
// hold fewer than their limit; a cursor inside a line is refused.
func TestJournalPagesOverTakenBack(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteLog())
		var ids []string
		for i := 0; i < 12; i++ {
			ids = append(ids, mustPost(t, s, "p", "t"+strconv.Itoa(i)).ID)
		}
		var want []string // newest first
		for i, id := range ids {
			clock.Add(time.Second)
			mustVote(t, s, "u", id, Upvote)
			if i%3 != 0 {
				for j := 0; j < 6; j++ { // lines taken back
					mustVote(t, s, "u", id, []VoteType{Downvote, Upvote}[j%2])
				}
				want = append([]string{id}, want...)
			} else {
				mustVote(t, s, "u", id, CancelVote)
			}
		}
		for _, limit := range []int{1, 2, 5} {
			var got []string
			cursor, pages := "", 0
			for {
				page, next, err := s.VotesBy(ctx, "u", cursor, limit)
				if err != nil || len(page) > limit {
					t.Fatalf("limit %d: page %+v, %v", limit, page, err)
				}
				for _, v := range page {
					got = append(got, v.ID)
				}
				if pages++; next == "" || pages > 100 {
					break
				}
				cursor = next
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("limit %d: %v, want %v", limit, got, want)
			}
		}
		_, next, err := s.VotesBy(ctx, "u", "", 1)
		if err != nil || next == "" {
			t.Fatal(next, err)
		}
		n, _ := strconv.Atoi(next)
		if _, _, err := s.VotesBy(ctx, "u", strconv.Itoa(n-2), 1); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("a cursor inside a line: %v; want ErrInvalidArgument", err)
		}
	})
}

// TestReverseVotesRemovesJournal: a reversal removes the log it took
// back whole; a vote the user casts between two of its steps is taken
// back by a walk over the votes cast since.
func TestReverseVotesRemovesJournal(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteLog())
		var ids []string
		for i := 0; i < 8; i++ {
			ids = append(ids, mustPost(t, s, "p", "t"+strconv.Itoa(i)).ID)
		}
		for _, id := range ids[:6] {
			mustVote(t, s, "u", id, Upvote)
		}
		s.reverseStep = 2
		steps := 0
		n, err := s.reverseVotes(ctx, "u", func(int) {
			if steps++; steps == 1 { // between two steps: one more vote
				mustVote(t, s, "u", ids[6], Downvote)
			}
		})
		if err != nil || n != 7 {
			t.Fatalf("ReverseVotes: %d, %v; want 7", n, err)
		}
		if e, _ := redis.Int(b.do(t, "EXISTS", s.keys.userVotesKey("u")), nil); e != 0 {
			t.Errorf("u's log is kept after the reversal: %+v", journalOf(t, b, s, "u"))
		}
		for _, id := range ids[:7] {
			if a, err := s.Article(ctx, id); err != nil || a.Upvotes != 1 || a.Downvotes != 0 {
				t.Errorf("article %s after the reversal: %+v, %v; want the poster's upvote alone", id, a, err)
			}
		}
		// Interrupted, then called again: the lines taken back are
		// passed over.
		for _, id := range ids {
			mustVote(t, s, "u", id, Upvote)
		}
		cctx, cancel := context.WithCancel(ctx)
		first, err := s.reverseVotes(cctx, "u", func(int) { cancel() })
		if !errors.Is(err, context.Canceled) || first != 2 {
			t.Fatalf("interrupted: %d, %v", first, err)
		}
		if rest, err := s.ReverseVotes(ctx, "u"); err != nil || first+rest != len(ids) {
			t.Errorf("resumed: %d + %d, %v; want %d", first, rest, err, len(ids))
		}
	})
}
