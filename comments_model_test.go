package voting

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue 29's model test: a plain Go tree of comments, sorted and cut as
// the issue specifies Thread and Replies, driven through random
// comments, votes, edits and deletes beside the store, on every backend,
// in every order a comment thread reads.

// mComment is a comment of the model.
type mComment struct {
	id           int64
	article      string
	parent       *mComment // nil for a reply to the article
	poster, body string
	posted       int64 // Unix seconds, the store's clock
	up, down     int64
	deleted      bool
	hidden       string      // the poster of a deleted one, which no read names
	kids         []*mComment // its replies, oldest first
	votes        map[string]VoteType
	depth        int // 0 for a reply to the article
	removed      bool
}

func (c *mComment) ID() string { return strconv.FormatInt(c.id, 10) }

// commentModel is the tree of every article's comments, as the issue
// defines them.
type commentModel struct {
	weight float64
	byID   map[string]*mComment
	top    map[string][]*mComment // each article's top level, oldest first
	next   int64                  // the last id handed out
	// ambiguous is set when a comparison met two values only near each
	// other (Lua's and Go's last bits may differ there): the store may
	// then order them either way.
	ambiguous bool
}

func newCommentModel(weight float64) *commentModel {
	return &commentModel{weight: weight, byID: map[string]*mComment{}, top: map[string][]*mComment{}}
}

// add records a comment the store accepted.
func (m *commentModel) add(article string, parent *mComment, poster, body string, posted int64) *mComment {
	m.next++
	c := &mComment{id: m.next, article: article, parent: parent, poster: poster, body: body, posted: posted,
		up: 1, votes: map[string]VoteType{poster: Upvote}}
	if parent != nil {
		c.depth = parent.depth + 1
		parent.kids = append(parent.kids, c)
	} else {
		m.top[article] = append(m.top[article], c)
	}
	m.byID[c.ID()] = c
	return c
}

// vote applies user's vote v on c and returns what VoteComment returns.
func (m *commentModel) vote(c *mComment, user string, v VoteType) VoteResult {
	prev := c.votes[user]
	c.up -= int64(max(prev, 0))
	c.down += int64(min(prev, 0))
	c.up += int64(max(v, 0))
	c.down -= int64(min(v, 0))
	c.votes[user] = v
	return VoteResult{Previous: prev, Points: c.up - c.down, Upvotes: c.up, Downvotes: c.down}
}

// remove applies DeleteComment to c: a comment without replies goes,
// and with it every deleted ancestor left without replies; one with
// replies becomes a placeholder.
func (m *commentModel) remove(c *mComment) {
	if len(c.kids) > 0 {
		c.deleted, c.hidden, c.poster, c.body = true, c.poster, "", ""
		return
	}
	for c != nil && len(c.kids) == 0 {
		c.removed = true
		delete(m.byID, c.ID())
		if c.parent == nil {
			m.top[c.article] = slices.DeleteFunc(m.top[c.article], func(k *mComment) bool { return k == c })
			return
		}
		p := c.parent
		p.kids = slices.DeleteFunc(p.kids, func(k *mComment) bool { return k == c })
		if !p.deleted {
			return
		}
		c = p
	}
}

// live returns c's live descendants, all levels.
func live(c *mComment) int64 {
	var n int64
	for _, k := range c.kids {
		n += live(k)
		if !k.deleted {
			n++
		}
	}
	return n
}

// articleComments returns the article's live comments.
func (m *commentModel) articleComments(article string) int64 {
	var n int64
	for _, c := range m.top[article] {
		n += live(c)
		if !c.deleted {
			n++
		}
	}
	return n
}

func (c *mComment) comment() Comment {
	parent := ""
	if c.parent != nil {
		parent = c.parent.ID()
	}
	return Comment{ID: c.ID(), Article: c.article, Parent: parent, Poster: c.poster, Body: c.body,
		Posted: time.Unix(c.posted, 0).UTC(), Upvotes: c.up, Downvotes: c.down, Replies: live(c), Deleted: c.deleted}
}

// value is c's value in order o: Order.Value, lib/record.lua's value in
// its steps, with the id standing for the time in the time orders (a
// thread's time order is the order the comments reached Redis).
func (m *commentModel) value(o Order, c *mComment) float64 {
	switch o {
	case TimeDesc, TimeAsc:
		return float64(c.id)
	case Top, ScoreDesc, Best, Hot, Controversial:
		return o.Value(time.Unix(c.posted, 0), m.weight, c.up, c.down)
	}
	panic(fmt.Sprintf("no comment order %v", o))
}

// before reports whether a comes before b in order o: the higher value
// first (the lower in TimeAsc), equal values by id, newest first (oldest
// first in TimeAsc).
func (m *commentModel) before(o Order, a, b *mComment) bool {
	va, vb := m.value(o, a), m.value(o, b)
	if va != vb && near(va, vb) {
		m.ambiguous = true
	}
	if o == TimeAsc {
		return a.id < b.id
	}
	if va != vb {
		return va > vb
	}
	return a.id > b.id
}

// thread is Thread (roots, the article's top level) or Replies (roots,
// a comment's replies) as the issue specifies them: filled best-first
// as Reddit's CommentOrderer, up to limit comments and MaxThreadDepth
// levels, then flattened in display order with More.
func (m *commentModel) thread(roots []*mComment, o Order, limit int) []ThreadComment {
	type cand struct {
		c     *mComment
		depth int
	}
	var cands []cand
	for _, c := range roots {
		cands = append(cands, cand{c, 0})
	}
	chosen := map[*mComment]int{}
	for len(chosen) < limit && len(cands) > 0 {
		best := 0
		for i := 1; i < len(cands); i++ {
			if m.before(o, cands[i].c, cands[best].c) {
				best = i
			}
		}
		c := cands[best]
		cands = slices.Delete(cands, best, best+1)
		chosen[c.c] = c.depth
		if c.depth < MaxThreadDepth-1 {
			for _, k := range c.c.kids {
				cands = append(cands, cand{k, c.depth + 1})
			}
		}
	}
	var out []ThreadComment
	// shown returns the live comments of c's subtree in the result.
	var emit func(list []*mComment) int64
	emit = func(list []*mComment) int64 {
		sorted := slices.Clone(list)
		slices.SortFunc(sorted, func(a, b *mComment) int {
			if a == b {
				return 0
			}
			if m.before(o, a, b) {
				return -1
			}
			return 1
		})
		var shown int64
		for _, c := range sorted {
			depth, ok := chosen[c]
			if !ok {
				continue
			}
			i := len(out)
			out = append(out, ThreadComment{Comment: c.comment(), Depth: depth})
			in := emit(c.kids)
			out[i].More = live(c) - in
			shown += in
			if !c.deleted {
				shown++
			}
		}
		return shown
	}
	emit(roots)
	return out
}

// threadOrders are the orders of every thread; allOrders adds those a
// store reads with WithOrders(Hot, Controversial, ScoreDesc).
var (
	threadOrders   = []Order{Best, Top, TimeDesc, TimeAsc}
	allOrders      = []Order{Best, Top, TimeDesc, TimeAsc, Hot, Controversial, ScoreDesc}
	commentOptions = WithOrders(Hot, Controversial, ScoreDesc)
)

// tcString is a thread entry for messages.
func tcString(c ThreadComment) string {
	d := ""
	if c.Deleted {
		d = " deleted"
	}
	return fmt.Sprintf("%s(d%d more%d up%d down%d replies%d%s)", c.ID, c.Depth, c.More, c.Upvotes, c.Downvotes, c.Replies, d)
}

func threadString(list []ThreadComment) string {
	s := make([]string, len(list))
	for i, c := range list {
		s[i] = tcString(c)
	}
	return strings.Join(s, " ")
}

// sameThread fails t unless got is want, field by field.
func sameThread(t testing.TB, m *commentModel, what string, got, want []ThreadComment) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].Depth == want[i].Depth && got[i].More == want[i].More && sameComment(got[i].Comment, want[i].Comment)
	}
	if ok {
		return
	}
	if m.ambiguous {
		t.Logf("%s: near-equal values met; the store's order may differ:\n got %s\nwant %s", what, threadString(got), threadString(want))
		return
	}
	t.Errorf("%s:\n got %s\nwant %s", what, threadString(got), threadString(want))
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			t.Errorf("%s: first difference at %d: got %+v, want %+v", what, i, got[i], want[i])
			break
		}
	}
}

// sameComment reports whether a and b are equal, their times compared
// with Equal.
func sameComment(a, b Comment) bool {
	if !a.Posted.Equal(b.Posted) {
		return false
	}
	a.Posted, b.Posted = time.Time{}, time.Time{}
	return a == b
}

// checkThreads compares, for every article, Thread in every order and at
// every limit with the model, and Replies of a few comments, and the
// counts: Article.Comments and, through CommentsByID, every comment.
func (m *commentModel) check(t testing.TB, s *Store, rng *rand.Rand, articles []string, orders []Order) {
	t.Helper()
	limits := []int{1, 2, 5, 13, 40, MaxThread}
	for _, a := range articles {
		got, err := s.Article(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if want := m.articleComments(a); got.Comments != want {
			t.Errorf("article %s: Comments %d, want %d", a, got.Comments, want)
		}
		for _, o := range orders {
			for _, limit := range limits {
				list, err := s.Thread(ctx, a, o, limit)
				if err != nil {
					t.Fatalf("Thread(%s, %v, %d): %v", a, o, limit, err)
				}
				m.ambiguous = false
				sameThread(t, m, fmt.Sprintf("Thread(%s, %v, %d)", a, o, limit), list, m.thread(m.top[a], o, limit))
			}
		}
	}
	var ids []string
	for id := range m.byID {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return int(idNum(t, a) - idNum(t, b)) })
	for i := 0; i < 3 && len(ids) > 0; i++ {
		c := m.byID[ids[rng.Intn(len(ids))]]
		for _, o := range orders {
			for _, limit := range []int{1, 4, MaxThread} {
				list, err := s.Replies(ctx, c.ID(), o, limit)
				if err != nil {
					t.Fatalf("Replies(%s, %v, %d): %v", c.ID(), o, limit, err)
				}
				m.ambiguous = false
				sameThread(t, m, fmt.Sprintf("Replies(%s, %v, %d)", c.ID(), o, limit), list, m.thread(c.kids, o, limit))
			}
		}
	}
	// Every comment ever posted, the removed ones too: CommentsByID
	// skips those.
	var all, want []string
	var wantComments []Comment
	for id := int64(1); id <= m.next; id++ {
		all = append(all, strconv.FormatInt(id, 10))
	}
	for _, id := range all {
		if c, ok := m.byID[id]; ok {
			want = append(want, id)
			wantComments = append(wantComments, c.comment())
		}
	}
	got, err := s.CommentsByID(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(wantComments) {
		t.Errorf("CommentsByID: %d comments, want %d (%v)", len(got), len(wantComments), want)
	} else {
		for i := range got {
			if !sameComment(got[i], wantComments[i]) {
				t.Errorf("comment %s: %+v, want %+v", want[i], got[i], wantComments[i])
			}
		}
	}
	for _, u := range commentUsers {
		votes, err := s.CommentVotesOf(ctx, u, all)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range all {
			var w VoteType
			if c, ok := m.byID[id]; ok {
				w = c.votes[u]
				if c.deleted && u == c.hidden && w == Upvote {
					w = NoVote // the poster's own, implied: a deleted one's poster is named by no read
				}
			}
			if votes[i] != w {
				t.Errorf("%s's vote on comment %s: %v, want %v", u, id, votes[i], w)
			}
		}
	}
}

var commentUsers = []string{"ann", "bob", "cat", "dan", "eve"}

// TestThreadModel drives random Comment, VoteComment, EditComment and
// DeleteComment calls on two articles, beside the model, and compares
// Thread and Replies in every order the store reads, at several limits,
// and every comment's counts, every 40 calls and at the end.
func TestThreadModel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []Option
		orders []Order
	}{
		{"default", nil, threadOrders},
		{"orders", []Option{commentOptions}, allOrders},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackendLong(t, func(t *testing.T, b *backend) {
				opts := append([]Option{WithEditWindow(DefaultVoteWindow)}, tc.opts...)
				s, clock := newStore(t, b, opts...)
				runThreadModel(t, s, clock.Add, 29, 600, tc.orders)
			})
		})
	}
}

// runThreadModel runs n random calls on s, seeded by seed, checking the
// model every 40 and at the end; advance moves s's clock.
func runThreadModel(t *testing.T, s *Store, advance func(time.Duration), seed int64, n int, orders []Order) {
	rng := rand.New(rand.NewSource(seed))
	m := newCommentModel(DefaultVoteWeight)
	articles := []string{mustPost(t, s, "ann", "first").ID, mustPost(t, s, "bob", "second").ID}
	user := func() string { return commentUsers[rng.Intn(len(commentUsers))] }
	// pick returns a random comment of the model, nil if none; recent
	// ones more often, so that threads grow deep.
	pick := func(article string) *mComment {
		var list []*mComment
		for _, c := range m.byID {
			if article == "" || c.article == article {
				list = append(list, c)
			}
		}
		if len(list) == 0 {
			return nil
		}
		slices.SortFunc(list, func(a, b *mComment) int { return int(a.id - b.id) })
		if rng.Intn(2) == 0 {
			return list[len(list)-1-rng.Intn(min(2, len(list)))]
		}
		return list[rng.Intn(len(list))]
	}
	now := func() int64 { return s.now().Unix() }
	for i := 1; i <= n; i++ {
		advance(time.Duration(rng.Intn(3)) * time.Second)
		switch r := rng.Intn(100); {
		case r < 45: // a comment
			a := articles[rng.Intn(len(articles))]
			var parent *mComment
			if rng.Intn(5) > 0 {
				parent = pick(a)
			}
			pid := ""
			if parent != nil {
				pid = parent.ID()
			}
			if parent != nil && parent.depth >= MaxCommentDepth-1 {
				continue
			}
			poster, body := user(), fmt.Sprintf("comment %d, on %s", i, pid)
			got, err := s.Comment(ctx, a, pid, poster, body)
			if err != nil {
				t.Fatalf("call %d: Comment(%s, %q, %s): %v", i, a, pid, poster, err)
			}
			c := m.add(a, parent, poster, body, now())
			if want := c.comment(); !sameComment(got, want) {
				t.Fatalf("call %d: Comment = %+v, want %+v", i, got, want)
			}
		case r < 80: // a vote
			c := pick("")
			if c == nil {
				continue
			}
			u, v := user(), VoteType(rng.Intn(3)-1)
			got, err := s.VoteComment(ctx, u, c.ID(), ballot(v))
			if c.deleted {
				// A placeholder takes no votes, as Reddit's deleted
				// comments do: ErrNotFound, and nothing changes (the
				// next check sees it).
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("call %d: VoteComment on placeholder %s: %v, want ErrNotFound", i, c.ID(), err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("call %d: VoteComment(%s, %s, %v) on %+v: %v", i, u, c.ID(), v, c.comment(), err)
			}
			if want := m.vote(c, u, v); got != want {
				t.Fatalf("call %d: VoteComment(%s, %s, %v) = %+v, want %+v", i, u, c.ID(), v, got, want)
			}
		case r < 88: // an edit, by the poster or another
			c := pick("")
			if c == nil {
				continue
			}
			u, body := c.poster, fmt.Sprintf("edited at %d", i)
			if rng.Intn(4) == 0 || c.deleted {
				u = user()
			}
			got, err := s.EditComment(ctx, c.ID(), u, body)
			switch {
			case c.deleted:
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("call %d: EditComment of deleted %s = %+v, %v; want ErrNotFound", i, c.ID(), got, err)
				}
			case u != c.poster:
				if !errors.Is(err, ErrNotAllowed) {
					t.Fatalf("call %d: EditComment of %s's %s by %s = %+v, %v; want ErrNotAllowed", i, c.poster, c.ID(), u, got, err)
				}
			default:
				if err != nil {
					t.Fatalf("call %d: EditComment(%s): %v", i, c.ID(), err)
				}
				c.body = body
				if want := c.comment(); !sameComment(got, want) {
					t.Fatalf("call %d: EditComment = %+v, want %+v", i, got, want)
				}
			}
		default: // a delete, now and then of a comment already gone
			if rng.Intn(6) == 0 && m.next > 0 {
				id := strconv.FormatInt(1+rng.Int63n(m.next), 10)
				if _, ok := m.byID[id]; !ok {
					if err := s.DeleteComment(ctx, id); !errors.Is(err, ErrNotFound) {
						t.Fatalf("call %d: DeleteComment of removed %s: %v, want ErrNotFound", i, id, err)
					}
					continue
				}
			}
			c := pick("")
			if c == nil {
				continue
			}
			if err := s.DeleteComment(ctx, c.ID()); err != nil {
				t.Fatalf("call %d: DeleteComment(%s): %v", i, c.ID(), err)
			}
			if !c.deleted {
				m.remove(c)
			} // deleting a placeholder again changes nothing
		}
		if i%40 == 0 || i == n {
			m.check(t, s, rng, articles, orders)
			if t.Failed() {
				t.Fatalf("after call %d", i)
			}
		}
	}
	var placeholders, deepest int
	for _, c := range m.byID {
		deepest = max(deepest, c.depth)
		if c.deleted {
			placeholders++
		}
	}
	t.Logf("%d comments posted, %d left, %d of them placeholders; the deepest at depth %d", m.next, len(m.byID), placeholders, deepest)
	if deepest < MaxThreadDepth || placeholders == 0 {
		t.Errorf("the random calls made no thread deeper than MaxThreadDepth (%d) or no placeholder (%d): the check saw too little", deepest, placeholders)
	}
	// Replies of a removed comment, and Thread and Replies of unknown or
	// malformed ids.
	for id := int64(1); id <= m.next; id++ {
		if _, ok := m.byID[strconv.FormatInt(id, 10)]; !ok {
			if _, err := s.Replies(ctx, strconv.FormatInt(id, 10), Best, 10); !errors.Is(err, ErrNotFound) {
				t.Errorf("Replies of removed %d: %v, want ErrNotFound", id, err)
			}
			break
		}
	}
	for _, id := range []string{"0", "-1", "01", "x", "", strconv.FormatInt(m.next+1, 10)} {
		if _, err := s.Replies(ctx, id, Best, 10); !errors.Is(err, ErrNotFound) {
			t.Errorf("Replies(%q): %v, want ErrNotFound", id, err)
		}
		if _, err := s.Thread(ctx, id, Best, 10); !errors.Is(err, ErrNotFound) {
			t.Errorf("Thread(%q): %v, want ErrNotFound", id, err)
		}
	}
}

// TestCommentModel checks the model itself on trees worked out by hand.
func TestCommentModel(t *testing.T) {
	m := newCommentModel(DefaultVoteWeight)
	ids := func(list []ThreadComment) string {
		s := make([]string, len(list))
		for i, c := range list {
			s[i] = fmt.Sprintf("%s/%d/%d", c.ID, c.Depth, c.More)
		}
		return strings.Join(s, " ")
	}
	// A best-first fill across parents: a (top 3), b (top 1), c under a
	// (top -1), d under b (top 2).
	a := m.add("1", nil, "ann", "a", 100)
	b := m.add("1", nil, "bob", "b", 101)
	c := m.add("1", a, "cat", "c", 102)
	d := m.add("1", b, "dan", "d", 103)
	m.vote(a, "bob", Upvote)
	m.vote(a, "cat", Upvote)
	m.vote(c, "ann", Downvote)
	m.vote(c, "cat", Downvote)
	m.vote(d, "ann", Upvote)
	for _, tc := range []struct {
		o     Order
		limit int
		want  string
	}{
		{Top, 3, "1/0/1 2/0/0 4/1/0"},
		{Top, 4, "1/0/0 3/1/0 2/0/0 4/1/0"},
		{Top, 1, "1/0/1"},
		{TimeDesc, 2, "2/0/0 4/1/0"}, // d, newer than a, comes before it
		{TimeDesc, 3, "2/0/0 4/1/0 1/0/1"},
		{TimeAsc, 3, "1/0/0 3/1/0 2/0/1"},
	} {
		if got := ids(m.thread(m.top["1"], tc.o, tc.limit)); got != tc.want {
			t.Errorf("%v, %d: %s, want %s", tc.o, tc.limit, got, tc.want)
		}
	}
	// A placeholder is shown and not counted; removing its last reply
	// removes it too.
	m.remove(a)
	if !a.deleted || a.poster != "" || a.removed {
		t.Fatalf("a after delete: %+v", a)
	}
	if got := ids(m.thread(m.top["1"], Top, 1)); got != "1/0/1" || m.articleComments("1") != 3 {
		t.Errorf("with a deleted: %s, %d comments", got, m.articleComments("1"))
	}
	m.remove(c)
	if !a.removed || !c.removed || len(m.top["1"]) != 1 || m.articleComments("1") != 2 {
		t.Errorf("a and c after c's delete: %+v %+v, %d comments", a, c, m.articleComments("1"))
	}
	// A chain deeper than MaxThreadDepth: the levels past it are counted
	// in More.
	var p *mComment
	for i := 0; i < MaxThreadDepth+2; i++ {
		p = m.add("2", p, "ann", "x", 200)
	}
	list := m.thread(m.top["2"], Best, MaxThread)
	if len(list) != MaxThreadDepth || list[MaxThreadDepth-1].More != 2 || list[MaxThreadDepth-1].Depth != MaxThreadDepth-1 {
		t.Errorf("chain of %d: %s", MaxThreadDepth+2, ids(list))
	}
	if got := ids(m.thread(m.top["2"], Best, 2)); got != "5/0/10 6/1/10" {
		t.Errorf("chain, limit 2: %s", got)
	}
}
