package voting

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/testclock"
)

// pagesModel is what a user's pages should hold: the entries of each
// list as the store keeps them, and which articles are live. It restates
// the rules apart from the scripts: a list keeps its latest
// MaxUserPageEntries entries, ordered by time then id, newest first;
// Delete unlists a post from its poster's submitted list; the upvoted
// entries of a gone article stay until a read walks past them, and each
// read walks its list from the newest entry down to its page's last row,
// dropping the gone entries on its way.
type pagesModel struct {
	live      map[string]bool   // id -> not deleted
	poster    map[string]string // id -> poster
	posted    map[string]int64  // id -> post time
	submitted map[string][]pageEntry
	upvoted   map[string][]pageEntry
	votes     map[[2]string]VoteType // {user, id} -> standing vote
}

// pageEntry is an entry of a list: an article and its time.
type pageEntry struct {
	id string
	at int64
}

func newPagesModel() *pagesModel {
	return &pagesModel{
		live: map[string]bool{}, poster: map[string]string{}, posted: map[string]int64{},
		submitted: map[string][]pageEntry{}, upvoted: map[string][]pageEntry{},
		votes: map[[2]string]VoteType{},
	}
}

// newestFirst orders entries as the lists do: by time, then by id as a
// number, highest first.
func newestFirst(a, b pageEntry) int {
	return cmp.Or(cmp.Compare(b.at, a.at), cmp.Compare(len(b.id), len(a.id)), cmp.Compare(b.id, a.id))
}

// add lists id at at, dropping the oldest entries past the cap.
func (m *pagesModel) add(list map[string][]pageEntry, user, id string, at int64) {
	l := append(list[user], pageEntry{id, at})
	slices.SortFunc(l, newestFirst)
	if len(l) > MaxUserPageEntries {
		l = l[:MaxUserPageEntries]
	}
	list[user] = l
}

func (m *pagesModel) remove(list map[string][]pageEntry, user, id string) {
	list[user] = slices.DeleteFunc(list[user], func(e pageEntry) bool { return e.id == id })
}

func (m *pagesModel) post(a Article) {
	m.live[a.ID], m.poster[a.ID], m.posted[a.ID] = true, a.Poster, a.Posted.Unix()
	m.add(m.submitted, a.Poster, a.ID, a.Posted.Unix())
	m.add(m.upvoted, a.Poster, a.ID, a.Posted.Unix())
	m.votes[[2]string{a.Poster, a.ID}] = Upvote
}

// vote applies a vote the store accepted at now.
func (m *pagesModel) vote(user, id string, v VoteType, now int64) {
	key := [2]string{user, id}
	prev := m.votes[key]
	if prev == v {
		return
	}
	m.votes[key] = v
	switch {
	case v == Upvote:
		m.add(m.upvoted, user, id, now)
	case prev == Upvote:
		m.remove(m.upvoted, user, id)
	}
}

func (m *pagesModel) delete(id string) {
	m.live[id] = false
	m.remove(m.submitted, m.poster[id], id)
}

// page returns the ids of a page of a list, and drops the gone entries
// the read walks past, as user_page.lua does.
func (m *pagesModel) page(list map[string][]pageEntry, user string, page, size int) []string {
	start, want := (page-1)*size, page*size
	ids := []string{}
	if start >= MaxUserPageEntries {
		return ids // past the cap: no read
	}
	var keep []pageEntry
	live := 0
	l := list[user]
	i := 0
	for ; i < len(l) && live < want; i++ {
		if !m.live[l[i].id] {
			continue
		}
		keep = append(keep, l[i])
		if live >= start {
			ids = append(ids, l[i].id)
		}
		live++
	}
	list[user] = append(keep, l[i:]...)
	return ids
}

// checkPages reads every page of both lists of each user and compares
// them with the model: the same articles in the same order, none gone,
// every page full but the last.
func checkPages(t *testing.T, s *Store, m *pagesModel, users []string) {
	t.Helper()
	for _, u := range users {
		for _, l := range []struct {
			name  string
			list  map[string][]pageEntry
			store func(ctx context.Context, user string, page int) ([]Article, error)
		}{{"submitted", m.submitted, s.Submitted}, {"upvoted", m.upvoted, s.Upvoted}} {
			for page := 1; ; page++ {
				got, err := l.store(ctx, u, page)
				if err != nil {
					t.Fatalf("%s of %s, page %d: %v", l.name, u, page, err)
				}
				want := m.page(l.list, u, page, s.pageSize)
				if fmt.Sprint(idsOf(got)) != fmt.Sprint(want) {
					t.Fatalf("%s of %s, page %d = %v, want %v", l.name, u, page, idsOf(got), want)
				}
				for _, a := range got {
					if !m.live[a.ID] || a.Posted.Unix() != m.posted[a.ID] || a.Poster != m.poster[a.ID] {
						t.Fatalf("%s of %s, page %d: article %+v, gone or not as posted", l.name, u, page, a)
					}
					if l.name == "submitted" && a.Poster != u {
						t.Fatalf("submitted of %s lists %s's article %s", u, a.Poster, a.ID)
					}
				}
				if len(got) < s.pageSize {
					// The last page: the next is empty.
					if next, err := l.store(ctx, u, page+1); err != nil || len(next) != 0 {
						t.Fatalf("%s of %s: page %d has %d of %d, page %d %d, %v", l.name, u, page, len(got), s.pageSize, page+1, len(next), err)
					}
					m.page(l.list, u, page+1, s.pageSize)
					break
				}
			}
		}
	}
}

// TestUserPagesMatchModel runs random posts, upvotes, downvotes, switches,
// cancels (one by one and in batches), deletes and prunes on a few users,
// with a clock that often stands still so entries tie, and compares every
// page of every user's lists with the model after each round.
func TestUserPagesMatchModel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithUserPages(), WithPageSize(4))
		m := newPagesModel()
		users := []string{"ann", "bob", "cid", "dee", "{eve}:*"}
		rng := rand.New(rand.NewSource(18))
		var ids []string
		for round := 0; round < 30; round++ {
			for op := 0; op < 12; op++ {
				if rng.Intn(3) == 0 {
					clock.Add(time.Duration(rng.Intn(3)) * time.Second)
				}
				user := users[rng.Intn(len(users))]
				switch r := rng.Intn(20); {
				case r < 4 || len(ids) == 0:
					a := mustPost(t, s, user, "t"+strconv.Itoa(len(ids)))
					m.post(a)
					ids = append(ids, a.ID)
				case r < 15:
					id := ids[rng.Intn(len(ids))]
					v := []VoteType{Upvote, Upvote, Downvote, NoVote}[rng.Intn(4)]
					_, err := s.Vote(ctx, user, id, ballot(v))
					if m.live[id] != (err == nil) {
						t.Fatalf("vote on %s (live %v): %v", id, m.live[id], err)
					}
					if err == nil {
						m.vote(user, id, v, clock.Now().Unix())
					}
				case r < 17:
					var ballots []Ballot
					for range 5 {
						ballots = append(ballots, Ballot{users[rng.Intn(len(users))], ids[rng.Intn(len(ids))], ballot(VoteType(rng.Intn(3) - 1))})
					}
					results, err := s.VoteBatch(ctx, ballots)
					if err != nil {
						t.Fatal(err)
					}
					for i, r := range results {
						if r.Err == nil {
							m.vote(ballots[i].User, ballots[i].ID, ballots[i].Vote, clock.Now().Unix())
						}
					}
				case r < 19:
					id := ids[rng.Intn(len(ids))]
					err := s.Delete(ctx, id)
					if m.live[id] != (err == nil) {
						t.Fatalf("delete %s (live %v): %v", id, m.live[id], err)
					}
					m.delete(id)
				default:
					// Prune the older half of the articles posted so far.
					before := time.Unix(m.posted[ids[len(ids)/2]], 0)
					if _, err := s.Prune(ctx, before); err != nil {
						t.Fatal(err)
					}
					for _, id := range ids {
						if m.posted[id] < before.Unix() && m.live[id] {
							m.delete(id)
						}
					}
				}
			}
			checkPages(t, s, m, users)
		}
	})
}

// TestUserPagesCap fills one user's lists past MaxUserPageEntries: each
// keeps the latest entries, cancels make room that later entries take,
// and a list of entries whose articles were all pruned reads empty, its
// entries dropped by the read, which walks at most the cap.
func TestUserPagesCap(t *testing.T) {
	forEachBackendLong(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithUserPages(), WithPageSize(MaxPageSize/3))
		m := newPagesModel()
		n := MaxUserPageEntries + 30
		var ids []string
		for i := 0; i < n; i++ {
			if i%7 == 0 {
				clock.Add(time.Second) // ties between the others
			}
			a := mustPost(t, s, "ann", "t"+strconv.Itoa(i))
			m.post(a)
			ids = append(ids, a.ID)
		}
		// bob upvotes them all, in batches, oldest first.
		for lo := 0; lo < n; lo += MaxBatch {
			var ballots []Ballot
			for _, id := range ids[lo:min(lo+MaxBatch, n)] {
				ballots = append(ballots, Ballot{"bob", id, Upvote})
			}
			mustBatch(t, s, ballots)
			for _, bl := range ballots {
				m.vote(bl.User, bl.ID, bl.Vote, clock.Now().Unix())
			}
			clock.Add(time.Second)
		}
		users := []string{"ann", "bob"}
		checkPages(t, s, m, users)
		for _, key := range []string{s.keys.submittedKey("ann"), s.keys.upvotedKey("ann"), s.keys.upvotedKey("bob")} {
			if got, _ := redis.Int(b.do(t, "ZCARD", key), nil); got != MaxUserPageEntries {
				t.Errorf("%s holds %d entries, want %d", key, got, MaxUserPageEntries)
			}
		}
		// bob cancels and switches some of his latest; ann's dropped
		// posts stay dropped.
		for _, id := range ids[n-10:] {
			v := NoVote
			if id[len(id)-1]%2 == 0 {
				v = Downvote
			}
			mustVote(t, s, "bob", id, v)
			m.vote("bob", id, v, clock.Now().Unix())
		}
		checkPages(t, s, m, users)
		// Deleted articles among the latest: their entries in bob's list
		// count against the cap until a read drops them. ann posts more,
		// which bob upvotes, between deletes and reads.
		for round := 0; round < 3; round++ {
			for _, id := range []string{ids[n-20-round], ids[n/2+round], ids[n-1-round]} {
				if err := s.Delete(ctx, id); err != nil {
					t.Fatal(err)
				}
				m.delete(id)
			}
			clock.Add(time.Second)
			for i := 0; i < 4; i++ {
				a := mustPost(t, s, "ann", "more")
				m.post(a)
				ids = append(ids, a.ID)
				mustVote(t, s, "bob", a.ID, Upvote)
				m.vote("bob", a.ID, Upvote, clock.Now().Unix())
			}
			if round != 1 {
				checkPages(t, s, m, users)
			}
		}
		// Pruned, all of them: every list reads empty, and the reads
		// emptied bob's upvoted list.
		if _, err := s.Prune(ctx, clock.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			m.delete(id)
		}
		checkPages(t, s, m, users)
		if keys := b.storeKeys(t, s); len(keys) != 2 || keys[0] != s.keys.seq || keys[1] != s.keys.record {
			t.Errorf("keys after pruning everything and reading the pages: %q, want the counter and the record alone", keys)
		}
	})
}

func mustBatch(t testing.TB, s *Store, ballots []Ballot) {
	t.Helper()
	results, err := s.VoteBatch(ctx, ballots)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r.Err != nil {
			t.Fatalf("ballot %d %+v: %v", i, ballots[i], r.Err)
		}
	}
}

// TestUserPagesOrder checks the documented order on a few entries: newest
// first, ties by id, highest first; an upvote is dated by the store's
// clock at the vote, and upvoting again after a cancel lists it anew.
func TestUserPagesOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithUserPages())
		var ids []string
		for i := 0; i < 12; i++ {
			ids = append(ids, mustPost(t, s, "ann", "t"+strconv.Itoa(i)).ID)
			if i == 5 {
				clock.Add(time.Second)
			}
		}
		want := slices.Clone(ids)
		slices.Reverse(want) // ids 12 to 10 first: "12" > "9" as numbers
		if got := idsOf(mustPage(t, s.Submitted, "ann", 1)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("submitted = %v, want %v", got, want)
		}
		mustVote(t, s, "bob", ids[9], Upvote)
		mustVote(t, s, "bob", ids[2], Upvote)
		clock.Add(time.Second)
		mustVote(t, s, "bob", ids[0], Upvote)
		mustVote(t, s, "bob", ids[9], NoVote)
		mustVote(t, s, "bob", ids[11], Downvote)
		mustVote(t, s, "bob", ids[11], Upvote)
		clock.Add(time.Second)
		mustVote(t, s, "bob", ids[9], Upvote)
		mustVote(t, s, "bob", ids[0], Upvote) // no change: keeps its time
		want = []string{ids[9], ids[11], ids[0], ids[2]}
		if got := idsOf(mustPage(t, s.Upvoted, "bob", 1)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("upvoted = %v, want %v", got, want)
		}
		if got := idsOf(mustPage(t, s.Upvoted, "nobody", 1)); len(got) != 0 {
			t.Errorf("upvoted of a user who never voted = %v", got)
		}
	})
}

func mustPage(t testing.TB, read func(context.Context, string, int) ([]Article, error), user string, page int) []Article {
	t.Helper()
	list, err := read(ctx, user, page)
	if err != nil {
		t.Fatalf("page %d of %s: %v", page, user, err)
	}
	return list
}

// TestUserPagesPopularDelete deletes an article with many upvoters and
// one whose voter records are gone (expired): Delete's work does not grow
// with the voters (on a redis-server, the commands its script runs, from
// INFO commandstats, are as many as for an article of one voter), the
// articles show on no page, and each voter's next read drops its entry.
func TestUserPagesPopularDelete(t *testing.T) {
	forEachBackendAlone(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithUserPages())
		const voters = 2 * MaxBatch
		small := mustPost(t, s, "ann", "small")
		popular := mustPost(t, s, "ann", "popular")
		expired := mustPost(t, s, "ann", "expired")
		other := mustPost(t, s, "cid", "other")
		for lo := 0; lo < voters; lo += MaxBatch {
			ballots := make([]Ballot, MaxBatch)
			for i := range ballots {
				ballots[i] = Ballot{benchUser(lo + i), popular.ID, Upvote}
			}
			mustBatch(t, s, ballots)
		}
		for _, u := range []string{benchUser(0), benchUser(1)} {
			mustVote(t, s, u, other.ID, Upvote)
			mustVote(t, s, u, expired.ID, Upvote)
		}
		// As if voting on it had closed long ago: its voters cannot be
		// listed.
		b.do(t, "DEL", s.keys.votedKey(expired.ID))

		loadScripts(t, b.pool) // no NOSCRIPT retry in the counts
		// The commands Delete ran, without the server's own traffic: the
		// shared server's replica, once a test has started it, sends
		// REPLCONF ACK every second, and the count reads INFO.
		cost := func(id string) map[string]int {
			before := map[string]int{}
			if b.mr == nil {
				before = commandStats(t, b.pool)
			}
			if err := s.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
			if b.mr == nil {
				d := diffStats(commandStats(t, b.pool), before)
				delete(d, "replconf")
				delete(d, "info")
				return d
			}
			return nil
		}
		if small, popular := cost(small.ID), cost(popular.ID); fmt.Sprint(small) != fmt.Sprint(popular) {
			t.Errorf("Delete ran %v for an article of 1 voter, %v for one of %d", small, popular, voters+1)
		}
		cost(expired.ID)
		for _, u := range []string{benchUser(0), benchUser(1), benchUser(voters - 1), "ann"} {
			want := "[]"
			if u == benchUser(0) || u == benchUser(1) {
				want = "[" + other.ID + "]"
			}
			if got := idsOf(mustPage(t, s.Upvoted, u, 1)); fmt.Sprint(got) != want {
				t.Errorf("upvoted of %s = %v, want %s", u, got, want)
			}
			for _, id := range []string{popular.ID, expired.ID} {
				if b.do(t, "ZSCORE", s.keys.upvotedKey(u), member(id)) != nil {
					t.Errorf("%s's upvoted list keeps deleted article %s after a read", u, id)
				}
			}
		}
		if got := idsOf(mustPage(t, s.Submitted, "ann", 1)); len(got) != 0 {
			t.Errorf("submitted of ann = %v, want none", got)
		}
		// A voter who has not read their page still holds the entry:
		// Delete did not walk the voters.
		if b.do(t, "ZSCORE", s.keys.upvotedKey(benchUser(5)), member(popular.ID)) == nil {
			t.Errorf("an unread upvoted list lost its entry")
		}
	})
}

// TestUserPagesOff checks that a store without WithUserPages refuses the
// reads, sends no page key to the scripts and keeps no page, and that its
// votes and posts stay listed for nobody.
func TestUserPagesOff(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		for _, read := range []func(context.Context, string, int) ([]Article, error){s.Submitted, s.Upvoted} {
			if _, err := read(ctx, "ann", 1); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "WithUserPages") {
				t.Errorf("read without WithUserPages: %v", err)
			}
		}
		for _, args := range [][]interface{}{s.voteArgs("bob", "1", Upvote, 0), s.postArgs("ann", "t", "", 0)} {
			for _, a := range args {
				if str, ok := a.(string); ok && (str == s.keys.upvoted || str == s.keys.submitted) {
					t.Errorf("a store without pages passes %q to a script", str)
				}
			}
		}
		a := mustPost(t, s, "ann", "t")
		mustVote(t, s, "bob", a.ID, Upvote)
		mustBatch(t, s, []Ballot{{"cid", a.ID, Upvote}})
		for _, k := range b.storeKeys(t, s) {
			if f := families(s.keys, k); len(f) > 0 && (f[0] == "submitted" || f[0] == "upvoted") {
				t.Errorf("key %s without WithUserPages", k)
			}
		}
		// A store with pages over the same prefix lists nothing of it,
		// and deletes it cleanly.
		on, err := New(s.pool, WithKeyPrefix(s.keys.prefix), WithClock(s.now), WithUserPages())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := on.Reconfigure(ctx); err != nil {
			t.Fatal(err)
		}
		if got := mustPage(t, on.Upvoted, "bob", 1); len(got) != 0 {
			t.Errorf("upvoted of bob = %v", idsOf(got))
		}
		if err := on.Delete(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
	})
}

// TestUserPagesForeignValue puts a foreign value at a user's page key: a
// Post or vote that would write it fails and changes nothing, and other
// users are unaffected.
func TestUserPagesForeignValue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithUserPages())
		a := mustPost(t, s, "ann", "t")
		b.do(t, "SET", s.keys.upvotedKey("bob"), "x")
		b.do(t, "SET", s.keys.submittedKey("cid"), "x")
		if _, err := s.Vote(ctx, "bob", a.ID, Upvote); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("vote over a foreign upvoted list: %v", err)
		}
		results, err := s.VoteBatch(ctx, []Ballot{{"bob", a.ID, Upvote}, {"dee", a.ID, Upvote}})
		if err != nil || results[0].Err == nil || results[1].Err != nil {
			t.Errorf("batch over a foreign upvoted list: %v, %+v", err, results)
		}
		if _, err := s.Post(ctx, "cid", "t2", ""); err == nil {
			t.Errorf("post over a foreign submitted list: no error")
		}
		if got, err := s.Article(ctx, a.ID); err != nil || got.Upvotes != 2 {
			t.Errorf("article after the refused votes: %+v, %v; want 2 upvotes", got, err)
		}
		if v, err := s.VoteOf(ctx, "bob", a.ID); err != nil || v != NoVote {
			t.Errorf("bob's vote after a refused vote: %v, %v", v, err)
		}
		if n, err := s.Count(ctx); err != nil || n != 1 {
			t.Errorf("Count after a refused post = %d, %v", n, err)
		}
		if _, err := s.Upvoted(ctx, "bob", 1); err == nil {
			t.Errorf("read of a foreign upvoted list: no error")
		}
		// Only the poster's submitted list matters to Delete.
		if err := s.Delete(ctx, a.ID); err != nil {
			t.Errorf("Delete: %v", err)
		}
	})
}

// TestUserPagesDrop checks that Drop removes every page.
func TestUserPagesDrop(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b, WithUserPages())
		a := mustPost(t, s, "ann", "t")
		mustVote(t, s, "bob", a.ID, Upvote)
		if len(b.storeKeys(t, s)) == 0 {
			t.Fatal("no keys")
		}
		if err := s.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		if keys := b.storeKeys(t, s); len(keys) != 0 {
			t.Errorf("keys after Drop: %q", keys)
		}
	})
}

// TestPageCapInScripts keeps lib/pages.lua's PAGE_CAP equal to
// MaxUserPageEntries.
func TestPageCapInScripts(t *testing.T) {
	got := regexp.MustCompile(`local PAGE_CAP = (\d+)`).FindStringSubmatch(libLua)
	if got == nil || got[1] != strconv.Itoa(MaxUserPageEntries) {
		t.Errorf("lib/pages.lua PAGE_CAP %v, want %d", got, MaxUserPageEntries)
	}
}

// BenchmarkVoteUserPages measures a vote's cost in Redis without and with
// WithUserPages, as BenchmarkVoteOrders does: each vote changes the
// user's vote (none to up, later up to down), so with pages every one
// lists or unlists the article. redis-µs/op is the script's time per
// vote (INFO commandstats).
func BenchmarkVoteUserPages(b *testing.B) {
	pool := ownPool(b)
	const articles, users = 1000, 100
	type site struct {
		s    *Store
		next int // the vote to cast next, across the runs of the benchmark
	}
	var sites []*site
	for _, c := range []struct {
		name string
		opts []Option
	}{{"off", nil}, {"on", []Option{WithUserPages()}}} {
		opts := append([]Option{WithKeyPrefix("pages-" + c.name), WithClock(testclock.New(epoch).Now)}, c.opts...)
		s, err := New(pool, opts...)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < articles; i++ {
			mustPost(b, s, "poster", "t"+strconv.Itoa(i))
		}
		sites = append(sites, &site{s: s})
	}
	vote := func(b *testing.B, st *site) {
		id := strconv.Itoa(st.next%articles + 1)
		user := "user" + strconv.Itoa(st.next/articles%users)
		v := Upvote
		if st.next/(articles*users)%2 == 1 {
			v = Downvote
		}
		st.next++
		if _, err := st.s.Vote(ctx, user, id, ballot(v)); err != nil {
			b.Fatal(err)
		}
	}
	for i, name := range []string{"off", "on"} {
		st := sites[i]
		b.Run("pages="+name, func(b *testing.B) {
			m := meter(b, pool, 0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				vote(b, st)
			}
			b.StopTimer()
			reportPerOp(b, m)
		})
	}
	// On a busy machine the two runs above meet different loads. Here
	// each op is a round of 200 votes without pages then 200 with, each
	// timed by INFO commandstats; it reports the medians of the rounds'
	// script time per vote, off and on, and of their differences.
	b.Run("interleaved", func(b *testing.B) {
		const perRound = 200
		var off, on, diff []float64
		for i := 0; i < b.N; i++ {
			var got [2]float64
			for j, st := range sites {
				_, before := scriptStats(b, pool)
				for range perRound {
					vote(b, st)
				}
				_, after := scriptStats(b, pool)
				got[j] = float64(after-before) / perRound
			}
			off, on, diff = append(off, got[0]), append(on, got[1]), append(diff, got[1]-got[0])
		}
		median := func(l []float64) float64 { slices.Sort(l); return l[len(l)/2] }
		b.ReportMetric(median(off), "off-redis-µs/vote")
		b.ReportMetric(median(on), "on-redis-µs/vote")
		b.ReportMetric(median(diff), "added-redis-µs/vote")
	})
}

// BenchmarkUserPagesPopular works on a redis-server of its own, with
// WithUserPages. It builds an article of 100,000 upvoters, each of whom
// has upvoted another article too, and measures Delete of it and the
// first read of a voter's upvoted page after it, which drops the gone
// entry, and the read of a full list whose articles are all gone, the
// longest walk (max-cmd-µs: the longest script in SLOWLOG). It reports the
// memory of the lists: B/first-upvote, the growth of used_memory per
// upvote of a user's first upvote (a list of one) beyond a store without
// pages; B/user, a user's two full lists of MaxUserPageEntries entries
// each, and B/entry-full per entry; B/entry-of-100, per entry of a list
// of 100 (a listpack).
func BenchmarkUserPagesPopular(b *testing.B) {
	pool := ownPool(b)
	const voters = 100_000
	now := epoch.Unix()
	type site struct {
		s *Store
		n int // articles
	}
	newSite := func(name string, opts ...Option) *site {
		opts = append([]Option{WithKeyPrefix("bench:" + name), WithClock(testclock.New(epoch).Now)}, opts...)
		s, err := New(pool, opts...)
		if err != nil {
			b.Fatal(err)
		}
		return &site{s: s}
	}
	post := func(st *site, n int, poster string) {
		pipe(b, pool, n, func(c redis.Conn, i int) error {
			return postScript.SendHash(c, st.s.fenced(nil, postScript, st.s.postArgs(poster, benchTitle(i), benchLink(i), now))...)
		})
		st.n += n
	}
	vote := func(st *site, n int, ballot func(i int) (user, id string)) {
		pipe(b, pool, n, func(c redis.Conn, i int) error {
			user, id := ballot(i)
			return voteScript.SendHash(c, st.s.fenced(nil, voteScript, st.s.voteArgs(user, id, Upvote, now))...)
		})
	}
	// Each voter's first upvote, on one of 100 articles, without and with
	// pages.
	growth := map[string]float64{}
	var on *site
	for _, c := range []struct {
		name string
		opts []Option
	}{{"off", nil}, {"on", []Option{WithUserPages()}}} {
		st := newSite("popular-"+c.name, c.opts...)
		post(st, 100, "poster")
		before := usedMemory(b, pool)
		vote(st, voters, func(i int) (string, string) { return benchUser(i), strconv.Itoa(1 + i%100) })
		growth[c.name] = float64(usedMemory(b, pool)-before) / voters
		on = st
	}
	s := on.s
	// A user with full lists.
	post(on, MaxUserPageEntries, "heavy")
	vote(on, MaxUserPageEntries, func(i int) (string, string) { return "heavy", strconv.Itoa(101 + i) })
	perUser := memoryUsage(b, pool, s.keys.submittedKey("heavy")) + memoryUsage(b, pool, s.keys.upvotedKey("heavy"))
	// A user of 100 upvotes, a list under zset-max-listpack-entries (128).
	vote(on, 100, func(i int) (string, string) { return "medium", strconv.Itoa(101 + i) })
	perEntryListpack := float64(memoryUsage(b, pool, s.keys.upvotedKey("medium"))) / 100
	b.Run("memory", func(b *testing.B) {
		reportBytes(b, fmt.Sprintf("a list of one is a %s, a full one a %s",
			encoding(b, pool, s.keys.upvotedKey(benchUser(0))), encoding(b, pool, s.keys.upvotedKey("heavy"))))
		b.ReportMetric(growth["on"]-growth["off"], "B/first-upvote")
		b.ReportMetric(float64(perUser), "B/user")
		b.ReportMetric(float64(perUser)/(2*MaxUserPageEntries), "B/entry-full")
		b.ReportMetric(perEntryListpack, "B/entry-of-100")
	})
	popular := func() string {
		post(on, 1, "poster")
		id := strconv.Itoa(on.n)
		vote(on, voters, func(i int) (string, string) { return benchUser(i), id })
		return id
	}
	b.Run("delete-100k-voters", func(b *testing.B) {
		var longestRun time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			id := popular()
			if a, err := s.Article(ctx, id); err != nil || a.Upvotes != voters+1 {
				b.Fatalf("popular article: %+v, %v", a, err)
			}
			resetSlowLog(b, pool, 0)
			b.StartTimer()
			if err := s.Delete(ctx, id); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			longestRun = max(longestRun, longest(slowLog(b, pool)).took)
		}
		b.ReportMetric(float64(longestRun.Microseconds()), "max-cmd-µs")
	})
	// The most a read walks: a full list of articles that are all gone.
	b.Run("read-1000-gone", func(b *testing.B) {
		var longestRun time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			key := s.keys.upvotedKey("gone" + strconv.Itoa(i))
			args := []interface{}{key}
			for j := 0; j < MaxUserPageEntries; j++ {
				args = append(args, now, member(strconv.Itoa(900000+j)))
			}
			serverDo(b, pool, "ZADD", args...)
			resetSlowLog(b, pool, 0)
			b.StartTimer()
			list, err := s.Upvoted(ctx, "gone"+strconv.Itoa(i), 1)
			b.StopTimer()
			if err != nil || len(list) != 0 {
				b.Fatalf("upvoted: %d, %v", len(list), err)
			}
			longestRun = max(longestRun, longest(slowLog(b, pool)).took)
			if n, _ := redis.Int(serverDo(b, pool, "EXISTS", key), nil); n != 0 {
				b.Fatalf("the read left %s", key)
			}
		}
		b.ReportMetric(float64(longestRun.Microseconds()), "max-cmd-µs")
	})
	// 1,000 voters read their page once each, per op: the first read
	// after the delete, which drops its entry.
	b.Run("first-read-after", func(b *testing.B) {
		const reads = 1000
		if b.N*reads > voters {
			b.Skip("more reads than voters")
		}
		m := meter(b, pool, 0)
		b.ResetTimer()
		for i := 0; i < b.N*reads; i++ {
			list, err := s.Upvoted(ctx, benchUser(i), 1)
			if err != nil || len(list) != 1 {
				b.Fatalf("upvoted: %d, %v", len(list), err)
			}
		}
		b.StopTimer()
		_, calls, usec := m.used(b)
		b.ReportMetric(float64(usec)/float64(calls), "redis-µs/read")
		b.ReportMetric(float64(longest(slowLog(b, pool)).took.Microseconds()), "max-cmd-µs")
	})
}

// TestUserPagesWithRules runs the pages beside karma and the vote and
// post rules, whose arguments follow the pages' in vote.lua, vote_batch.lua
// and post.lua: each keeps its own, a refused vote or post changes no page,
// and a foreign value at a page fails the vote before karma moves.
func TestUserPagesWithRules(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, WithUserPages(), WithKarma(1, -1), WithVoteCost(0, 1),
			WithVoteLimit(2, time.Hour), WithPostInterval(time.Minute))
		a := mustPost(t, s, "ann", "a")
		clock.Add(time.Minute)
		c := mustPost(t, s, "ann", "c")
		if _, err := s.Post(ctx, "ann", "too soon", ""); !errors.Is(err, ErrRateLimited) {
			t.Fatalf("a post within the interval: %v", err)
		}
		mustVote(t, s, "bob", a.ID, Upvote)
		results, err := s.VoteBatch(ctx, []Ballot{{"bob", c.ID, Upvote}, {"bob", a.ID, Downvote}})
		if err != nil || results[0].Err != nil || !errors.Is(results[1].Err, ErrRateLimited) {
			t.Fatalf("batch past the vote limit: %v, %+v", err, results)
		}
		if _, err := s.Vote(ctx, "bob", a.ID, CancelVote); !errors.Is(err, ErrRateLimited) {
			t.Fatalf("a cancel past the vote limit: %v", err)
		}
		pages := func(user string) string {
			var ids []string
			for _, read := range []func(context.Context, string, int) ([]Article, error){s.Submitted, s.Upvoted} {
				list, err := read(ctx, user, 1)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, strings.Join(idsOf(list), " "))
			}
			return strings.Join(ids, " | ")
		}
		if got, want := pages("ann"), c.ID+" "+a.ID+" | "+c.ID+" "+a.ID; got != want {
			t.Errorf("ann's pages: %q, want %q", got, want)
		}
		if got, want := pages("bob"), " | "+c.ID+" "+a.ID; got != want {
			t.Errorf("bob's pages: %q, want %q", got, want)
		}
		for user, want := range map[string]int64{"ann": 2, "bob": 0} {
			if k, err := s.Karma(ctx, user); err != nil || k != want {
				t.Errorf("%s's karma = %d, %v; want %d", user, k, err, want)
			}
		}
		// A foreign value at carol's upvoted page fails her vote before
		// it moves anyone's karma.
		b.do(t, "SET", s.keys.upvotedKey("carol"), "x")
		if _, err := s.Vote(ctx, "carol", a.ID, Upvote); err == nil {
			t.Error("a vote over a foreign upvoted page: no error")
		}
		if k, err := s.Karma(ctx, "ann"); err != nil || k != 2 {
			t.Errorf("ann's karma after a failed vote = %d, %v; want 2", k, err)
		}
	})
}
