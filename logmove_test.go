package voting

// The migration of layout 6's vote logs, sorted sets, into the journals
// of this layout (reconfigure.go moveVoteLogs, lua/reconfigure.lua phase
// 'movelogs'), and the votes cast while it runs (lib/moderation.lua
// logVote6).

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/internal/layout"
)

// downgradeLogs rewrites the vote logs of s, a store of this layout with
// WithVoteLog, as layout 6 kept them, and records layout 6: each
// journal's standing lines become the entries of a sorted set at
// layout.UserVotes6 (LogEntry Member and Score; its lines taken back
// none), and each logged vote's value in its voter record is plain
// again, but for a comment poster's upvote, which layout 6 kept as no
// field.
func downgradeLogs(t testing.TB, b *backend, s *Store) {
	t.Helper()
	k := s.keys
	poster := func(cid string) string {
		rec, err := redis.String(b.do(t, "GET", k.comment+cid), nil)
		if err != nil {
			return ""
		}
		c, err := layout.ParseCommentRecord(rec)
		if err != nil {
			t.Fatalf("comment %s: %v", cid, err)
		}
		return c.Poster
	}
	for _, key := range b.storeKeys(t, s) {
		switch {
		case strings.HasPrefix(key, k.userVotes):
			user := strings.TrimPrefix(key, k.userVotes)
			text, err := redis.Bytes(b.do(t, "GET", key), nil)
			if err != nil {
				t.Fatal(err)
			}
			rest := layout.LogLines(text, 0, func(e layout.LogEntry, _ int64, ok bool) {
				if !ok {
					t.Fatalf("%s holds a line the store never writes", key)
				}
				if e.Vote != 0 {
					b.do(t, "ZADD", k.tag+layout.UserVotes6+user, e.Score(), e.Member())
				}
			})
			if len(rest) != 0 {
				t.Fatalf("%s ends in %q", key, rest)
			}
			b.do(t, "DEL", key)
		case strings.HasPrefix(key, k.voted), strings.HasPrefix(key, k.cvoted):
			fields, err := redis.StringMap(b.do(t, "HGETALL", key), nil)
			if err != nil {
				t.Fatal(err)
			}
			for f, v := range fields {
				if _, ok := layout.VoteLogOffset(v); !ok {
					continue
				}
				vote, _, _ := layout.ParseVoteValue(v)
				cid, user, isComment := strings.Cut(f, ":")
				if isComment && strings.HasPrefix(key, k.cvoted) && vote == 1 && poster(cid) == user {
					b.do(t, "HDEL", key, f)
				} else {
					b.do(t, "HSET", key, f, layout.VoteValue(vote, false))
				}
			}
		}
	}
	rec, err := redis.String(b.do(t, "GET", k.record), nil)
	if err != nil {
		t.Fatal(err)
	}
	b.do(t, "SET", k.record, "6"+strings.TrimPrefix(rec, strconv.Itoa(LayoutVersion)))
}

// votesBy returns every vote of the user's log, newest first, read by
// pages of limit.
func votesBy(t testing.TB, s *Store, user string, limit int) []UserVote {
	t.Helper()
	var all []UserVote
	cursor := ""
	for {
		page, next, err := s.VotesBy(ctx, user, cursor, limit)
		if err != nil {
			t.Fatalf("VotesBy %s: %v", user, err)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}

// moveStepArgs returns the arguments of one step of reconfigure.lua's
// phase 'movelogs' of s, as moveVoteLogs sends them, of step entries,
// from the SCAN cursor.
func moveStepArgs(s *Store, step int, cursor string) []interface{} {
	args := s.reconfigureArgs("movelogs")
	args[6] = step
	return append(args, "", cursor, layout.FamilyPattern(s.keys.prefix, layout.UserVotes6), s.keys.voted, s.keys.cvoted)
}

// logMoveOne runs one step of the move of s's logs of step entries from
// cursor, and returns its next cursor and whether the move is over.
func logMoveOne(t testing.TB, s *Store, step int, cursor string) (string, bool) {
	t.Helper()
	var next string
	var done int64
	if _, err := s.evalScan(ctx, "move", reconfigureScript, moveStepArgs(s, step, cursor), &next, &done); err != nil {
		t.Fatal(err)
	}
	return next, done == 1
}

// TestMoveVoteLogs: a store of layout 6 with vote logs (made by
// rewriting a store of this layout as layout 6 kept it: downgradeLogs)
// refuses this library's calls, saying to run Reconfigure; Reconfigure
// moves its logs back to exactly the store it was, the lines formatted
// in Lua byte for byte as layout.LogEntry Line writes them, and each
// logged vote's voter record pointing at its line: votes on open and
// closed articles and comments, a comment poster's own upvote cast
// again, a shadow vote, a vote whose voter record expired, and a
// suspension on (whose end the record carries). Then VotesBy lists what
// it did, a switch takes the moved line back, and ReverseVotes takes
// the votes back.
func TestMoveVoteLogs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithVoteLog(), WithKarma(1, -1), WithUserPages(), WithVoteWindow(time.Hour))
		tick := func() { clock.Add(time.Second) }
		open := mustPost(t, s, "alice", "open")
		other := mustPost(t, s, "alice", "other")
		c1 := mustComment(t, s, open.ID, "", "carol", "carol's")
		c2 := mustComment(t, s, open.ID, c1.ID, "bob", "bob's")
		clock.Add(30 * time.Minute)
		late := mustPost(t, s, "dave", "late")
		c3 := mustComment(t, s, late.ID, "", "erin", "erin's")
		vote := func(user, id string, v VoteType) { tick(); mustVote(t, s, user, id, v) }
		voteComment := func(user, id string, v VoteType) { tick(); mustVoteComment(t, s, user, id, v) }
		vote("bob", open.ID, Upvote)
		vote("carol", open.ID, Downvote)
		vote("bob", other.ID, Downvote)
		voteComment("bob", c1.ID, Upvote)
		voteComment("dave", c2.ID, Downvote)
		voteComment("carol", c1.ID, CancelVote) // the poster's own upvote off, unlogged,
		voteComment("carol", c1.ID, Upvote)     // and cast again: logged
		voteComment("bob", c2.ID, Downvote)     // the poster's own vote, switched
		vote("carol", late.ID, Upvote)
		voteComment("carol", c3.ID, Downvote)
		vote("erin", other.ID, Upvote)
		if err := s.Suspend(ctx, "zed", Shadow, clock.Now().Add(24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		vote("zed", open.ID, Upvote) // a shadow vote, in no log
		// The first article and its comments close; the other's voter
		// record expires (deleted here, as its expiry on the server's
		// clock would), its votes logged still.
		clock.Add(40 * time.Minute)
		b.do(t, "DEL", s.keys.votedKey(other.ID))
		vote("bob", late.ID, Downvote) // open still
		users := []string{"alice", "bob", "carol", "dave", "erin", "zed"}
		lists := map[string][]UserVote{}
		for _, u := range users {
			lists[u] = votesBy(t, s, u, 2)
		}
		if len(lists["bob"]) != 5 || len(lists["carol"]) != 4 || len(lists["zed"]) != 0 {
			t.Fatalf("the logs before: %v", lists)
		}
		want := dumpStore(t, b, s)
		if !strings.Contains(want, `"1@`) || !strings.Contains(want, `"1s"`) {
			t.Fatalf("no logged or shadow vote in the store:\n%s", want)
		}

		downgradeLogs(t, b, s)
		if n, _ := redis.Int(b.do(t, "ZCARD", s.keys.tag+layout.UserVotes6+"bob"), nil); n != 5 {
			t.Fatalf("bob's log of layout 6 holds %d entries, want 5", n)
		}
		before := dumpStore(t, b, s)
		calls := map[string]func() error{
			"Vote":         func() error { _, err := s.Vote(ctx, "bob", late.ID, Upvote); return err },
			"VoteComment":  func() error { _, err := s.VoteComment(ctx, "bob", c3.ID, Upvote); return err },
			"VotesBy":      func() error { _, _, err := s.VotesBy(ctx, "bob", "", 10); return err },
			"ReverseVotes": func() error { _, err := s.ReverseVotes(ctx, "bob"); return err },
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "Reconfigure") {
				t.Errorf("%s on layout 6: %v, want ErrIncompatible naming Reconfigure", name, err)
			}
		}
		wantUnchanged(t, b, s, "the calls refused on layout 6", before)

		was, err := s.Reconfigure(ctx)
		if err != nil || was.Layout != 6 || !slices.Contains(was.Options, layout.OptionVoteLog) {
			t.Fatalf("Reconfigure = %v, %v", was, err)
		}
		if got := dumpStore(t, b, s); got != want {
			t.Fatalf("moved:\n%s\nwant\n%s", got, want)
		}
		for _, u := range users {
			if got := votesBy(t, s, u, 3); !slices.Equal(got, lists[u]) {
				t.Errorf("VotesBy %s after the move = %v, want %v", u, got, lists[u])
			}
		}

		// A switch after the move takes the moved line back.
		journal := func(user string) string {
			text, _ := redis.String(b.do(t, "GET", s.keys.userVotesKey(user)), nil)
			return text
		}
		line := layout.LogEntry{ID: late.ID, Vote: -1, At: lists["bob"][0].At.Unix()}.Line()
		off := strings.Index(journal("bob"), line)
		if off < 0 || lists["bob"][0].ID != late.ID {
			t.Fatalf("bob's journal %q lacks %q", journal("bob"), line)
		}
		vote("bob", late.ID, Upvote)
		if got := journal("bob"); got[off] != layout.LogDead {
			t.Errorf("bob's switched vote left its line standing: %q", got)
		}
		if got := votesBy(t, s, "bob", 10); len(got) != 5 || got[0].ID != late.ID || got[0].Vote != Upvote {
			t.Errorf("VotesBy bob after the switch = %v", got)
		}
		// ReverseVotes takes back the votes, on closed items too.
		if n, err := s.ReverseVotes(ctx, "carol"); err != nil || n != 4 {
			t.Fatalf("ReverseVotes carol = %d, %v; want 4", n, err)
		}
		a, err := s.Article(ctx, open.ID)
		if err != nil || a.Upvotes != 2 || a.Downvotes != 0 {
			t.Errorf("the open article after carol's reversal: %+v, %v; want alice's and bob's upvotes", a, err)
		}
	})
}

// TestMoveVoteLogsVotesDuringMove: while Reconfigure moves the logs, in
// steps run one by one, the votes of users whose logs are moved, half
// moved and not moved yet, a new voter's, a batch's and a comment
// poster's own upvote cast again are kept; VotesBy and ReverseVotes
// refuse, saying that Reconfigure moves the logs; the other calls work.
// Once moved, every log lists what a twin store that voted the same on
// this layout lists, in the same order, and a reversal takes back the
// same votes.
func TestMoveVoteLogsVotesDuringMove(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		opts := []Option{WithVoteLog(), WithKarma(1, -1), WithVoteWindow(time.Hour)}
		s, clock := newStore(t, b, opts...)
		twin, twinClock := newStore(t, b, opts...)
		stores := []*Store{s, twin}
		both := func(f func(s *Store)) {
			for _, st := range stores {
				f(st)
			}
		}
		tick := func() { clock.Add(time.Second); twinClock.Add(time.Second) }
		var ids []string
		for i := 0; i < 6; i++ {
			var id string
			both(func(st *Store) { id = mustPost(t, st, "poster", "t"+strconv.Itoa(i)).ID })
			ids = append(ids, id)
		}
		var cid string
		both(func(st *Store) { cid = mustComment(t, st, ids[0], "", "carol", "hers").ID })
		vote := func(user, id string, v VoteType) {
			t.Helper()
			tick()
			both(func(st *Store) { mustVote(t, st, user, id, v) })
		}
		voteComment := func(user, id string, v VoteType) {
			t.Helper()
			tick()
			both(func(st *Store) { mustVoteComment(t, st, user, id, v) })
		}
		// Layout 6's votes: bob's log the longest, carol's and dave's short.
		for i := 0; i < 5; i++ {
			vote("bob", ids[i], []VoteType{Upvote, Downvote}[i%2])
		}
		voteComment("bob", cid, Upvote)
		vote("carol", ids[0], Upvote)
		voteComment("carol", cid, CancelVote)
		vote("dave", ids[1], Downvote)
		downgradeLogs(t, b, s)
		// A step is about the entries of its budget.
		if err := func() error {
			_, err := s.eval(ctx, reconfigureScript, append(s.reconfigureArgs("record"), "keep"))
			return err
		}(); err != nil {
			t.Fatal(err)
		}
		rec, _ := redis.String(b.do(t, "GET", s.keys.record), nil)
		if !strings.HasSuffix(rec, logsMovingMark) || recordIdentity(rec) != s.Identity().String() {
			t.Fatalf("record during the move %q", rec)
		}
		cursor, done := logMoveOne(t, s, 3, "0")
		if done {
			t.Fatal("the move done in a step of 3")
		}

		// During the move.
		refused := map[string]func() error{
			"VotesBy":      func() error { _, _, err := s.VotesBy(ctx, "bob", "", 10); return err },
			"ReverseVotes": func() error { _, err := s.ReverseVotes(ctx, "erin"); return err },
		}
		for name, call := range refused {
			if err := call(); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "vote logs of layout 6") {
				t.Errorf("%s during the move: %v, want ErrIncompatible", name, err)
			}
		}
		if err := s.CheckIdentity(ctx); err != nil {
			t.Errorf("CheckIdentity during the move: %v", err)
		}
		if h, err := s.Check(ctx); err != nil || !h.Compatible || !strings.Contains(fmt.Sprint(h.Problems), "every vote log of layout 6") {
			t.Errorf("Check during the move: %+v, %v; want the move among its problems", h, err)
		}
		if id, _, err := s.Recorded(ctx); err != nil || id.String() != s.Identity().String() {
			t.Errorf("Recorded during the move = %v, %v", id, err)
		}
		vote("bob", ids[0], Downvote)   // switched
		vote("bob", ids[4], CancelVote) // cancelled
		vote("bob", ids[5], Upvote)     // new
		vote("carol", ids[0], Downvote) // a log not moved yet, or moved: whichever the SCAN took first
		voteComment("carol", cid, Upvote)
		vote("dave", ids[1], CancelVote) // dave's log goes empty
		vote("dave", ids[2], Upvote)
		vote("erin", ids[3], Upvote) // a new voter: the journal
		tick()
		both(func(st *Store) {
			if _, err := st.VoteBatch(ctx, []Ballot{{User: "erin", ID: ids[4], Vote: Downvote}, {User: "bob", ID: ids[1], Vote: Upvote}}); err != nil {
				t.Fatal(err)
			}
		})
		both(func(st *Store) { mustComment(t, st, ids[1], "", "frank", "during") })
		// A foreign value at a log of layout 6 fails the vote, which
		// changes nothing.
		b.do(t, "SET", s.keys.tag+layout.UserVotes6+"zed", "foreign")
		beforeFail := dumpStore(t, b, s)
		if _, err := s.Vote(ctx, "zed", ids[0], Upvote); err == nil || !strings.Contains(err.Error(), "not a zset") {
			t.Errorf("a vote with a foreign value at its log of layout 6: %v", err)
		}
		if _, err := s.VoteComment(ctx, "zed", cid, Upvote); err == nil || !strings.Contains(err.Error(), "not a zset") {
			t.Errorf("a comment vote with a foreign value at its log of layout 6: %v", err)
		}
		wantUnchanged(t, b, s, "the votes failed", beforeFail)
		b.do(t, "DEL", s.keys.tag+layout.UserVotes6+"zed")

		// Another step, then the rest (an interrupted Reconfigure resumed).
		if _, done = logMoveOne(t, s, 3, cursor); done {
			t.Fatal("the move done in two steps of 3")
		}
		vote("bob", ids[2], Downvote)
		if _, err := s.Reconfigure(ctx); err != nil {
			t.Fatal(err)
		}
		rec, _ = redis.String(b.do(t, "GET", s.keys.record), nil)
		if rec != s.Identity().String() {
			t.Errorf("record after the move %q", rec)
		}
		if keys := b.storeKeys(t, s); strings.Contains(strings.Join(keys, " "), layout.UserVotes6) {
			t.Errorf("logs of layout 6 left: %v", keys)
		}
		vote("bob", ids[3], Upvote) // after
		for _, u := range []string{"bob", "carol", "dave", "erin", "frank"} {
			got, wantList := votesBy(t, s, u, 2), votesBy(t, twin, u, 2)
			if !slices.Equal(got, wantList) {
				t.Errorf("VotesBy %s after the move = %v, want the twin's %v", u, got, wantList)
			}
			if u == "bob" && len(got) != 6 {
				t.Errorf("VotesBy bob = %v, want 6 votes", got)
			}
		}
		// Every value in a voter record points at its standing line.
		checkLogOffsets(t, b, s)
		for _, u := range []string{"bob", "carol"} {
			n, err := s.ReverseVotes(ctx, u)
			m, err2 := twin.ReverseVotes(ctx, u)
			if err != nil || err2 != nil || n != m {
				t.Errorf("ReverseVotes %s = %d, %v; the twin's %d, %v", u, n, err, m, err2)
			}
		}
		for _, id := range ids {
			a, err := s.Article(ctx, id)
			w, err2 := twin.Article(ctx, id)
			if err != nil || err2 != nil || a.Upvotes != w.Upvotes || a.Downvotes != w.Downvotes || a.Score != w.Score {
				t.Errorf("article %s after the reversals: %+v, %v; the twin's %+v, %v", id, a, err, w, err2)
			}
		}
	})
}

// checkLogOffsets fails t unless every logged vote's value in s's voter
// records ("1@<off>") points at a standing line of its voter's journal
// of that vote on that item.
func checkLogOffsets(t testing.TB, b *backend, s *Store) {
	t.Helper()
	k := s.keys
	for _, key := range b.storeKeys(t, s) {
		comment := strings.HasPrefix(key, k.cvoted)
		if !comment && !strings.HasPrefix(key, k.voted) {
			continue
		}
		fields, err := redis.StringMap(b.do(t, "HGETALL", key), nil)
		if err != nil {
			t.Fatal(err)
		}
		for f, v := range fields {
			off, ok := layout.VoteLogOffset(v)
			if !ok {
				continue
			}
			vote, _, _ := layout.ParseVoteValue(v)
			e := layout.LogEntry{Comment: comment, ID: strings.TrimPrefix(key, k.voted), Vote: vote}
			user := f
			if comment {
				e.ID, user, _ = strings.Cut(f, ":")
			}
			head := e.Line()[:len(e.Member())+1] + " "
			got, _ := redis.String(b.do(t, "GETRANGE", k.userVotesKey(user), off, off+int64(len(head))-1), nil)
			if got != head {
				t.Errorf("%s %s = %q: its journal holds %q there, want %q", key, f, v, got, head)
			}
		}
	}
}

// TestMoveVoteLogsBounded: a user's log of 10,000 entries moves in
// steps of at most the budget's entries, the journal byte for byte what
// layout.LogEntry Line writes, oldest first; an interrupted move
// resumes.
func TestMoveVoteLogsBounded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithVoteLog())
		mustPost(t, s, "alice", "t")
		const n = 10000
		key := s.keys.tag + layout.UserVotes6 + "bob"
		var want strings.Builder
		args := []interface{}{key}
		for i := 1; i <= n; i++ {
			e := layout.LogEntry{Comment: i%3 == 0, ID: strconv.Itoa(1000 + i), Vote: 1 - 2*(i%2), At: epoch.Unix() - n + int64(i/2)}
			args = append(args, e.Score(), e.Member())
		}
		b.do(t, "ZADD", args...)
		// The entries in the order of the sorted set: by score, then by member.
		list, err := redis.Strings(b.do(t, "ZRANGE", key, 0, -1, "WITHSCORES"), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(list); i += 2 {
			score, _ := strconv.ParseFloat(list[i+1], 64)
			e, ok := layout.ParseLogEntry(list[i], score)
			if !ok {
				t.Fatalf("entry %q %q", list[i], list[i+1])
			}
			want.WriteString(e.Line())
		}
		b.do(t, "ZADD", s.keys.tag+layout.UserVotes6+"carol", 2*epoch.Unix()+1, "a1")
		b.do(t, "SET", s.keys.record, "6 votelog")
		if _, err := s.eval(ctx, reconfigureScript, append(s.reconfigureArgs("record"), "keep")); err != nil {
			t.Fatal(err)
		}
		// Steps one by one, until 10 have moved entries (a step whose
		// SCAN finds no log moves none), then the rest of the move from
		// Reconfigure, as a call again after an interruption.
		cursor, moving, left := "0", 0, n+1
		for steps := 0; moving < 10; steps++ {
			var done bool
			cursor, done = logMoveOne(t, s, logMoveStep, cursor)
			if done || steps > 1000 {
				t.Fatalf("done after %d steps, %d of which moved entries", steps, moving)
			}
			bob, _ := redis.Int(b.do(t, "ZCARD", key), nil)
			carol, _ := redis.Int(b.do(t, "ZCARD", s.keys.tag+layout.UserVotes6+"carol"), nil)
			moved := left - bob - carol
			if moved < 0 || moved > logMoveStep {
				t.Fatalf("step %d moved %d entries, budget %d", steps, moved, logMoveStep)
			}
			if moved > 0 {
				moving++
			}
			left = bob + carol
		}
		if _, err := s.Reconfigure(ctx); err != nil {
			t.Fatal(err)
		}
		got, _ := redis.String(b.do(t, "GET", s.keys.userVotesKey("bob")), nil)
		if got != want.String() {
			t.Fatalf("bob's journal: %d bytes, want %d; first lines %q, want %q", len(got), want.Len(), got[:min(80, len(got))], want.String()[:80])
		}
		if got, _ := redis.String(b.do(t, "GET", s.keys.userVotesKey("carol")), nil); got != (layout.LogEntry{ID: "1", Vote: 1, At: epoch.Unix()}).Line() {
			t.Errorf("carol's journal %q", got)
		}
		if rec, _ := redis.String(b.do(t, "GET", s.keys.record), nil); rec != s.Identity().String() {
			t.Errorf("record after the move %q", rec)
		}
	})
}

// TestMigrateLayout6: a store of layout 6 without the vote log gets
// ErrIncompatible saying to run Reconfigure, which records this layout
// and moves nothing; one with the log, migrated by a store without it,
// loses its logs (both layouts' families) and gets no mark; one without
// it, migrated by a store with it, loses any log of layout 6 left. A
// record marked by both moves, comments' and logs', with a suspension's
// end, lets votes through and refuses the calls of each.
func TestMigrateLayout6(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithKarma(1, -1))
		a := mustPost(t, s, "alice", "t")
		mustVote(t, s, "bob", a.ID, Upvote)
		b.do(t, "SET", s.keys.record, "6 karma")
		if _, err := s.Vote(ctx, "carol", a.ID, Upvote); !errors.Is(err, ErrIncompatible) ||
			!strings.Contains(err.Error(), "layout 6, this library reads "+strconv.Itoa(LayoutVersion)+": Reconfigure") {
			t.Fatalf("a vote on layout 6: %v", err)
		}
		before := dumpStore(t, b, s)
		was, err := s.Reconfigure(ctx)
		if err != nil || was.String() != "6 karma" {
			t.Fatalf("Reconfigure = %v, %v", was, err)
		}
		after := strings.Replace(before, `"6 karma"`, strconv.Quote(s.Identity().String()), 1)
		wantUnchanged(t, b, s, "Reconfigure of layout 6 without the log", after)
		mustVote(t, s, "carol", a.ID, Upvote)

		// The log off: both families go.
		log6 := s.keys.tag + layout.UserVotes6 + "bob"
		b.do(t, "ZADD", log6, 2*a.Posted.Unix()+1, "a"+a.ID)
		b.do(t, "SET", s.keys.userVotesKey("bob"), "+a"+a.ID+" 1\n")
		b.do(t, "SET", s.keys.record, "6 karma votelog")
		if _, err := s.Reconfigure(ctx); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{log6, s.keys.userVotesKey("bob")} {
			if n, _ := redis.Int(b.do(t, "EXISTS", key), nil); n != 0 {
				t.Errorf("%s kept with the log turned off", key)
			}
		}
		if rec, _ := redis.String(b.do(t, "GET", s.keys.record), nil); rec != s.Identity().String() {
			t.Errorf("record %q", rec)
		}
		// The log on, from a store of layout 6 without it: a log of
		// layout 6 left goes.
		logged, _ := otherStore(t, s, clock.Now(), WithKarma(1, -1), WithVoteLog())
		b.do(t, "ZADD", log6, 2*a.Posted.Unix()+1, "a"+a.ID)
		b.do(t, "SET", s.keys.record, "6 karma")
		if _, err := logged.Reconfigure(ctx); err != nil {
			t.Fatal(err)
		}
		if n, _ := redis.Int(b.do(t, "EXISTS", log6), nil); n != 0 {
			t.Errorf("a log of layout 6 kept with the log turned on")
		}
		if rec, _ := redis.String(b.do(t, "GET", s.keys.record), nil); rec != logged.Identity().String() {
			t.Errorf("record %q", rec)
		}

		// Both marks and a suspension's end.
		if err := logged.Suspend(ctx, "sue", Refuse, clock.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		rec, _ := redis.String(b.do(t, "GET", s.keys.record), nil)
		id, end, _ := strings.Cut(rec, "\n")
		b.do(t, "SET", s.keys.record, id+movingMark+logsMovingMark+"\n"+end)
		b.do(t, "ZADD", log6, 2*a.Posted.Unix()+1, "a"+a.ID)
		if _, err := logged.Vote(ctx, "bob", a.ID, Downvote); err != nil {
			t.Errorf("a vote under both marks: %v", err)
		}
		if n, _ := redis.Int(b.do(t, "ZCARD", log6), nil); n != 1 {
			t.Errorf("bob's vote left his log of layout 6 with %d entries", n)
		}
		if _, err := logged.Vote(ctx, "sue", a.ID, Downvote); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("a suspended user's vote under both marks: %v", err)
		}
		if _, _, err := logged.VotesBy(ctx, "bob", "", 10); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "vote logs") {
			t.Errorf("VotesBy under both marks: %v", err)
		}
		if _, err := logged.Comment(ctx, a.ID, "", "bob", "x"); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "comments of layout 4") {
			t.Errorf("Comment under both marks: %v", err)
		}
		if id, _, err := logged.Recorded(ctx); err != nil || id.String() != logged.Identity().String() {
			t.Errorf("Recorded under both marks = %v, %v", id, err)
		}
		// A reader of other options refuses VotesBy as well.
		reader, _ := otherStore(t, s, clock.Now(), WithVoteLog())
		if _, _, err := reader.VotesBy(ctx, "bob", "", 10); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "vote logs") {
			t.Errorf("VotesBy of other options under the mark: %v", err)
		}
	})
}

// TestLogMoveKeys keeps the key of a log of layout 6, which the move
// and the votes during it name from the record's key (lib/moderation.lua
// log6Key, its one spelling in Lua; reconfigure.lua's phase 'movelogs'
// calls it, and names the journals as lib/base.lua moderationIn does),
// to internal/layout's family, and the marks of the record to
// identity.go's.
func TestLogMoveKeys(t *testing.T) {
	if w := "'" + layout.UserVotes6 + "' .. user"; strings.Count(libLua, "'"+layout.UserVotes6+"'") != 1 || !strings.Contains(libLua, w) {
		t.Errorf("lib/ names layout 6's logs other than once, as %s", w)
	}
	for _, w := range []string{layout.UserVotes6, layout.UserVotes} {
		if strings.Contains(reconfigureLua, "'"+w+"'") {
			t.Errorf("reconfigure.lua spells '%s' again", w)
		}
	}
	for _, w := range []string{"local MOVING = '" + movingMark + "'", "local LOGS_MOVING = '" + logsMovingMark + "'",
		"'" + strings.TrimSuffix(logsMovingPrefix, " ")} {
		if !strings.Contains(libLua, w) {
			t.Errorf("lib/base.lua lacks %s", w)
		}
	}
	if got := recordIdentity("7 votelog" + movingMark + logsMovingMark + "\n123"); got != "7 votelog" {
		t.Errorf("recordIdentity of a record of both marks = %q", got)
	}
}
