package voting

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Issue 36, "Bounded, everywhere": DeleteComment removes a chain of
// deleted ancestors left without replies in steps of ancestorStep
// comments (fewer in the first, firstRemovals), each one script; between steps, and after a DeleteComment
// interrupted between them, every read agrees with a tree whose top of
// the chain is a deleted comment without replies, and the next
// DeleteComment finishes the removal.

// deleteSteps watches s's DeleteComment steps: each step's id argument
// ("" for a step that goes on with a removal left) and how many
// comments it removed; cut, where it returns true for a step about to
// be sent, fails that step unsent with errCut.
type deleteSteps struct {
	ids     []string
	removed []int64
	cut     func(id string) bool
}

var errCut = errors.New("cut between steps")

func watchDeleteSteps(s *Store) *deleteSteps {
	w := &deleteSteps{}
	// comment_delete's id: its first ARGV, after the function or script,
	// the key count, its own 2 keys and the fence.
	id := func(args []interface{}) string { return fmt.Sprint(args[5]) }
	hook(s, &hooks{
		before: func(cmd string, args []interface{}) error {
			if scriptName(cmd, args) == commentDeleteScript.name && w.cut != nil && w.cut(id(args)) {
				return errCut
			}
			return nil
		},
		after: func(cmd string, args []interface{}, v interface{}, err error) (interface{}, error) {
			if scriptName(cmd, args) == commentDeleteScript.name && err == nil {
				status, rest, _ := decode(v, nil)
				var more, removed int64
				if scan(status, rest, &more, &removed) == nil {
					w.ids = append(w.ids, id(args))
					w.removed = append(w.removed, removed)
				}
			}
			return v, err
		},
	})
	return w
}

// take returns the steps seen since the last take.
func (w *deleteSteps) take() (ids []string, removed []int64) {
	ids, removed = w.ids, w.removed
	w.ids, w.removed = nil, nil
	return ids, removed
}

// firstRemovals is how many comments the first step of a DeleteComment
// of a comment with this many ancestors removes at most, as
// comment_delete.lua counts them.
func firstRemovals(ancestors int) int { return max(1, ancestorStep-ancestors/ancestorWalk) }

// restSteps returns the removals of the steps that go on with a chain
// of n comments left: ancestorStep a step.
func restSteps(n int) []int64 {
	var out []int64
	for ; n > 0; n -= ancestorStep {
		out = append(out, int64(min(n, ancestorStep)))
	}
	return out
}

// removeFromModel removes c, which has no replies, from the model, as
// one step of DeleteComment removes a comment of a chain.
func removeFromModel(m *commentModel, c *mComment) {
	c.removed = true
	delete(m.byID, c.ID())
	if c.parent == nil {
		m.top[c.article] = slices.DeleteFunc(m.top[c.article], func(k *mComment) bool { return k == c })
		return
	}
	c.parent.kids = slices.DeleteFunc(c.parent.kids, func(k *mComment) bool { return k == c })
}

// TestDeleteCommentChain: a chain of 2·ancestorStep+50 comments under a
// deleted comment with another reply, every one but the deepest
// deleted; deleting the deepest removes it and each deleted ancestor up
// to that one, in steps. Cut after its first step, the
// store reads, everywhere, as the model with the top of the chain a
// deleted comment without replies; the next DeleteComment (of another
// comment, of a placeholder) finishes the removal; a reply to the top
// left keeps it; a Delete of the article removes what is left, and the
// next DeleteComment forgets it.
// A foreign value at the set of removals left fails DeleteComment
// before any write.
func TestDeleteCommentChain(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, clock := newStore(t, b, commentOptions, WithUserPages())
		w := watchDeleteSteps(s)
		m := newCommentModel(DefaultVoteWeight)
		rng := rand.New(rand.NewSource(36))
		aid := mustPost(t, s, "ann", "chains").ID
		post := func(parent *mComment, poster string) *mComment {
			t.Helper()
			pid := ""
			if parent != nil {
				pid = parent.ID()
			}
			body := "on " + pid
			if _, err := s.Comment(ctx, aid, pid, poster, body); err != nil {
				t.Fatalf("Comment(%s, %q): %v", aid, pid, err)
			}
			return m.add(aid, parent, poster, body, s.now().Unix())
		}
		del := func(c *mComment) {
			t.Helper()
			if err := s.DeleteComment(ctx, c.ID()); err != nil {
				t.Fatalf("DeleteComment(%s): %v", c.ID(), err)
			}
		}
		// cutDel deletes c, cut after its first step (w.cut).
		cutDel := func(c *mComment) {
			t.Helper()
			w.cut = func(id string) bool { return id == "" }
			if err := s.DeleteComment(ctx, c.ID()); !errors.Is(err, errCut) {
				t.Fatalf("DeleteComment cut after its first step: %v", err)
			}
			w.cut = nil
		}
		removing := func() []string {
			t.Helper()
			ids, err := redis.Strings(b.do(t, "SMEMBERS", s.keys.removing), nil)
			if err != nil {
				t.Fatal(err)
			}
			return ids
		}
		check := func(what string) {
			t.Helper()
			t.Run(what, func(t *testing.T) { m.check(t, s, rng, []string{aid}, allOrders) })
		}

		// chain builds, under root, a chain of n comments, and deletes
		// all but the deepest: placeholders, each for its reply.
		chain := func(root *mComment, n int) []*mComment {
			t.Helper()
			list := make([]*mComment, n)
			p := root
			for i := range list {
				clock.Add(time.Second)
				p = post(p, commentUsers[i%len(commentUsers)])
				list[i] = p
			}
			for _, c := range list[:n-1] {
				del(c)
				c.deleted, c.hidden, c.poster, c.body = true, c.poster, "", ""
			}
			return list
		}
		// The root, deleted, keeps its other reply: the removal stops
		// below it.
		root := post(nil, "ann")
		post(root, "bob")
		del(root)
		root.deleted, root.hidden, root.poster, root.body = true, root.poster, "", ""
		beside := post(nil, "cat")
		leaf := post(beside, "dan")
		n := 2*ancestorStep + 50
		list := chain(root, n)
		check("before")
		w.take()

		// Cut after the first step.
		cutDel(list[n-1])
		first := firstRemovals(n) // the deepest's ancestors: the n-1 above it and the root
		if ids, removed := w.take(); len(ids) != 1 || removed[0] != int64(first) {
			t.Fatalf("the first step: %v removing %v; want %d removed", ids, removed, first)
		}
		for _, c := range list[n-first:] {
			removeFromModel(m, c)
		}
		top := list[n-first-1]
		if got := removing(); !slices.Equal(got, []string{top.ID()}) {
			t.Fatalf("removals left: %v, want %s", got, top.ID())
		}
		check("cut")
		if got, err := s.Replies(ctx, top.ID(), Best, MaxThread); err != nil || len(got) != 0 {
			t.Fatalf("Replies of the top left: %v, %v; want none", got, err)
		}

		// The next DeleteComment, of another comment, finishes it.
		del(leaf)
		m.remove(leaf)
		for _, c := range list[:n-first] {
			removeFromModel(m, c)
		}
		ids, removed := w.take()
		want := append([]int64{1}, restSteps(n-first)...)
		wantIDs := make([]string, len(want))
		wantIDs[0] = leaf.ID()
		if !slices.Equal(ids, wantIDs) || !slices.Equal(removed, want) {
			t.Fatalf("DeleteComment of another comment: steps %q removing %v; want %q removing %v", ids, removed, wantIDs, want)
		}
		if got := removing(); len(got) != 0 {
			t.Fatalf("removals left after the next DeleteComment: %v", got)
		}
		check("finished")

		// Cut again, then a DeleteComment of a placeholder, the root,
		// goes on.
		second := chain(nil, ancestorStep+10)
		w.take()
		cutDel(second[len(second)-1])
		del(root)
		for _, c := range second {
			removeFromModel(m, c)
		}
		f2 := firstRemovals(len(second) - 1)
		if ids, removed := w.take(); !slices.Equal(removed, append([]int64{int64(f2), 0}, restSteps(len(second)-f2)...)) {
			t.Fatalf("a cut DeleteComment, then a DeleteComment of a placeholder: steps %q removing %v", ids, removed)
		}
		check("placeholder")

		// A reply to the top of a removal left keeps it: the next
		// DeleteComment only forgets it.
		fourth := chain(nil, ancestorStep+10)
		cutDel(fourth[len(fourth)-1])
		f4 := firstRemovals(len(fourth) - 1)
		for _, c := range fourth[len(fourth)-f4:] {
			removeFromModel(m, c)
		}
		clock.Add(time.Second)
		post(fourth[len(fourth)-f4-1], "eve")
		lone := post(nil, "eve")
		w.take()
		del(lone)
		m.remove(lone)
		if ids, removed := w.take(); !slices.Equal(removed, []int64{1, 0}) {
			t.Fatalf("a DeleteComment after a reply to the top left: steps %q removing %v; want 1, 0", ids, removed)
		}
		if got := removing(); len(got) != 0 {
			t.Fatalf("removals left: %v", got)
		}
		check("reply")

		// Cut once more, then a Delete of the article removes what is
		// left, and the next DeleteComment forgets it.
		third := chain(nil, ancestorStep+10)
		cutDel(third[len(third)-1])
		if err := s.Delete(ctx, aid); err != nil {
			t.Fatal(err)
		}
		if got := removing(); len(got) != 1 {
			t.Fatalf("removals left after the Delete: %v, want 1", got)
		}
		if err := s.DeleteComment(ctx, third[0].ID()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("DeleteComment of a comment of the deleted article: %v", err)
		}
		other := mustPost(t, s, "ann", "other").ID
		c, err := s.Comment(ctx, other, "", "bob", "x")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteComment(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if got := removing(); len(got) != 0 {
			t.Fatalf("removals left after the next DeleteComment: %v", got)
		}

		// A foreign value at the set fails DeleteComment unwritten.
		c, err = s.Comment(ctx, other, "", "bob", "y")
		if err != nil {
			t.Fatal(err)
		}
		b.do(t, "SET", s.keys.removing, "foreign")
		before := dumpStore(t, b, s)
		if err := s.DeleteComment(ctx, c.ID); err == nil {
			t.Fatal("DeleteComment over a foreign value at the removals left: no error")
		}
		wantUnchanged(t, b, s, "a DeleteComment over a foreign value", before)
	})
}

// TestDeleteCommentLongChain: a chain of MaxCommentDepth comments whose
// upper 999 are deleted; deleting the deepest removes it alone in its
// first step (firstRemovals), which walks every ancestor, then the
// chain ancestorStep comments a step, and leaves the article without
// comments. On the real server, a server of its own, no step runs 10 ms
// on the slow log, nor 10 ms of the server's CPU time (scriptCPU): a
// loaded machine slows a step now and then, so the chain is built and
// deleted again, up to 3 times, until one run passes.
func TestDeleteCommentLongChain(t *testing.T) {
	forEachBackendLong(t, func(t *testing.T, b *backend) {
		timed := b.name == "redis"
		if timed {
			b = ownBackend(t) // its slow log its own
		}
		s, _ := newStore(t, b)
		w := watchDeleteSteps(s)
		for try := 1; ; try++ {
			aid := mustPost(t, s, "ann", "deep").ID
			ids := commentMany(t, b.pool, s, on(aid), chain(MaxCommentDepth), "deeper")
			for _, id := range ids[:len(ids)-1] {
				if err := s.DeleteComment(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			w.take()
			deleteLast := func() {
				if err := s.DeleteComment(ctx, ids[len(ids)-1]); err != nil {
					t.Fatal(err)
				}
			}
			var slow []string
			if timed {
				resetSlowLog(t, b.pool, 10*time.Millisecond)
				cpu := scriptCPU(t, b.pool, s, commentDeleteScript.name, deleteLast)
				for _, e := range slowLog(t, b.pool) {
					slow = append(slow, fmt.Sprintf("%v on the slow log: %s", e.took, e))
				}
				if cpu >= 10*time.Millisecond {
					slow = append(slow, fmt.Sprintf("%v of CPU time", cpu))
				}
				t.Logf("try %d: the longest step took %v of CPU time", try, cpu)
			} else {
				deleteLast()
			}
			steps, removed := w.take()
			if want := append([]int64{1}, restSteps(MaxCommentDepth-1)...); !slices.Equal(removed, want) {
				t.Errorf("steps removing %v, want %v", removed, want)
			}
			if steps[0] != ids[len(ids)-1] {
				t.Errorf("steps %q", steps)
			}
			if a, err := s.Article(ctx, aid); err != nil || a.Comments != 0 {
				t.Fatalf("the article after: %+v, %v", a, err)
			}
			if th, err := s.Thread(ctx, aid, Best, MaxThread); err != nil || len(th) != 0 {
				t.Fatalf("the thread after: %d comments, %v", len(th), err)
			}
			if list, err := s.CommentsByID(ctx, ids[:MaxBatch]); err != nil || len(list) != 0 {
				t.Fatalf("%d comments left, %v", len(list), err)
			}
			for _, k := range b.storeKeys(t, s) {
				if k == s.keys.removing || k == s.keys.threadKey(aid) || strings.HasPrefix(k, s.keys.kids) {
					t.Errorf("key %s left", k)
				}
			}
			if len(slow) == 0 {
				return
			}
			if try == 3 {
				t.Fatalf("a step took 10 ms in each of %d runs; the last: %s", try, strings.Join(slow, "; "))
			}
			t.Logf("try %d: a step took %s; again", try, strings.Join(slow, "; "))
		}
	})
}

// TestPlaceholderPosterHidden: a comment deleted and kept for its
// replies names its poster in no read: not by the poster's implied own
// upvote either, which CommentVotesOf and ThreadFor report as none, as
// for a user who never voted.
func TestPlaceholderPosterHidden(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		aid := mustPost(t, s, "ann", "t").ID
		c := mustComment(t, s, aid, "", "bob", "secret")
		mustComment(t, s, aid, c.ID, "cat", "reply")
		if err := s.DeleteComment(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		got, err := s.CommentsByID(ctx, []string{c.ID})
		if err != nil || len(got) != 1 || !got[0].Deleted || got[0].Poster != "" {
			t.Fatalf("placeholder = %+v, %v", got, err)
		}
		if _, _, err := s.CommentVoters(ctx, c.ID, "", 10); err == nil {
			t.Fatalf("CommentVoters of a placeholder: no error")
		}
		bob, err := s.CommentVotesOf(ctx, "bob", []string{c.ID})
		if err != nil {
			t.Fatal(err)
		}
		dan, err := s.CommentVotesOf(ctx, "dan", []string{c.ID})
		if err != nil {
			t.Fatal(err)
		}
		if bob[0] != dan[0] {
			t.Errorf("CommentVotesOf a placeholder: its hidden poster bob reads %v, a user who never voted %v: the read names the poster", bob[0], dan[0])
		}
		_, tb, err := s.ThreadFor(ctx, "bob", aid, Best, 10)
		if err != nil {
			t.Fatal(err)
		}
		_, td, err := s.ThreadFor(ctx, "dan", aid, Best, 10)
		if err != nil {
			t.Fatal(err)
		}
		if tb[0] != td[0] {
			t.Errorf("ThreadFor on a placeholder: its hidden poster bob reads %v, a user who never voted %v", tb[0], td[0])
		}
	})
}
