package main

import (
	"flag"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/votekit/voting"
	ilayout "github.com/votekit/voting/internal/layout"
	"github.com/votekit/voting/internal/restore"
)

// checker holds what check read and what it found.
type checker struct {
	e        *env
	inv      *inventory
	recs     map[string]record
	problems []string
	unfixed  int
	// What -repair does, each through a script of the store: the
	// removals of what is stray (restore.Remove): members, live counts,
	// caches and leftover keys; articles to re-put from their records
	// (restore.Put; counts given where the voters say otherwise); and the
	// entries to set (restore.PutEntries): karma, page entries, groups'
	// members, thread heads, live counts, the comment id counter, and
	// the vote logs' stray lines taken back and votes linked anew.
	remove []restore.Removal
	reput  map[string][2]int64 // id -> counts (up, down)
	put    []restore.Entry
	// The comments' records, and the writes that set them right.
	crecs   map[string]crecord
	markers map[string]string          // article id -> its comment voter record's marker
	cvotes  [][3]string                // poster, voter, vote: the standing votes of others on comments
	rewrite map[string]restore.Comment // cid -> its record, to write again, whole or its head (restore.PutComments)
	replace map[string]crecord         // cid -> its record, to place again (restore.PutComments) in its parent's orderings
	// Moderation: the counted standing votes in the voter records (user ->
	// item, as a vote log's line names it, "a<id>" or "c<cid>" -> the
	// value, "1", "-1", or a logged vote's "1@<offset>", "-1@<offset>")
	// and the items whose voter record is open (item -> true), which the
	// vote logs are checked against.
	standing map[string]map[string]string
	open     map[string]bool
	// implied: the comment posters' own upvotes among standing (user +
	// " " + item), which no field holds and no log logs.
	implied map[string]bool
}

// stand notes user's counted vote, of value v (countedVote), on the item
// m ("a<id>" or "c<cid>").
func (c *checker) stand(user, m, v string) {
	if c.standing[user] == nil {
		c.standing[user] = map[string]string{}
	}
	c.standing[user][m] = v
}

// voterRecord reads the voter record at key, an article's or its
// comments', and its "" field; a record without one is a problem, and
// ok is false.
func (c *checker) voterRecord(key string) (h map[string]string, meta string, ok bool, err error) {
	if h, err = c.e.hashAll(key); err != nil {
		return nil, "", false, err
	}
	if meta, ok = h[""]; !ok {
		c.problem(false, "%s: no \"\" field", key)
	}
	return h, meta, ok, nil
}

func (c *checker) problem(fixable bool, format string, args ...interface{}) {
	msg := fmt.Sprintf(format, args...)
	if !fixable {
		msg += " (not repairable)"
		c.unfixed++
	}
	c.problems = append(c.problems, msg)
}

func (c *checker) reputArticle(id string) {
	if _, ok := c.reput[id]; !ok {
		r := c.recs[id]
		c.reput[id] = [2]int64{r.Up, r.Down}
	}
}

func cmdCheck(e *env, args []string) error {
	var repair *bool
	var karma, cost *[2]int64
	inv, err := scanFlags(e, "check", args, func(fs *flag.FlagSet) {
		repair = fs.Bool("repair", false, "rebuild what derives from the records (the README's votectl section lists what it can repair)")
		fs.Func("karma", "the karma a vote moves: `UP,DOWN` (the recorded options' by default)", pairFlag(&karma))
		fs.Func("vote-cost", "the karma a standing vote costs its voter: `UP,DOWN` (the recorded options' by default)", pairFlag(&cost))
	})
	if err != nil {
		return err
	}
	if err := e.commentsReadable(inv); err != nil {
		return err
	}
	if err := e.logsReadable(inv); err != nil {
		return err
	}
	if karma == nil {
		// The karma a vote moves, as the store records it: in its rules
		// record, or, for a store of an earlier layout, its identity.
		if st, id, ok, err := e.recorded(); err == nil && ok {
			for _, word := range withRules(id, e.rulesOf(st)).Options {
				w, err := ilayout.ParseRuleWord(word)
				if err != nil || len(w.Numbers) == 0 {
					continue // another option's word, or a rule without numbers
				}
				switch w.Name {
				case ilayout.RuleKarma:
					karma = &[2]int64{w.Numbers[0], w.Numbers[1]}
				case ilayout.RuleCost:
					cost = &[2]int64{w.Numbers[0], w.Numbers[1]}
				}
			}
		}
	}
	c := &checker{e: e, inv: inv, recs: map[string]record{}, reput: map[string][2]int64{}, markers: map[string]string{},
		standing: map[string]map[string]string{}, open: map[string]bool{}, implied: map[string]bool{}}
	steps := []func() error{c.records, c.orderings, c.buckets, c.voters, c.groups, c.caches, c.comments,
		func() error { return c.karma(karma, cost) }, c.pages, c.voteLogs, c.suspensions}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	for _, p := range c.problems {
		fmt.Fprintln(e.stdout, p)
	}
	if len(c.problems) == 0 {
		fmt.Fprintf(e.stdout, "check: %d articles, %d keys: ok\n", len(c.recs), inv.n)
		return nil
	}
	if *repair {
		if err := c.repair(); err != nil {
			return fmt.Errorf("repair: %w (run check again)", err)
		}
		fmt.Fprintf(e.stdout, "check: %d articles, %d problems: %d repaired, %d not repairable\n",
			len(c.recs), len(c.problems), len(c.problems)-c.unfixed, c.unfixed)
		if c.unfixed == 0 {
			return nil
		}
		return errProblems
	}
	fmt.Fprintf(e.stdout, "check: %d articles, %d problems (%d repairable with -repair)\n",
		len(c.recs), len(c.problems), len(c.problems)-c.unfixed)
	return errProblems
}

// pairFlag parses "UP,DOWN", as examples/newsapi's flags do.
func pairFlag(p **[2]int64) func(string) error {
	return func(s string) error {
		a, b, ok := strings.Cut(s, ",")
		up, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
		down, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("%q is not UP,DOWN", s)
		}
		*p = &[2]int64{up, down}
		return nil
	}
}

func (c *checker) records() error {
	ids := c.inv.ids(famArticle)
	for _, n := range c.inv.names(famArticle) {
		if !canonicalID(n) {
			c.problem(false, "key %s: not an article id", c.e.l.key(famArticle, n))
		}
	}
	p := c.e.progress("reading records", len(ids))
	err := c.e.mget(prefixed(c.e.l, famArticle, ids), func(i int, v []byte) {
		if v == nil {
			return
		}
		r, err := ilayout.ParseRecord(string(v))
		if err != nil {
			c.problem(false, "article %s: %v", ids[i], err)
			return
		}
		c.recs[ids[i]] = r
		p.add(1)
	})
	p.done()
	return err
}

// belongs reports whether article id belongs in ordering o.
func (c *checker) belongs(id, o string) (record, bool) {
	r, ok := c.recs[id]
	if !ok {
		return r, false
	}
	return r, o == "score" || o == "time" || r.Has(o)
}

func (c *checker) orderings() error {
	for _, o := range allOrderings {
		key := c.e.l.ordering(o)
		z, err := c.e.zsetAll(key)
		if err != nil {
			return err
		}
		for m, v := range z {
			id, ok := idOf(m)
			r, in := c.belongs(id, o)
			switch {
			case !ok || !in:
				c.problem(true, "%s: member %q is no article of this ordering", key, m)
				c.remove = append(c.remove, restore.Removal{Kind: restore.Ordering, Name: o, Member: m})
			case !sameValue(o, v, recordValue(r, o)):
				c.problem(true, "%s: article %s at %s, its record says %s", key, id, num(v), num(recordValue(r, o)))
				c.reputArticle(id)
			}
		}
		for _, id := range sortedKeys(c.recs) {
			if _, in := c.belongs(id, o); in {
				if _, ok := z[member(id)]; !ok {
					c.problem(true, "%s: article %s missing", key, id)
					c.reputArticle(id)
				}
			}
		}
	}
	return nil
}

func (c *checker) buckets() error {
	seen := map[string]bool{} // key + member
	err := c.eachZset(famTop, func(name, key string, z map[string]float64) error {
		for m, v := range z {
			id, ok := idOf(m)
			r, in := c.belongs(id, "top")
			if !ok || !in || !contains(c.e.l.buckets(r.Posted), key) {
				c.problem(true, "%s: member %q is no article of this bucket", key, m)
				c.remove = append(c.remove, restore.Removal{Kind: restore.Bucket, Name: name, Member: m})
				continue
			}
			seen[key+" "+m] = true
			if v != recordValue(r, "top") {
				c.problem(true, "%s: article %s at %s, its record says %s", key, id, num(v), num(recordValue(r, "top")))
				c.reputArticle(id)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range sortedKeys(c.recs) {
		r := c.recs[id]
		if !r.Has("top") {
			continue
		}
		for _, b := range c.e.l.buckets(r.Posted) {
			if !seen[b+" "+member(id)] {
				c.problem(true, "%s: article %s missing", b, id)
				c.reputArticle(id)
			}
		}
	}
	return nil
}

func (c *checker) voters() error {
	ids := c.inv.names(famVoted)
	p := c.e.progress("reading voter records", len(ids))
	defer p.done()
	for _, id := range ids {
		p.add(1)
		key := c.e.l.key(famVoted, id)
		r, ok := c.recs[id]
		if !ok {
			c.problem(false, "%s: voter record of no article", key)
			continue
		}
		h, ms, ok, err := c.voterRecord(key)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		mt, err := ilayout.ParseVoteMeta(ms)
		if err != nil {
			c.problem(false, "%s: %v", key, err)
			continue
		}
		var up, down int64
		c.open["a"+id] = true
		for u, v := range h {
			switch {
			case u == "":
			case countedVote(v) == 1:
				up++
			case countedVote(v) == -1:
				down++
			case v == "0": // a vote taken back (ilayout.VoteValue)
			case shadowVote(v) != 0: // a shadowed user's vote: counted nowhere
			default:
				c.problem(false, "%s: voter %q holds %q, not a vote", key, u, v)
			}
			if u != "" && countedVote(v) != 0 {
				c.stand(u, "a"+id, v)
			}
		}
		if up != r.Up || down != r.Down || mt.Up != up || mt.Down != down {
			c.problem(true, "article %s: counts %d up %d down, voter record field \"\" %d %d, but its voters are %d up %d down",
				id, r.Up, r.Down, mt.Up, mt.Down, up, down)
			c.reput[id] = [2]int64{up, down}
		}
		if mt.Posted != r.Posted || mt.Weight != r.Weight || mt.Orders != r.Orders {
			c.problem(false, "%s: field \"\" says posted %d weight %s orders %q, the record %d %s %q",
				key, mt.Posted, mt.Weight, mt.Orders, r.Posted, r.Weight, r.Orders)
		}
		n, err := redis.Int64(c.e.do("SCARD", c.e.l.key(famGroups, id)))
		if err != nil {
			return err
		}
		if n != mt.Groups {
			c.problem(true, "%s: field \"\" counts %d groups, the article is in %d", key, mt.Groups, n)
			c.reputArticle(id)
		}
	}
	return nil
}

func (c *checker) groups() error {
	for _, id := range c.inv.names(famGroups) {
		key := c.e.l.key(famGroups, id)
		names, err := c.e.setAll(key)
		if err != nil {
			return err
		}
		if _, ok := c.recs[id]; !ok {
			c.problem(false, "%s: groups of no article", key)
			continue
		}
		for _, g := range names {
			gk := c.e.l.key(famGroup, g)
			in, err := redis.Bool(c.e.do("SISMEMBER", gk, member(id)))
			if err != nil {
				return err
			}
			if !in {
				c.problem(true, "%s: article %s is in group %q, which lacks it", gk, id, g)
				c.put = append(c.put, restore.Entry{Kind: restore.Group, Text: g, ID: id})
			}
		}
	}
	for _, g := range c.inv.names(famGroup) {
		gk := c.e.l.key(famGroup, g)
		err := c.e.scanAll("SSCAN", gk, func(ms []string) error {
			for _, m := range ms {
				id, ok := idOf(m)
				if _, live := c.recs[id]; !ok || !live {
					c.problem(true, "%s: member %q is no article", gk, m)
					c.remove = append(c.remove, restore.Removal{Kind: restore.Group, Name: g, Member: m})
					continue
				}
				in, err := redis.Bool(c.e.do("SISMEMBER", c.e.l.key(famGroups, id), g))
				if err != nil {
					return err
				}
				if !in {
					c.problem(true, "%s: article %s's groups lack %q (the article's groups are taken as right)", gk, id, g)
					c.remove = append(c.remove, restore.Removal{Kind: restore.Group, Name: g, Member: m})
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) caches() error {
	for _, name := range c.inv.names(famCache) {
		key := c.e.l.key(famCache, name)
		o, g, ok := splitCache(name)
		if !ok || !contains(allOrderings, o) {
			c.problem(true, "%s: no cache of this store", key)
			c.remove = append(c.remove, restore.Removal{Kind: restore.Cache, Name: name, Whole: true})
			continue
		}
		z, err := c.e.zsetAll(key)
		if err != nil {
			return err
		}
		group, err := c.e.setAll(c.e.l.key(famGroup, g))
		if err != nil {
			return err
		}
		bad := ""
		complete := false
		for m, v := range z {
			if strings.HasPrefix(m, "#") {
				complete = complete || m == "#"
				continue
			}
			id, _ := idOf(m)
			r, in := c.belongs(id, o)
			i := sort.SearchStrings(group, m)
			switch {
			case !in:
				bad = fmt.Sprintf("article %q gone or not in the ordering", m)
			case i >= len(group) || group[i] != m:
				bad = fmt.Sprintf("article %s not in the group", id)
			case !sameValue(o, v, recordValue(r, o)):
				bad = fmt.Sprintf("article %s at %v, the ordering's value is %v", id, v, recordValue(r, o))
			}
		}
		if complete && bad == "" {
			for _, m := range group {
				id, _ := idOf(m)
				if _, in := c.belongs(id, o); in {
					if _, ok := z[m]; !ok {
						bad = fmt.Sprintf("complete, but lacks article %s", id)
						break
					}
				}
			}
		}
		if bad != "" {
			c.problem(true, "%s: %s (a cache is deleted, and rebuilt by the next read)", key, bad)
			c.remove = append(c.remove, restore.Removal{Kind: restore.Cache, Name: name, Whole: true})
		}
	}
	return nil
}

// karma recomputes each user's karma from the standing votes, which is
// possible only while every article ever posted is still open: the
// votes of a closed or deleted article are gone, and its karma stays.
// It takes karma, with its numbers and vote cost, as on from the store's
// start: the store records no time of a change by Reconfigure, after
// which only the later votes count (docs/OPERATIONS.md), and it says so
// where it finds karma wrong.
func (c *checker) karma(per, cost *[2]int64) error {
	if len(c.inv.names(famKarma)) == 0 {
		return nil
	}
	seq, err := redis.Int64(c.e.do("GET", c.e.l.seq()))
	if err != nil && err != redis.ErrNil {
		return err
	}
	switch {
	case per == nil:
		fmt.Fprintln(c.e.stdout, "karma: not checked: the store records no karma option; give -karma UP,DOWN (and -vote-cost) where it keeps karma")
		return nil
	case int64(len(c.recs)) != seq || len(c.inv.ids(famVoted)) != len(c.recs):
		fmt.Fprintln(c.e.stdout, "karma: not checked: some articles are closed or deleted, and their votes are gone")
		return nil
	case !c.commentVotesStand():
		fmt.Fprintln(c.e.stdout, "karma: not checked: some comments are closed or removed, and their votes are gone")
		return nil
	}
	want := map[string]int64{}
	for id, r := range c.recs {
		h, err := c.e.hashAll(c.e.l.key(famVoted, id))
		if err != nil {
			return err
		}
		for u, v := range h {
			if u == "" || u == r.Poster || countedVote(v) == 0 {
				continue // a shadow vote counts in no karma
			}
			i := 0
			if countedVote(v) == -1 {
				i = 1
			}
			want[r.Poster] += per[i]
			if cost != nil {
				want[u] -= cost[i]
			}
		}
	}
	for _, x := range c.cvotes {
		i := 0
		if x[2] == "-1" {
			i = 1
		}
		want[x[0]] += per[i]
		if cost != nil {
			want[x[1]] -= cost[i]
		}
	}
	have, err := c.e.zsetAll(c.e.l.karma())
	if err != nil {
		return err
	}
	for u := range have {
		if _, ok := want[u]; !ok {
			want[u] = 0
		}
	}
	wrong := 0
	for _, u := range sortedKeys(want) {
		if got := -int64(have[u]); got != want[u] {
			c.problem(true, "karma of %q is %d, its standing votes make %d", u, got, want[u])
			c.put = append(c.put, restore.Entry{Kind: restore.Karma, User: u, N: float64(want[u])})
			wrong++
		}
	}
	if wrong > 0 {
		// The store records no time of a change of its karma options.
		fmt.Fprintln(c.e.stdout, "karma: recomputed with every standing vote counted, as a store whose karma, with these numbers and vote cost, was on from its start keeps it; where Reconfigure turned karma on or changed its numbers later, the votes before moved nothing: do not -repair it")
	}
	return nil
}

// eachZset calls fn with the name (after the family's prefix), the key
// and the members with their scores of each sorted set of family fam,
// and stops at its first error.
func (c *checker) eachZset(fam string, fn func(name, key string, z map[string]float64) error) error {
	for _, name := range c.inv.names(fam) {
		key := c.e.l.key(fam, name)
		z, err := c.e.zsetAll(key)
		if err != nil {
			return err
		}
		if err := fn(name, key, z); err != nil {
			return err
		}
	}
	return nil
}

// submitted is the entry of article id, of record r, in its poster's
// page of submissions.
func submitted(r record, id string) restore.Entry {
	return restore.Entry{Kind: restore.Page, Item: "submitted", User: r.Poster, ID: id, N: float64(r.Posted)}
}

// pages checks the users' pages (WithUserPages) against the records and
// the standing votes of open articles, where the recorded identity keeps
// them; a store without a record is taken to keep them where it has
// pages. Entries of deleted articles are not problems (a read drops
// them); a page at its cap of 1,000 may lack old entries.
//
// The pages of a store whose identity has no user pages are not
// checked: turned off, the pages stay as they were until their articles
// go, and no vote changes them (docs/OPERATIONS.md, "Changing shared
// options"). Turned on, pages list the posts and upvotes from the change
// on, and the store records no time of the change: an entry lacking is
// a problem only where pages were kept when its post or upvote was made,
// as the store shows it: the post's own upvote listed on its poster's
// upvoted page (a post writes both), or the article posted after the
// earliest entry of any page (pages kept from then on). Others are
// counted, not problems, as votes missing from the vote logs are.
func (c *checker) pages() error {
	_, id, recorded, err := c.e.recorded()
	if err != nil {
		return err
	}
	users := len(c.inv.names(famSubmitted)) + len(c.inv.names(famUpvoted))
	pagesOn := users > 0
	if recorded {
		pagesOn = contains(id.Options, ilayout.OptionUserPages)
	}
	if !pagesOn {
		if users > 0 {
			fmt.Fprintf(c.e.stdout, "user pages: %d pages, but the recorded identity has no user pages (WithUserPages): not checked (they stay until their articles go)\n", users)
		}
		return nil
	}
	earliest := math.Inf(1) // the earliest entry of any page: pages were kept from then on
	err = c.eachZset(famSubmitted, func(u, key string, z map[string]float64) error {
		for m, v := range z {
			earliest = math.Min(earliest, v)
			id, _ := idOf(m)
			if r, ok := c.recs[id]; ok && (r.Poster != u || v != float64(r.Posted)) {
				c.problem(true, "%s: article %s (poster %q, posted %d) at %v", key, id, r.Poster, r.Posted, v)
				c.remove = append(c.remove, restore.Removal{Kind: restore.Submitted, Name: u, Member: m})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = c.eachZset(famUpvoted, func(u, key string, z map[string]float64) error {
		for m, at := range z {
			earliest = math.Min(earliest, at)
			id, _ := idOf(m)
			if !c.inv.has(famVoted, id) {
				continue
			}
			v, err := redis.String(c.e.do("HGET", c.e.l.key(famVoted, id), u))
			if err != nil && err != redis.ErrNil {
				return err
			}
			if countedVote(v) != 1 {
				c.problem(true, "%s: article %s listed, but %q's vote on it is %q", key, id, u, v)
				c.remove = append(c.remove, restore.Removal{Kind: restore.Upvoted, Name: u, Member: m})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// kept reports whether pages were kept when article r was posted, as
	// far as the store shows it.
	kept := func(r record, id string) (bool, error) {
		if float64(r.Posted) > earliest {
			return true, nil
		}
		_, err := redis.Float64(c.e.do("ZSCORE", c.e.l.key(famUpvoted, r.Poster), member(id)))
		if err == redis.ErrNil {
			return false, nil
		}
		return err == nil, err
	}
	unlisted := 0
	for _, id := range sortedKeys(c.recs) {
		r := c.recs[id]
		key := c.e.l.key(famSubmitted, r.Poster)
		s, listed, full, err := c.onPage(key, member(id))
		if err != nil {
			return err
		}
		if !listed {
			if full {
				continue
			}
			if ok, err := kept(r, id); err != nil {
				return err
			} else if !ok {
				unlisted++
				continue
			}
			c.problem(true, "%s: lacks article %s", key, id)
			c.put = append(c.put, submitted(r, id))
		} else if s != float64(r.Posted) {
			c.problem(true, "%s: article %s at %v, posted %d", key, id, s, r.Posted)
			c.put = append(c.put, submitted(r, id))
		}
	}
	for _, id := range c.inv.ids(famVoted) {
		h, err := c.e.hashAll(c.e.l.key(famVoted, id))
		if err != nil {
			return err
		}
		for _, u := range sortedKeys(h) {
			if u == "" || countedVote(h[u]) != 1 {
				continue
			}
			key := c.e.l.key(famUpvoted, u)
			_, listed, full, err := c.onPage(key, member(id))
			if err != nil {
				return err
			}
			if !listed {
				if full {
					continue
				}
				// An upvote is made after its article's post: one of an
				// article posted after the earliest entry was listed.
				if r, ok := c.recs[id]; !ok || float64(r.Posted) <= earliest {
					unlisted++
					continue
				}
				c.problem(false, "%s: lacks article %s, which %q upvoted (the time of the upvote is not kept)", key, id, u)
			}
		}
	}
	if unlisted > 0 {
		fmt.Fprintf(c.e.stdout, "user pages: %d posts and standing upvotes are on no page (made before the store kept pages, or the pages lost them)\n", unlisted)
	}
	return nil
}

// onPage returns m's value on the user page at key and whether the page
// lists it; for one it does not, full says the page holds its
// voting.MaxUserPageEntries, the newest kept, so m may have gone for
// newer entries.
func (c *checker) onPage(key, m string) (v float64, listed, full bool, err error) {
	v, err = redis.Float64(c.e.do("ZSCORE", key, m))
	if err == redis.ErrNil {
		n, err := redis.Int(c.e.do("ZCARD", key))
		return 0, false, n >= voting.MaxUserPageEntries, err
	}
	return v, err == nil, false, err
}

// repair writes what check found, in small steps, each through a
// script of the store: first the removals (restore.Remove), whose script
// refuses a store of another layout before it removes anything; then a
// script per article, the entries to set, and the comments' records and
// places.
func (c *checker) repair() error {
	st, err := c.e.store()
	if err != nil {
		return err
	}
	if len(c.remove) > 0 {
		if err := restore.Remove(c.e.ctx, st, c.remove); err != nil {
			return err
		}
	}
	p := c.e.progress("repairing", len(c.reput))
	for _, id := range sortedKeys(c.reput) {
		r := c.recs[id]
		r.Up, r.Down = c.reput[id][0], c.reput[id][1]
		a := restoreOf(id, r, false, 0, 0, nil)
		a.KeepGroups = true
		if _, err := restore.Put(c.e.ctx, st, a); err != nil {
			return fmt.Errorf("article %s: %w", id, err)
		}
		p.add(1)
	}
	p.done()
	// Then the entries to set, and the records to write whole
	// (restore_entries.lua, restore_comments.lua).
	if err := c.e.putEntries(c.put); err != nil {
		return err
	}
	var chunk []restore.Comment
	for _, id := range sortedKeys(c.rewrite) {
		chunk = append(chunk, c.rewrite[id])
	}
	for at := 0; at < len(chunk); at += cstep {
		if err := restore.PutComments(c.e.ctx, st, chunk[at:min(at+cstep, len(chunk))]); err != nil {
			return err
		}
	}
	// Last, once the counts are set: the comments whose places are
	// missing or wrong, placed again by the store's own script.
	chunk = chunk[:0]
	for _, id := range sortedKeys(c.replace) {
		x := restoreComment(id, c.replace[id], false)
		x.PlacesOnly = true // its head alone was read
		chunk = append(chunk, x)
	}
	for at := 0; at < len(chunk); at += cstep {
		if err := restore.PutComments(c.e.ctx, st, chunk[at:min(at+cstep, len(chunk))]); err != nil {
			return err
		}
	}
	return nil
}

// num formats a value of an ordering as a person reads it: 1704074976,
// not 1.704074976e+09.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// voteLogs checks the users' vote logs (WithVoteLog), journals of a
// line a vote (ilayout.LogEntry), against the voter records of the open
// items: each live line (not taken back) of an item whose voter record
// is open is the user's counted standing vote on it, in its direction,
// and that vote's value links it ("1@<offset>": a change takes the line
// back, a cancel or a reversal too, and a shadowed user's vote has
// none); and each linked value points to such a line. Lines of closed,
// deleted or removed items are not checked: the log outlives their
// voter records. A standing vote with no line is no problem, only
// counted: a vote cast before the store had its log has none, and an
// article's poster's own upvote, and a comment's, is the item's, not
// logged. -repair takes a stray line back, links a plain vote to its
// line, and links a value that points to no line anew, to the newest
// live line of its vote, or unlinks it (its plain vote), through the
// store's restore script (restore.LogKill, restore.LogLink).
func (c *checker) voteLogs() error {
	users := c.inv.names(famUVotes)
	_, id, recorded, err := c.e.recorded()
	if err != nil {
		return err
	}
	logOn := recorded && contains(id.Options, "votelog")
	if len(users) == 0 && !logOn {
		return nil
	}
	if !logOn {
		fmt.Fprintf(c.e.stdout, "vote logs: %d users' logs, but the recorded identity has no vote log (WithVoteLog): not checked\n", len(users))
		return nil
	}
	// The users with a log, and those with a vote linked to one.
	all := map[string]bool{}
	for _, u := range users {
		all[u] = true
	}
	for u, votes := range c.standing {
		for m, v := range votes {
			if c.open[m] && logOffset(v) >= 0 {
				all[u] = true
			}
		}
	}
	unlogged := 0
	for _, u := range sortedKeys(all) {
		n, err := c.voteLog(u)
		if err != nil {
			return err
		}
		unlogged += n
	}
	// The standing votes of users without a log.
	for u, votes := range c.standing {
		if all[u] {
			continue
		}
		for m, v := range votes {
			if c.open[m] && !c.ownVote(u, m, v) {
				unlogged++
			}
		}
	}
	if unlogged > 0 {
		fmt.Fprintf(c.e.stdout, "vote logs: %d standing votes are in no log (cast before the store had its vote log, or the log lost them)\n", unlogged)
	}
	return nil
}

// ownVote reports whether user u's standing vote of value v on item m
// is its poster's own upvote, cast by Post or Comment, which no log
// logs.
func (c *checker) ownVote(u, m, v string) bool {
	r, ok := c.recs[m[1:]]
	return (ok && m[0] == 'a' && r.Poster == u && v == "1") || c.implied[u+" "+m]
}

// voteLog checks user u's vote log (voteLogs), read in bounded chunks
// (journal), and returns how many of u's standing votes on open items
// it lacks.
func (c *checker) voteLog(u string) (unlogged int, err error) {
	key := c.e.l.key(famUVotes, u)
	lines := map[int64]ilayout.LogEntry{} // the live lines of open items, by offset
	byItem := map[string][]int64{}        // their offsets by item, oldest first
	if c.inv.has(famUVotes, u) {
		err := c.e.journal(key, func(l logLine) error {
			switch {
			case !l.ok:
				c.problem(false, "%s: the line at offset %d, %q, is no logged vote (\"<sign><item> <at>\", sign +, - or x, item a<id> or c<cid>)",
					key, l.off, l.text)
			case l.e.Vote != 0 && c.open[l.e.Member()]:
				lines[l.off] = l.e
				byItem[l.e.Member()] = append(byItem[l.e.Member()], l.off)
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	items := map[string]bool{}
	for m := range byItem {
		items[m] = true
	}
	for m := range c.standing[u] {
		if c.open[m] {
			items[m] = true
		}
	}
	for _, m := range sortedKeys(items) {
		v, standing := c.standing[u][m]
		vote, off := countedVote(v), logOffset(v)
		what := "article " + m[1:]
		if m[0] == 'c' {
			what = "comment " + m[1:]
		}
		// The line the vote links, or should: the one its value points
		// to, else the newest live line of its vote.
		to := int64(-1)
		if e, ok := lines[off]; ok && off >= 0 && e.Member() == m && e.Vote == vote {
			to = off
		} else if standing {
			for _, o := range byItem[m] {
				if lines[o].Vote == vote {
					to = o
				}
			}
		}
		text := v // the value as the record holds it, for the repair to find
		if c.implied[u+" "+m] {
			text = ""
		}
		link := restore.Entry{Kind: restore.LogLink, User: u, Item: logItem(ilayout.LogEntry{Comment: m[0] == 'c'}), ID: m[1:],
			Vote: vote, Text: text, Offset: to}
		switch {
		case !standing || to == off:
		case off >= 0 && to >= 0:
			c.problem(true, "%s: %q's vote on the %s is %q, which links no live line of it; the line at offset %d is its (linked to it)",
				key, u, what, v, to)
			c.put = append(c.put, link)
		case off >= 0:
			c.problem(true, "%s: %q's vote on the %s is %q, which links no live line of it, and none is (unlinked)", key, u, what, v)
			c.put = append(c.put, link)
		default: // a plain vote, its line live
			c.problem(true, "%s: %q's vote on the %s is logged at offset %d, but its value %q does not link it (linked to it)",
				key, u, what, to, v)
			c.put = append(c.put, link)
		}
		if standing && to < 0 && !c.ownVote(u, m, v) {
			unlogged++
		}
		for _, o := range byItem[m] {
			if o == to {
				continue
			}
			e := lines[o]
			held := fmt.Sprintf("holds %q", v)
			switch {
			case !standing:
				held = "holds no counted vote"
			case to >= 0:
				held += fmt.Sprintf(", its line at offset %d", to)
			}
			c.problem(true, "%s: the line at offset %d logs %s on the %s, but its voter record %s (taken back)",
				key, o, voteWord(e.Vote), what, held)
			c.put = append(c.put, restore.Entry{Kind: restore.LogKill, User: u, Item: link.Item, ID: e.ID, Vote: e.Vote, Offset: o})
		}
	}
	return unlogged, nil
}

// voteWord names a vote, 1 or -1, in a message.
func voteWord(v int) string {
	if v == 1 {
		return "an upvote"
	}
	return "a downvote"
}

// suspensions checks the suspensions' hash: each a mode and an end, and
// the store's record carrying, after its identity, an end no earlier
// than any on (lib/moderation.lua lastEnd): a vote reads no suspension
// past the record's end.
func (c *checker) suspensions() error {
	if !c.inv.has(famSuspended, "") {
		return nil
	}
	key := c.e.l.key(famSuspended, "")
	h, err := c.e.hashAll(key)
	if err != nil {
		return err
	}
	var latest int64
	for _, u := range sortedKeys(h) {
		_, until, ok := parseSuspension(h[u])
		if !ok {
			c.problem(false, "%s: user %q holds %q, no suspension (\"r <ms>\" or \"s <ms>\")", key, u, h[u])
			continue
		}
		latest = max(latest, until)
	}
	if latest <= storeNowMs(c.e.now()) {
		return nil // none on
	}
	rec, err := redis.String(c.e.do("GET", c.e.l.key(famStore, "")))
	if err != nil && err != redis.ErrNil {
		return err
	}
	_, end, _ := strings.Cut(rec, "\n")
	if n, err := strconv.ParseInt(end, 10, 64); err != nil || n < latest {
		c.problem(false, "%s: the record carries the latest end of the suspensions %q, one is on until %d: a vote does not read it (Suspend again to set it)",
			c.e.l.key(famStore, ""), end, latest)
	}
	return nil
}
