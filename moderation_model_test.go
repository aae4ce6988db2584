package voting

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// twins are two stores that get the same posts, comments and honest
// votes; a ring of users votes on the first only.
type twins struct {
	t        *testing.T
	b        *backend
	s1, s2   *Store
	rng      *rand.Rand
	users    []string
	ring     []string
	articles []string
	comments []string
	groups   []string
	elapse   func(d time.Duration)
	ringOn2  bool // the ring's votes go to both (a twin that reverses none)
	// refused: the ring is suspended with Refuse on the first; cast,
	// where not nil, keeps the ring's votes as cast on the first.
	refused bool
	cast    map[castKey]VoteType
	// apart: both reads each store without comparing them (the ring's
	// votes not taken back yet).
	apart bool
}

func twinOptions(clock func() time.Time) []Option {
	return []Option{WithVoteLog(), WithOrders(ScoreDesc, Top, Hot, Best, Controversial), WithKarma(1, -1),
		WithVoteCost(1, 2), WithUserPages(), WithVoteWindow(time.Hour), WithPageSize(5), WithClock(clock)}
}

func newTwins(t *testing.T, b *backend, seed int64, extra ...Option) *twins {
	_, clock := newStore(t, b) // its clock, for the twins
	opts := append(twinOptions(clock.Now), extra...)
	s1, _ := newStore(t, b, opts...)
	s2, _ := newStore(t, b, opts...)
	w := &twins{t: t, b: b, s1: s1, s2: s2, rng: rand.New(rand.NewSource(seed)),
		users: []string{"u0", "u1", "u2", "u3", "u4", "u5"}, ring: []string{"r0", "r1", "r2"},
		groups: []string{"g0", "g1"}}
	w.elapse = func(d time.Duration) {
		clock.Add(d)
		if b.mr != nil {
			b.mr.FastForward(d) // the voter records expire on the server's clock
		}
	}
	return w
}

// both runs f on each store and checks they agree.
func (w *twins) both(f func(s *Store) (interface{}, error)) interface{} {
	w.t.Helper()
	r1, err1 := f(w.s1)
	r2, err2 := f(w.s2)
	if w.apart && err1 == nil && err2 == nil {
		return r1
	}
	if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(r1, r2) {
		w.t.Fatalf("stores differ: %v (%v) and %v (%v)", r1, err1, r2, err2)
	}
	if err1 != nil {
		w.t.Fatal(err1)
	}
	return r1
}

func (w *twins) post(n int) {
	w.t.Helper()
	for i := 0; i < n; i++ {
		poster := w.users[w.rng.Intn(len(w.users))]
		a := w.both(func(s *Store) (interface{}, error) {
			return s.Post(ctx, poster, fmt.Sprintf("t%d", len(w.articles)), "")
		}).(Article)
		w.articles = append(w.articles, a.ID)
		if g := w.rng.Intn(3); g < len(w.groups) {
			w.both(func(s *Store) (interface{}, error) { return nil, s.AddToGroups(ctx, a.ID, w.groups[g]) })
		}
		for j := w.rng.Intn(4); j > 0; j-- {
			parent := ""
			if len(w.comments) > 0 && w.rng.Intn(2) == 0 {
				parent = w.comments[w.rng.Intn(len(w.comments))]
				c, err := w.s1.CommentsByID(ctx, []string{parent})
				if err != nil || len(c) != 1 || c[0].Article != a.ID {
					parent = ""
				}
			}
			poster := w.users[w.rng.Intn(len(w.users))]
			c := w.both(func(s *Store) (interface{}, error) { return s.Comment(ctx, a.ID, parent, poster, "body") }).(Comment)
			w.comments = append(w.comments, c.ID)
		}
	}
}

type castKey struct {
	user, id string
	comment  bool
}

var twinVotes = []VoteType{Upvote, Downvote, CancelVote, Upvote}

// votes casts n random votes of honest users on both stores and of the
// ring on the first, on the articles and comments from first on.
func (w *twins) votes(n, first, firstComment int) {
	w.t.Helper()
	for i := 0; i < n; i++ {
		v := twinVotes[w.rng.Intn(len(twinVotes))]
		comment := w.rng.Intn(3) == 0 && firstComment < len(w.comments)
		id := ""
		if comment {
			id = w.comments[firstComment+w.rng.Intn(len(w.comments)-firstComment)]
		} else {
			id = w.articles[first+w.rng.Intn(len(w.articles)-first)]
		}
		cast := func(s *Store, user string) error {
			var err error
			if comment {
				_, err = s.VoteComment(ctx, user, id, v)
			} else {
				_, err = s.Vote(ctx, user, id, v)
			}
			if errors.Is(err, ErrVotingClosed) || errors.Is(err, ErrNotFound) {
				return nil
			}
			return err
		}
		if w.rng.Intn(2) == 0 {
			user := w.ring[w.rng.Intn(len(w.ring))]
			err := cast(w.s1, user)
			if w.refused && !errors.Is(err, ErrNotAllowed) && err != nil || !w.refused && err != nil {
				w.t.Fatalf("ring vote: %v", err)
			}
			if err == nil && w.cast != nil {
				w.cast[castKey{user, id, comment}] = v
			}
			if w.ringOn2 {
				if err := cast(w.s2, user); err != nil {
					w.t.Fatal(err)
				}
			}
			continue
		}
		user := w.users[w.rng.Intn(len(w.users))]
		w.both(func(s *Store) (interface{}, error) { return nil, cast(s, user) })
	}
}

// reads reads what a reader sees of both stores (every page of every
// order, the group pages, TopSince, each thread, the karma and the user
// pages), each read on both at once, so that a group cache is built and
// kept alike.
func (w *twins) reads() {
	w.t.Helper()
	for _, o := range []Order{ScoreDesc, ScoreAsc, TimeDesc, Top, Hot, Best, Controversial} {
		for page := 1; page <= (len(w.articles)+4)/5; page++ {
			w.both(func(s *Store) (interface{}, error) { return s.Articles(ctx, o, page) })
			for _, g := range w.groups {
				w.both(func(s *Store) (interface{}, error) { return s.GroupArticles(ctx, g, o, page) })
			}
		}
	}
	for page := 1; page <= 3; page++ {
		for _, d := range []time.Duration{time.Hour, 24 * time.Hour} {
			w.both(func(s *Store) (interface{}, error) { return s.TopSince(ctx, d, page) })
		}
	}
	for _, id := range w.articles {
		for _, o := range []Order{Best, Top, Hot, Controversial, ScoreDesc} {
			w.both(func(s *Store) (interface{}, error) { return s.Thread(ctx, id, o, 100) })
		}
	}
	w.both(func(s *Store) (interface{}, error) { return s.CommentsByID(ctx, w.comments) })
	for _, u := range append(append([]string{}, w.users...), w.ring...) {
		w.both(func(s *Store) (interface{}, error) { return s.Karma(ctx, u) })
		w.both(func(s *Store) (interface{}, error) { return s.Upvoted(ctx, u, 1) })
	}
	w.both(func(s *Store) (interface{}, error) { return s.TopUsers(ctx, 1) })
}

// reverseRing takes back the ring's votes on the first store in steps of
// step votes, and checks a second call takes back nothing.
func (w *twins) reverseRing(step int) int {
	w.t.Helper()
	w.s1.reverseStep = step
	total := 0
	for _, u := range w.ring {
		n, err := w.s1.ReverseVotes(ctx, u)
		if err != nil {
			w.t.Fatal(err)
		}
		total += n
		if n, err := w.s1.ReverseVotes(ctx, u); err != nil || n != 0 {
			w.t.Fatalf("ReverseVotes of %s again: %d, %v", u, n, err)
		}
		if page, _, err := w.s1.VotesBy(ctx, u, "", 10); err != nil || len(page) != 0 {
			t := w.t
			t.Fatalf("log of %s after ReverseVotes: %v, %v", u, page, err)
		}
	}
	return total
}

// TestReverseVotesTwins is the twin model: after ReverseVotes of each
// ring user on the first store, on open and on closed articles and
// comments, every read equals the second's.
func TestReverseVotesTwins(t *testing.T) {
	forEachBackendLong(t, func(t *testing.T, b *backend) {
		for seed := int64(1); seed <= int64(longOr(2, 6)); seed++ {
			w := newTwins(t, b, seed)
			w.post(6)
			w.votes(150, 0, 0)
			w.apart = true
			w.reads() // builds the group caches, which the votes then keep
			w.apart = false
			w.elapse(50 * time.Minute)
			firstB, firstC := len(w.articles), len(w.comments)
			w.post(6)
			w.votes(200, 0, 0)
			w.elapse(20 * time.Minute) // the first six close
			w.votes(100, firstB, firstC)
			n := w.reverseRing(3)
			if n == 0 {
				t.Fatal("no ring vote taken back")
			}
			w.reads()
		}
	})
}

// TestReverseVotesResumes interrupts a reversal after its first step,
// then resumes it: the twins agree after, and the steps counted.
func TestReverseVotesResumes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		w := newTwins(t, b, 7)
		w.post(6)
		w.votes(200, 0, 0)
		w.elapse(70 * time.Minute) // closed, all
		w.s1.reverseStep = 2
		u := w.ring[0]
		logged, _, err := w.s1.VotesBy(ctx, u, "", 1000)
		if err != nil || len(logged) < 5 {
			t.Fatalf("ring user's log: %d, %v", len(logged), err)
		}
		cctx, cancel := context.WithCancel(ctx)
		steps := 0
		n, err := w.s1.reverseVotes(cctx, u, func(int) { steps++; cancel() })
		if !errors.Is(err, context.Canceled) || steps != 1 || n > 2 {
			t.Fatalf("interrupted: %d taken in %d steps, %v", n, steps, err)
		}
		left, _, err := w.s1.VotesBy(ctx, u, "", 1000)
		if err != nil || len(left) != len(logged)-2 {
			t.Fatalf("log after one step: %d of %d, %v", len(left), len(logged), err)
		}
		m, err := w.s1.ReverseVotes(ctx, u)
		if err != nil || n+m != len(logged) {
			t.Fatalf("resumed: %d + %d taken, %d logged, %v", n, m, len(logged), err)
		}
		w.reverseRing(5)
		w.reads()
	})
}

// TestReverseVotesBounded takes back the votes of one user on many
// articles, in groups and every order: no command of 10 ms or more.
// With VOTING_LONG=1, 100,000 votes, whose steps and longest step it
// logs for BENCHMARKS.md, with the vote log's memory per vote.
func TestReverseVotesBounded(t *testing.T) {
	// Alone, before the tests that run at once: it times its steps by CPU.
	if testing.Short() {
		t.Skip("posts many articles")
	}
	n := longOr(2_000, 100_000)
	pool := ownPool(t)
	s := fill(t, pool, n, 10, 3, WithVoteLog(), WithOrders(Top, Hot, Best, Controversial), WithVoteWindow(30*24*time.Hour),
		WithKarma(1, -1), WithVoteCost(1, 1), WithUserPages())
	user := "ring"
	before := usedMemory(t, pool)
	pipe(t, pool, n, func(c redis.Conn, i int) error {
		v := Upvote
		if i%3 == 0 {
			v = Downvote
		}
		args := s.appendVoteRules(s.voteArgs(user, strconv.Itoa(i+1), v, epoch.Unix()), epoch)
		return voteScript.SendHash(c, s.fenced(nil, voteScript, args)...)
	})
	logBytes := memoryUsage(t, pool, s.keys.userVotesKey(user))
	t.Logf("%d votes: the vote log %.1f B a vote (server memory %.1f B a vote in all)", n,
		float64(logBytes)/float64(n), float64(usedMemory(t, pool)-before)/float64(n))
	// Each step timed by the CPU time of the server's main thread
	// (scriptCPU's way): on a busy machine a step's wall time, as SLOWLOG
	// has it, may be many times that.
	var cpus []time.Duration
	var start time.Duration
	hook(s, &hooks{
		before: func(string, []interface{}) error { start = mainCPU(t, pool); return nil },
		after: func(_ string, _ []interface{}, v interface{}, err error) (interface{}, error) {
			cpus = append(cpus, mainCPU(t, pool)-start)
			return v, err
		},
	})
	taken, err := s.ReverseVotes(ctx, user)
	if err != nil || taken != n {
		t.Fatalf("ReverseVotes: %d of %d, %v", taken, n, err)
	}
	slices.Sort(cpus)
	t.Logf("ReverseVotes of %d votes: %d steps, of the main thread's CPU a median %v, the longest %v",
		n, len(cpus), cpus[len(cpus)/2], cpus[len(cpus)-1])
	if len(cpus) > 20 && cpus[len(cpus)-1-len(cpus)/100] >= 10*time.Millisecond {
		t.Errorf("steps of 10 ms or more of CPU time: %v", cpus[len(cpus)-1-len(cpus)/100:])
	}
	for _, id := range []string{"1", "2", strconv.Itoa(n)} {
		a, err := s.Article(ctx, id)
		if err != nil || a.Upvotes != 1 || a.Downvotes != 0 {
			t.Fatalf("article %s after: %+v, %v", id, a, err)
		}
	}
}

// TestSuspendTwins: a ring suspended with Shadow on the first store
// votes there; everything but the ring's own view equals the second's,
// on which the ring never voted, and the ring sees its votes as cast.
// Then, with Refuse, a ring that voted before is refused while the
// others keep voting, and ReverseVotes makes the twins equal again.
func TestSuspendTwins(t *testing.T) {
	forEachBackendLong(t, func(t *testing.T, b *backend) {
		for seed := int64(1); seed <= int64(longOr(2, 4)); seed++ {
			w := newTwins(t, b, seed)
			for _, u := range w.ring {
				if err := w.s1.Suspend(ctx, u, Shadow, epoch.Add(24*time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			w.cast = map[castKey]VoteType{}
			w.post(8)
			w.votes(300, 0, 0)
			w.reads()
			for key, v := range w.cast {
				var got VoteType
				var err error
				if key.comment {
					var votes []VoteType
					votes, err = w.s1.CommentVotesOf(ctx, key.user, []string{key.id})
					if err == nil {
						got = votes[0]
					}
				} else {
					got, err = w.s1.VoteOf(ctx, key.user, key.id)
				}
				if v == CancelVote {
					v = NoVote
				}
				if err != nil || got != v {
					t.Fatalf("%s sees %v on %s, cast %v (%v)", key.user, got, key.id, v, err)
				}
			}
			for _, u := range w.ring {
				if page, _, err := w.s1.VotesBy(ctx, u, "", 10); err != nil || len(page) != 0 {
					t.Fatalf("a shadowed user's log: %v, %v", page, err)
				}
			}

			// Refuse: a ring that votes unsuspended, then is refused
			// while the others vote, and is reversed.
			w = newTwins(t, b, seed+100)
			w.post(6)
			w.votes(200, 0, 0)
			for _, u := range w.ring {
				if err := w.s1.Suspend(ctx, u, Refuse, epoch.Add(24*time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			w.refused = true
			w.elapse(70 * time.Minute) // the first six close
			w.post(4)
			w.votes(50, 0, 0)
			for _, u := range w.ring {
				w.s1.reverseStep = 2
				if _, err := w.s1.ReverseVotes(ctx, u); err != nil {
					t.Fatal(err)
				}
				w.votes(20, 6, 0)
			}
			w.reads()
		}
	})
}
