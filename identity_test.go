package voting

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"
)

// dumpStore is every key of s with its type and contents.
func dumpStore(t testing.TB, b *backend, s *Store) string {
	t.Helper()
	var out strings.Builder
	for _, k := range b.storeKeys(t, s) {
		fmt.Fprintf(&out, "%s %s %q\n", k, keyType(t, b, k), contents(t, b, k))
	}
	return out.String()
}

// TestIdentityRecorded: an empty store has no record, and reads pass;
// the first Post records the store's identity.
func TestIdentityRecorded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithOrders(Hot, Top), WithKarma(1, -1), WithUserPages(), WithUniqueLinks(),
			WithVoteLimit(10, time.Minute), WithEditWindow(time.Hour))
		want := "7 orders=top,hot karma votelimit editwindow userpages uniquelinks"
		if got := s.Identity().String(); got != want {
			t.Fatalf("Identity = %q, want %q", got, want)
		}
		if id, ok, err := s.Recorded(ctx); err != nil || ok {
			t.Fatalf("Recorded of an empty store = %v, %v, %v", id, ok, err)
		}
		if _, err := s.Vote(ctx, "bob", "1", Upvote); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Vote on an empty store = %v", err)
		}
		if v, err := s.VotesOf(ctx, "bob", []string{"1", "2"}); err != nil || v[0] != NoVote || v[1] != NoVote {
			t.Fatalf("VotesOf on an empty store = %v, %v", v, err)
		}
		if keys := b.storeKeys(t, s); len(keys) != 0 {
			t.Fatalf("a refused Vote wrote %v", keys)
		}
		mustPost(t, s, "alice", "first")
		id, ok, err := s.Recorded(ctx)
		if err != nil || !ok || id.String() != want || id.Layout != LayoutVersion {
			t.Fatalf("Recorded = %v, %v, %v; want %q", id, ok, err, want)
		}
		// Drop removes the record with the rest; the next Post records again.
		if err := s.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		if keys := b.storeKeys(t, s); len(keys) != 0 {
			t.Fatalf("keys after Drop: %v", keys)
		}
	})
}

// TestIncompatibleOptions: a store whose shared options differ from the
// record gets ErrIncompatible, naming the difference, on every write,
// which changes nothing; its reads run.
func TestIncompatibleOptions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithOrders(Top))
		a := mustPost(t, s, "alice", "first")
		mustVote(t, s, "bob", a.ID, Upvote)
		if err := s.AddToGroups(ctx, a.ID, "g"); err != nil {
			t.Fatal(err)
		}
		other, err := New(s.pool, WithKeyPrefix(s.keys.prefix), WithClock(clock.Now), WithKarma(1, -1), WithUserPages(),
			WithEditWindow(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		before := dumpStore(t, b, s)
		writes := map[string]func() error{
			"Post":             func() error { _, err := other.Post(ctx, "carol", "t", "https://x.example"); return err },
			"Vote":             func() error { _, err := other.Vote(ctx, "carol", a.ID, Downvote); return err },
			"Cancel":           func() error { _, err := other.Vote(ctx, "bob", a.ID, CancelVote); return err },
			"Edit":             func() error { _, err := other.Edit(ctx, a.ID, "alice", "e", ""); return err },
			"AddToGroups":      func() error { return other.AddToGroups(ctx, a.ID, "h") },
			"RemoveFromGroups": func() error { return other.RemoveFromGroups(ctx, a.ID, "g") },
			"Delete":           func() error { return other.Delete(ctx, a.ID) },
			"Prune":            func() error { _, err := other.Prune(ctx, clock.Now().Add(time.Hour)); return err },
			"VoteBatch": func() error {
				r, err := other.VoteBatch(ctx, []Ballot{{User: "dave", ID: a.ID, Vote: Upvote}})
				if err == nil {
					err = r[0].Err
				}
				return err
			},
		}
		for name, call := range writes {
			err := call()
			if !errors.Is(err, ErrIncompatible) {
				t.Errorf("%s: %v, want ErrIncompatible", name, err)
				continue
			}
			for _, part := range []string{"orders off here, top in the store", "karma on here, off in the store",
				"userpages on here, off in the store", "editwindow on here, off in the store"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("%s: %q does not say %q", name, err, part)
				}
			}
		}
		if after := dumpStore(t, b, s); after != before {
			t.Errorf("refused writes changed the store:\n%s\nwas\n%s", after, before)
		}
		// Reads run: the layout is the same.
		if got, err := other.Article(ctx, a.ID); err != nil || got.Upvotes != 2 {
			t.Errorf("Article = %+v, %v", got, err)
		}
		if list, err := other.Articles(ctx, ScoreDesc, 1); err != nil || len(list) != 1 {
			t.Errorf("Articles = %v, %v", list, err)
		}
		if v, err := other.VotesOf(ctx, "bob", []string{a.ID}); err != nil || v[0] != Upvote {
			t.Errorf("VotesOf = %v, %v", v, err)
		}
		// The recorded store writes on.
		mustVote(t, s, "carol", a.ID, Upvote)
	})
}

// TestOldLayout: a store of an earlier layout, an article kept as a
// hash at article:1 with the counter and no record, or a record of
// layout 2, reads and writes as ErrIncompatible, never not found.
func TestOldLayout(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, record := range []string{"", "2", strconv.Itoa(LayoutVersion+1) + " karma=1,-1"} {
			s, clock := newStore(t, b)
			b.do(t, "HSET", s.keys.articleKey("1"), "title", "old", "link", "", "poster", "alice", "time", epoch.Unix(), "votes", 1)
			b.do(t, "SET", s.keys.seq, "1")
			b.do(t, "ZADD", s.keys.orderingKey("time"), epoch.Unix(), "article:1")
			if record != "" {
				b.do(t, "SET", s.keys.record, record)
			}
			want := "has data and no recorded layout"
			if record != "" {
				want = "layout " + record[:1] + ", this library reads " + strconv.Itoa(LayoutVersion)
			}
			before := dumpStore(t, b, s)
			calls := map[string]func() error{
				"Article":  func() error { _, err := s.Article(ctx, "1"); return err },
				"Articles": func() error { _, err := s.Articles(ctx, ScoreDesc, 1); return err },
				"Count":    func() error { _, err := s.Count(ctx); return err },
				"VoteOf":   func() error { _, err := s.VoteOf(ctx, "bob", "1"); return err },
				"VotesOf":  func() error { _, err := s.VotesOf(ctx, "bob", []string{"1"}); return err },
				"Vote":     func() error { _, err := s.Vote(ctx, "bob", "1", Upvote); return err },
				"Post":     func() error { _, err := s.Post(ctx, "bob", "t", ""); return err },
				"Delete":   func() error { return s.Delete(ctx, "1") },
				"Prune":    func() error { _, err := s.Prune(ctx, clock.Now().Add(time.Hour)); return err },
				"Reconfigure": func() error {
					_, err := s.Reconfigure(ctx)
					return err
				},
			}
			for name, call := range calls {
				if err := call(); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), want) {
					t.Errorf("record %q: %s = %v, want ErrIncompatible saying %q", record, name, err, want)
				}
			}
			if after := dumpStore(t, b, s); after != before {
				t.Errorf("record %q: calls changed the store:\n%s\nwas\n%s", record, after, before)
			}
			// Drop removes it whatever its layout.
			if err := s.Drop(ctx); err != nil {
				t.Fatal(err)
			}
			mustPost(t, s, "alice", "new")
		}
	})
}

// TestReconfigure: an unrecorded store of this layout is adopted; the
// change of options is one call, whose link backfill takes steps and
// resumes where it stopped; a foreign value at the record is an error
// that is not ErrIncompatible.
func TestReconfigure(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b)
		const n = 2*backfillStep + 50
		ids := make([]string, n)
		for i := range ids {
			link := "https://example.com/" + strconv.Itoa(i%(n-10)) // the last ten repeat the first ten's
			a, err := s.Post(ctx, "alice", "t", link)
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = a.ID
			clock.Add(time.Second)
		}
		if err := s.Delete(ctx, ids[1]); err != nil {
			t.Fatal(err)
		}
		// Written before records: adopted.
		b.do(t, "DEL", s.keys.record)
		if _, err := s.Vote(ctx, "bob", ids[0], Upvote); !errors.Is(err, ErrIncompatible) {
			t.Fatalf("Vote on an unrecorded store = %v", err)
		}
		if was, err := s.Reconfigure(ctx); err != nil || was.Layout != 0 {
			t.Fatalf("Reconfigure of an unrecorded store = %v, %v", was, err)
		}
		mustVote(t, s, "bob", ids[0], Upvote)

		u, err := New(s.pool, WithKeyPrefix(s.keys.prefix), WithClock(clock.Now), WithUniqueLinks(), WithKarma(1, -1))
		if err != nil {
			t.Fatal(err)
		}
		// Interrupted after its first step of links, then called again.
		if _, err := u.eval(ctx, reconfigureScript, u.reconfigureArgs("record")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Vote(ctx, "carol", ids[0], Upvote); !errors.Is(err, ErrIncompatible) {
			t.Fatalf("Vote of the old options after the change = %v", err)
		}
		if _, err := u.eval(ctx, reconfigureScript, u.reconfigureArgs("links")); err != nil {
			t.Fatal(err)
		}
		cursor, err := redis.String(b.do(t, "GET", u.keys.backfill), nil)
		if err != nil || cursor == "0" {
			t.Fatalf("backfill cursor after a step = %q, %v", cursor, err)
		}
		// Resumed: it finds its own options recorded.
		was, err := u.Reconfigure(ctx)
		if err != nil || was.String() != "7 karma uniquelinks" {
			t.Fatalf("Reconfigure = %v, %v; want it to find its own", was, err)
		}
		if keys := b.storeKeys(t, u); len(keys) == 0 || strings.Contains(fmt.Sprint(keys), u.keys.backfill) {
			t.Fatalf("the backfill's cursor is left: %v", keys)
		}
		for i := 0; i < n-10; i++ {
			key := u.keys.link + "https://example.com/" + strconv.Itoa(i)
			got, _ := redis.String(b.do(t, "GET", key), nil)
			want := ids[i]
			if i == 1 {
				want = ids[n-10+1] // the deleted article's link went to the later one
			}
			if got != want {
				t.Fatalf("link %d: %q, want %q", i, got, want)
			}
		}
		wantPost(t, u, "https://example.com/5", ids[5], ErrDuplicate)
		if id, _, err := u.Recorded(ctx); err != nil || id.String() != "7 karma uniquelinks" {
			t.Fatalf("Recorded = %v, %v", id, err)
		}
		// Back to the first options: allowed, and the first store writes.
		if _, err := s.Reconfigure(ctx); err != nil {
			t.Fatal(err)
		}
		mustVote(t, s, "carol", ids[0], Upvote)

		// A foreign value at the record.
		b.do(t, "DEL", s.keys.record)
		b.do(t, "HSET", s.keys.record, "f", "v")
		for name, err := range map[string]error{
			"Vote":        func() error { _, err := s.Vote(ctx, "dave", ids[0], Upvote); return err }(),
			"Article":     func() error { _, err := s.Article(ctx, ids[0]); return err }(),
			"Reconfigure": func() error { _, err := s.Reconfigure(ctx); return err }(),
		} {
			if err == nil || isSentinel(err) || !strings.Contains(err.Error(), "holds a hash") {
				t.Errorf("%s with a hash at the record = %v", name, err)
			}
		}
	})
}

// TestCheck: a healthy server, then an allkeys-* policy, which is a
// serious problem; miniredis, which refuses CONFIG, is not a problem.
func TestCheck(t *testing.T) {
	forEachBackendAlone(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		mustPost(t, s, "alice", "t")
		h, err := s.Check(ctx)
		if err != nil || !h.Reachable || !h.Compatible || h.Serious || len(h.Problems) != 0 || h.Articles != 1 ||
			h.Recorded != "7" || h.Identity != "7" || h.Scripts == "" {
			t.Fatalf("Check = %+v, %v", h, err)
		}
		if b.name == "miniredis" {
			if h.Config {
				t.Errorf("Check on miniredis: Config %v", h.Config)
			}
			return
		}
		if !h.Config || h.MaxmemoryPolicy != "noeviction" || h.Version == "" || h.Scripts != "functions" {
			t.Fatalf("Check = %+v", h)
		}
		other, err := New(s.pool, WithKeyPrefix(s.keys.prefix), WithKarma(1, -1))
		if err != nil {
			t.Fatal(err)
		}
		if h, err := other.Check(ctx); err != nil || h.Compatible || !h.Serious ||
			!strings.Contains(strings.Join(h.Problems, "\n"), "karma 1,-1 here, off in the store") {
			t.Errorf("Check of other options = %+v, %v", h, err)
		}
		if b.name != "redis" {
			return
		}
		b.do(t, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
		defer b.do(t, "CONFIG", "SET", "maxmemory-policy", "noeviction")
		h, err = s.Check(ctx)
		if err != nil || !h.Serious || h.MaxmemoryPolicy != "allkeys-lru" || !strings.Contains(strings.Join(h.Problems, "\n"), "allkeys-lru") {
			t.Fatalf("Check under allkeys-lru = %+v, %v", h, err)
		}
	})
}

// TestStoreOptions: the options an identity gives open a store of that
// identity, for every shared option; other layouts and unknown words are
// incompatible.
func TestStoreOptions(t *testing.T) {
	mr := miniredis.RunT(t)
	pool := newPool(mr.Addr(), nil)
	defer pool.Close()
	for _, opts := range [][]Option{
		nil,
		{WithOrders(Top, Controversial)},
		{WithKarma(1, -1), WithVoteCost(1, 2), WithMinKarma(0, 30), WithVoteLimit(100, time.Hour)},
		{WithPostInterval(time.Minute), WithRepostAfter(24 * time.Hour), WithEditWindow(15 * time.Minute)},
		{WithUserPages(), WithUniqueLinks(), WithOrders(extraOrders...), WithKarma(2, 0)},
	} {
		s, err := New(pool, opts...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Identity().StoreOptions()
		if err != nil {
			t.Fatalf("%v: %v", s.Identity(), err)
		}
		again, err := New(pool, got...)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := s.Identity().String(), again.Identity().String(); a != b {
			t.Errorf("StoreOptions of %q open a store of %q", a, b)
		}
	}
	// Rules.Options after StoreOptions give the rules their own numbers,
	// as every rule's option does after one turned on as recorded.
	opts, err := Identity{Layout: LayoutVersion, Options: []string{"karma", "votelimit"}}.StoreOptions()
	if err != nil {
		t.Fatal(err)
	}
	own := Rules{On: []string{"karma", "votelimit"}, KarmaPerUpvote: 2, KarmaPerDownvote: -1, VoteLimit: 7, VoteLimitPer: time.Minute}
	for _, tail := range [][]Option{own.Options(), {WithKarma(2, -1), WithVoteLimit(7, time.Minute)}} {
		s, err := New(pool, append(opts, tail...)...)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := s.rules.want, "karma=2,-1 votelimit=7,60000"; got != want {
			t.Errorf("StoreOptions, then the rules' own options: words %q, want %q", got, want)
		}
	}
	for _, id := range []Identity{{Layout: 2}, {Layout: LayoutVersion, Options: []string{"karma=1"}},
		{Layout: LayoutVersion, Options: []string{"sparkles"}}, {Layout: LayoutVersion, Options: []string{"orders=top,zzz"}},
		{Layout: LayoutVersion, Options: []string{"userpages=1"}}, {Layout: LayoutVersion, Options: []string{"events"}},
		{Layout: LayoutVersion, Options: []string{"events=5,6"}}, {Layout: 5, Options: []string{"karma=1,x"}},
		{Layout: 5, Options: []string{"votelimit=10"}}} {
		if _, err := id.StoreOptions(); !errors.Is(err, ErrIncompatible) {
			t.Errorf("StoreOptions of %q: %v, want ErrIncompatible", id, err)
		}
	}
}

// TestCheckIdentity: CheckIdentity passes on an empty store and on one
// that records the store's identity, and otherwise names the difference,
// the votectl command that records the store's options and the flags of
// the recorded ones, without writing.
func TestCheckIdentity(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithOrders(Hot, Best), WithVoteLimit(5, time.Minute))
		if err := s.CheckIdentity(ctx); err != nil {
			t.Fatalf("CheckIdentity of an empty store: %v", err)
		}
		if keys := b.storeKeys(t, s); len(keys) != 0 {
			t.Fatalf("CheckIdentity wrote %v", keys)
		}
		mustPost(t, s, "alice", "first")
		if err := s.CheckIdentity(ctx); err != nil {
			t.Fatalf("CheckIdentity of the recording store: %v", err)
		}
		same, _ := otherStore(t, s, clock.Now(), WithVoteLimit(5, time.Minute), WithOrders(Best, Hot), WithPageSize(10))
		if err := same.CheckIdentity(ctx); err != nil {
			t.Fatalf("CheckIdentity of a store of the same shared options: %v", err)
		}
		p := s.keys.prefix
		for _, tc := range []struct {
			opts []Option
			want []string
		}{
			{[]Option{WithOrders(Hot, Best), WithVoteLimit(5, time.Minute), WithKarma(1, -1)}, []string{
				"karma 1,-1 here, off in the store",
				`"votectl -prefix ` + p + ` options -karma 1,-1"`,
				"start the process with the store's: no -karma"}},
			{[]Option{WithOrders(Top), WithKarma(1, -1)}, []string{
				"orders top here, hot,best in the store", "karma 1,-1 here, off in the store",
				"votelimit off here, 5,60000 in the store",
				`"votectl -prefix ` + p + ` options -orders top -karma 1,-1 -vote-limit off"`,
				"store's: -orders hot,best, no -karma, -vote-limit 5/1m"}},
			{[]Option{WithVoteLimit(10, 24*time.Hour), WithUserPages(), WithEditWindow(90 * time.Minute)}, []string{
				"orders off here, hot,best in the store", "editwindow 5400000 here, off in the store",
				"userpages on here, off in the store",
				`"votectl -prefix ` + p + ` options -edit-window 1h30m -user-pages -orders off"`,
				"store's: no -edit-window, no -user-pages, -orders hot,best"}},
		} {
			o, _ := otherStore(t, s, clock.Now(), tc.opts...)
			before := dumpStore(t, b, s)
			err := o.CheckIdentity(ctx)
			if !errors.Is(err, ErrIncompatible) {
				t.Errorf("%s: CheckIdentity = %v, want ErrIncompatible", o.Identity(), err)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %q does not say %q", o.Identity(), err, w)
				}
			}
			if after := dumpStore(t, b, s); after != before {
				t.Errorf("CheckIdentity changed the store:\n%s\nwas\n%s", after, before)
			}
		}
		// Data and no record: a write fails, and so does the check,
		// without a command; so for a record of another layout.
		for _, record := range []string{"", "3 orders=hot,best", "9"} {
			if record == "" {
				b.do(t, "DEL", s.keys.record)
			} else {
				b.do(t, "SET", s.keys.record, record)
			}
			err := s.CheckIdentity(ctx)
			want := map[string]string{"": "has data and no recorded layout", "3 orders=hot,best": "layout 3, this library reads 7: Reconfigure",
				"9": "layout 9, this library reads 7"}[record]
			if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "votectl -prefix") {
				t.Errorf("record %q: CheckIdentity = %v, want ErrIncompatible saying %q", record, err, want)
			}
		}
	})
}

func TestOptionFlag(t *testing.T) {
	for _, tc := range []struct{ name, v, want string }{
		{"orders", "top,hot", "-orders top,hot"},
		{"orders", "", "-orders off"},
		{"karma", "1,-1", "-karma 1,-1"},
		{"cost", "", "-vote-cost off"},
		{"minkarma", "0,30", "-min-karma 0,30"},
		{"votelimit", "100,86400000", "-vote-limit 100/24h"},
		{"votelimit", "3,1500", "-vote-limit 3/1.5s"},
		{"postinterval", "900000", "-post-interval 15m"},
		{"repostafter", "172800000", "-repost-after 48h"},
		{"editwindow", "5400000", "-edit-window 1h30m"},
		{"commentinterval", "30000", "-comment-interval 30s"},
		{"userpages", "on", "-user-pages"},
		{"uniquelinks", "", "-unique-links=false"},
	} {
		if got, ok := optionFlag(tc.name, tc.v); !ok || got != tc.want {
			t.Errorf("optionFlag(%q, %q) = %q, %v, want %q", tc.name, tc.v, got, ok, tc.want)
		}
	}
	if got, ok := optionFlag("sideways", "1"); ok {
		t.Errorf("optionFlag of an unknown option = %q", got)
	}
	if got := shellWord("news"); got != "news" {
		t.Errorf("shellWord(news) = %q", got)
	}
	if got := shellWord("it's news"); got != `'it'\''s news'` {
		t.Errorf("shellWord = %q", got)
	}
}
