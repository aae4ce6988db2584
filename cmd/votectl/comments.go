package main

// comments.go is what export, import and check do with comments: the
// records read in steps, the structure every comment implies (the
// linked lists of replies, the live counts), and the writes that put it
// in place.

import (
	"bufio"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
	ilayout "github.com/votekit/voting/internal/layout"
	"github.com/votekit/voting/internal/restore"
)

// cstep is how many comments a step reads or writes: their records,
// bodies included, up to voting.MaxCommentLen bytes each, make a
// pipeline of cstep GETs at most 1 MB.
const cstep = 100

// readComments reads the heads of the records of ids (readChunk), cstep
// at a time: what check and export need of every comment at once, in as
// many bytes as the record's hash of layout 4 took. bad reports a record
// that does not parse (a hash of layout 4 among them), and a record gone
// meanwhile is left out.
func (e *env) readComments(ids []string, bad func(id string, err error)) (map[string]crecord, error) {
	out := make(map[string]crecord, len(ids))
	p := e.progress("reading comments", len(ids))
	defer p.done()
	for at := 0; at < len(ids); at += cstep {
		chunk := ids[at:min(at+cstep, len(ids))]
		if err := e.readChunk(chunk, false, out, bad); err != nil {
			return nil, err
		}
		p.add(len(chunk))
	}
	return out, nil
}

// readChunk reads the records of ids into out, with one pipeline: whole
// (GET), or their heads only, as lib/tree.lua readHead reads them,
// and one byte more: their Body is then no more than the body's first
// byte, "" where the body is. A record read so is never written back
// whole but with Body "".
func (e *env) readChunk(ids []string, whole bool, out map[string]crecord, bad func(id string, err error)) error {
	cmds := make([]cmd, len(ids))
	for i, id := range ids {
		cmds[i] = cmd{"GETRANGE", []interface{}{e.l.key(famComment, id), 0, ilayout.CommentHead}}
		if whole {
			cmds[i] = cmd{"GET", []interface{}{e.l.key(famComment, id)}}
		}
	}
	replies, err := e.pipeline(cmds)
	if err != nil {
		return err
	}
	for i, r := range replies {
		s, err := redis.String(r, nil)
		switch {
		case err == redis.ErrNil || err == nil && s == "":
			continue // gone meanwhile (GETRANGE replies "")
		case err != nil:
			bad(ids[i], fmt.Errorf("not a record of layout %d (%v)", voting.LayoutVersion, err))
			continue
		}
		c, err := ilayout.ParseCommentRecord(s)
		if err != nil {
			bad(ids[i], err)
			continue
		}
		out[ids[i]] = c
	}
	return nil
}

// commentsReadable refuses a store whose comments are not all of this
// layout: one recorded as layout 4, or one whose comments Reconfigure is
// still moving (cmoving). Commands that read comments call it first.
func (e *env) commentsReadable(inv *inventory) error {
	_, id, ok, err := e.recorded()
	if err != nil {
		return err
	}
	switch {
	case ok && id.Layout == 4:
		return usagef("the store records layout 4 (%q), whose comments this votectl (layout %d) does not read: "+
			"migrate it first with votectl options and the flags of its service (Store.Reconfigure moves its comments), then run this again",
			id.String(), voting.LayoutVersion)
	case inv.has(famMoving, ""):
		return usagef("the comments of the store are still moving from layout 4 to %d (%s is set): "+
			"finish the migration with votectl options and the flags of its service (Store.Reconfigure), then run this again",
			voting.LayoutVersion, e.l.key(famMoving, ""))
	}
	return nil
}

// logsReadable refuses a store whose vote logs are not all of this
// layout: sorted sets of layout 6 (uvotes:) are left, in a store recorded
// as layout 6 or one whose logs Reconfigure is still moving into
// journals. Commands that read the logs (check, export) call it first.
func (e *env) logsReadable(inv *inventory) error {
	if n := len(inv.names(famUVotes6)); n > 0 {
		return usagef("the vote logs of the store are still moving from layout 6 to %d (%d sorted sets at %s* are left): "+
			"finish the migration with votectl options and the flags of its service (Store.Reconfigure), then run this again",
			voting.LayoutVersion, n, e.l.key(famUVotes6, ""))
	}
	return nil
}

// threads is the structure the comments imply, as the store's scripts
// keep it: each parent's replies in id order (the order they came), the
// live descendants of each comment and the live comments of each
// article.
type threads struct {
	kids map[string][]string // parent name (lib/tree.lua parentName) -> cids, oldest first
	live map[string]int64    // cid -> its live descendants
	arts map[string]int64    // article id -> its live comments
}

// deriveThreads works out the threads of cs; a comment whose parent is
// not in cs is left out of every count.
func deriveThreads(cs map[string]crecord) threads {
	t := threads{kids: map[string][]string{}, live: map[string]int64{}, arts: map[string]int64{}}
	ids := sortedKeys(cs)
	sortIDs(ids)
	for _, id := range ids {
		c := cs[id]
		t.kids[parentName(c)] = append(t.kids[parentName(c)], id)
	}
	// Newest first: each comment's count is whole before its parent's.
	for i := len(ids) - 1; i >= 0; i-- {
		c := cs[ids[i]]
		n := t.live[ids[i]]
		if !c.Deleted {
			n++
		}
		if c.Parent == "" {
			t.arts[c.Article] += n
		} else if _, ok := cs[c.Parent]; ok {
			t.live[c.Parent] += n
		}
	}
	return t
}

// links sets the fields of c (comment id) that its place implies: its
// list's neighbours, the ends of its own replies and its live count.
func (t threads) links(id string, c *crecord) {
	sib := t.kids[parentName(*c)]
	i := sort.Search(len(sib), func(i int) bool { return !lessID(sib[i], id) })
	c.Next, c.Prev = "", ""
	if i > 0 {
		c.Next = sib[i-1]
	}
	if i+1 < len(sib) {
		c.Prev = sib[i+1]
	}
	c.First, c.Last = ends(t.kids[id])
	c.Replies = t.live[id]
}

// ends are a list's newest and oldest ids ("" for none).
func ends(list []string) (first, last string) {
	if len(list) == 0 {
		return "", ""
	}
	return list[len(list)-1], list[0]
}

// exportComments writes the comments of the exported articles, in id
// order (a parent before its replies), then each article's comment voter
// record and its votes, then the comment id counter, the pages and the
// last-comment times. exported holds the ids of the articles exported:
// the comments of others (deleted meanwhile) are left out.
func (e *env) exportComments(w *bufio.Writer, inv *inventory, exported map[string]bool) error {
	ids := inv.ids(famComment)
	// A record that does not parse fails the export: an export that left
	// it out would import as a store without it.
	var unread error
	bad := func(id string, err error) {
		if unread == nil {
			unread = fmt.Errorf("comment %s: %v (run check)", id, err)
		}
	}
	cs, err := e.readComments(ids, bad)
	if err == nil {
		err = unread
	}
	if err != nil {
		return err
	}
	for _, id := range ids {
		c, ok := cs[id]
		if !ok {
			continue
		}
		if _, ok := cs[c.Parent]; !exported[c.Article] || (c.Parent != "" && !ok) {
			// Its article or parent went meanwhile (a Delete's purge).
			delete(cs, id)
		}
	}
	p := e.progress("exporting comments", len(ids))
	for at := 0; at < len(ids); at += cstep {
		chunk := ids[at:min(at+cstep, len(ids))]
		whole := make(map[string]crecord, len(chunk))
		err := e.readChunk(chunk, true, whole, bad)
		if err == nil {
			err = unread
		}
		if err != nil {
			return err
		}
		for _, id := range chunk {
			if err := e.exportComment(w, id, cs, whole); err != nil {
				return err
			}
		}
		p.add(len(chunk))
	}
	p.done()
	for _, aid := range inv.ids(famCVoted) {
		if !exported[aid] {
			continue
		}
		key := e.l.key(famCVoted, aid)
		h, err := e.hashAll(key)
		if err != nil {
			return err
		}
		marker, ok := h[""]
		if !ok {
			continue // expired meanwhile
		}
		exp, err := e.expireAt(key)
		if err != nil {
			return err
		}
		if err := e.emit(w, line{Type: "cvoted", ID: aid, Marker: marker, ExpiresMs: exp}); err != nil {
			return err
		}
		type vote struct{ cid, user, v string }
		var votes []vote
		for f, v := range h {
			cid, user, ok := strings.Cut(f, ":")
			if c, known := cs[cid]; ok && known && c.Article == aid {
				votes = append(votes, vote{cid, user, v})
			}
		}
		sort.Slice(votes, func(i, j int) bool {
			if votes[i].cid != votes[j].cid {
				return lessID(votes[i].cid, votes[j].cid)
			}
			return votes[i].user < votes[j].user
		})
		for _, x := range votes {
			v, shadow, ok := voteValue(x.v)
			if !ok {
				return fmt.Errorf("%s: field %q holds %q, not a vote (run check)", key, cvoteField(x.cid, x.user), x.v)
			}
			if v == 0 && x.user != cs[x.cid].Poster {
				continue // a vote taken back: no vote; a poster's is, in place of their implied upvote
			}
			if err := e.emit(w, line{Type: "cvote", ID: x.cid, User: x.user, Vote: &v, Shadow: shadow}); err != nil {
				return err
			}
		}
	}
	if len(inv.names(famCSeq)) > 0 {
		seq, err := redis.String(e.do("GET", e.l.key(famCSeq, "")))
		if err != nil {
			return fmt.Errorf("GET %s: %w", e.l.key(famCSeq, ""), err)
		}
		e.emit(w, line{Type: "cseq", Seq: seq})
	}
	if err := e.exportPage(w, inv, famCommented); err != nil {
		return err
	}
	return e.exportLast(w, inv, famLastComment)
}

// exportComment writes the line of comment id, as whole holds it,
// where its head in cs was kept (exportComments).
func (e *env) exportComment(w *bufio.Writer, id string, cs, whole map[string]crecord) error {
	if _, ok := cs[id]; !ok {
		return nil
	}
	c, ok := whole[id]
	if !ok {
		return nil // deleted meanwhile
	}
	l := line{Type: "comment", ID: id, Article: c.Article, Parent: c.Parent, Poster: c.Poster,
		Posted: iptr(c.Posted), Closes: c.Closes, Up: iptr(c.Up), Down: iptr(c.Down), Deleted: c.Deleted}
	if c.Orders != "" {
		l.Orders = strings.Split(c.Orders, ",")
	}
	if c.Weight != "" {
		w, _ := strconv.ParseFloat(c.Weight, 64)
		l.Weight = fptr(w)
	}
	if !c.Deleted {
		if c.Body == "" {
			return fmt.Errorf("comment %s has no body (run check)", id)
		}
		l.Body = sptr(c.Body)
	}
	return e.emit(w, l)
}

// importComment is a comment of an import, as its line gives it.
type importComment struct {
	id string
	c  crecord // its body included, "" once deleted
}

// importCVoted is an article's comment voter record.
type importCVoted struct {
	aid, marker string
	expMs       int64
	votes       []line
}

// parseComment validates a comment line against the comments before it;
// bad makes the error of the line.
func (imp *parsedImport) parseComment(l line, bad func(string, ...interface{}) error) error {
	if err := ilayout.CheckCID("comment id", l.ID); err != nil {
		return bad("%v", err)
	}
	if imp.lastCID != "" && !lessID(imp.lastCID, l.ID) {
		return bad("comment id %q is not above the one before (%s)", l.ID, imp.lastCID)
	}
	imp.lastCID = l.ID
	if imp.byID[l.Article] == nil {
		return bad("comment %s of article %q before (or without) its article line", l.ID, l.Article)
	}
	if l.Posted == nil || l.Up == nil || l.Down == nil || l.Closes == 0 {
		return bad("comment %s lacks one of posted, closes, up, down", l.ID)
	}
	if err := checkName("poster", l.Poster); err != nil {
		return bad("comment %s: %v", l.ID, err)
	}
	c := crecord{Article: l.Article, Parent: l.Parent, Posted: *l.Posted, Closes: l.Closes, Up: *l.Up, Down: *l.Down,
		Poster: l.Poster, Deleted: l.Deleted}
	if l.Parent != "" {
		p := imp.byCID[l.Parent]
		if p == nil || p.c.Article != l.Article {
			return bad("comment %s: parent %q is no comment of article %s before it", l.ID, l.Parent, l.Article)
		}
		c.Depth = p.c.Depth + 1
		if c.Depth >= voting.MaxCommentDepth {
			return bad("comment %s is deeper than %d levels", l.ID, voting.MaxCommentDepth)
		}
	}
	for _, o := range l.Orders {
		if !contains(commentOrders, o) {
			return bad("comment %s: unknown order %q", l.ID, o)
		}
	}
	c.Orders = strings.Join(l.Orders, ",")
	if contains(l.Orders, "score") != (l.Weight != nil) {
		return bad("comment %s: a weight goes with the score order, and only with it", l.ID)
	}
	if l.Weight != nil {
		c.Weight = formatWeight(*l.Weight)
	}
	if l.Deleted != (l.Body == nil) {
		return bad("comment %s: a body goes with a comment not deleted, and only with it", l.ID)
	}
	if l.Body != nil && (strings.TrimSpace(*l.Body) == "" || len(*l.Body) > voting.MaxCommentLen) {
		return bad("comment %s: body blank or longer than %d bytes", l.ID, voting.MaxCommentLen)
	}
	if l.Body != nil {
		c.Body = *l.Body
	}
	// The record's limits are the codec's; its links and live count, not
	// known yet, take as many bytes now.
	if err := c.Check(); err != nil {
		return bad("comment %s: %v", l.ID, err)
	}
	ic := &importComment{id: l.ID, c: c}
	imp.byCID[l.ID] = ic
	imp.comments = append(imp.comments, ic)
	return nil
}

// parseCVote validates a cvoted or cvote line.
func (imp *parsedImport) parseCVote(l line, bad func(string, ...interface{}) error) error {
	if l.Type == "cvoted" {
		if imp.byID[l.ID] == nil || imp.cvoted[l.ID] != nil {
			return bad("comment voter record of article %q: no article line before, or repeated", l.ID)
		}
		if !canonicalID(l.Marker) || l.ExpiresMs <= 0 {
			return bad("comment voter record of article %s: marker %q is not an id, or expires_ms is missing", l.ID, l.Marker)
		}
		if err := ilayout.CheckCID("marker", l.Marker); err != nil {
			return bad("comment voter record of article %s: %v", l.ID, err)
		}
		if err := ilayout.CheckExact("expires_ms", l.ExpiresMs); err != nil {
			return bad("comment voter record of article %s: %v", l.ID, err)
		}
		imp.cvoted[l.ID] = &importCVoted{aid: l.ID, marker: l.Marker, expMs: l.ExpiresMs}
		imp.cvotedOrder = append(imp.cvotedOrder, l.ID)
		return nil
	}
	c := imp.byCID[l.ID]
	if c == nil {
		return bad("vote on comment %q before (or without) its comment line", l.ID)
	}
	r := imp.cvoted[c.c.Article]
	if r == nil {
		return bad("vote on comment %s before (or without) the comment voter record of article %s", l.ID, c.c.Article)
	}
	if err := checkName("user", l.User); err != nil {
		return bad("%v", err)
	}
	if l.Vote == nil || *l.Vote < -1 || *l.Vote > 1 || (*l.Vote == 0 && l.User != c.c.Poster) {
		return bad("vote on comment %s: 1 or -1, or 0 for its poster's own vote cancelled", l.ID)
	}
	if l.Shadow && *l.Vote == 0 {
		return bad("shadow vote on comment %s: 1 or -1", l.ID)
	}
	r.votes = append(r.votes, l)
	return nil
}

// checkName checks a user's, poster's or group's name with the rules
// the store applies to every name (restore.CheckName: 1 to
// voting.MaxNameLen bytes of printable UTF-8, not blank), so that an
// import refuses, before it writes anything, a name the store's calls
// would refuse later (Store.Suspend) or a voter record would lose (a
// voter "" is the record's meta field). An empty name is said so quoted,
// as the lines' other values are.
func checkName(what, s string) error {
	if s == "" {
		return fmt.Errorf("%s %q is empty", what, s)
	}
	return restore.CheckName(what, s)
}

// restoreComment is comment id of record c as restore.PutComments writes
// it with the store's own script.
func restoreComment(id string, c crecord, removing bool) restore.Comment {
	return restore.Comment{ID: id, Up: c.Up, Down: c.Down, Replies: c.Replies, First: c.First, Last: c.Last,
		Next: c.Next, Prev: c.Prev, Deleted: c.Deleted, Article: c.Article, Parent: c.Parent, Posted: c.Posted,
		Closes: c.Closes, Depth: c.Depth, Orders: c.Orders, Weight: c.Weight, Poster: c.Poster, Body: c.Body, Removing: removing}
}

// writeComments writes the comments of an import: their records and
// places through the store's own script (restore.PutComments), cstep
// comments a call, with every field the store's scripts would have
// written (links, live counts) and the values of the store's formulas;
// then the articles' counts and threads and the comment voter records
// (restore.PutEntries). Each write is idempotent (a resumed import
// writes the same again).
func (e *env) writeComments(imp *parsedImport, nowMs int64) error {
	cs := make(map[string]crecord, len(imp.comments))
	for _, c := range imp.comments {
		cs[c.id] = c.c
	}
	t := deriveThreads(cs)
	st, err := e.store()
	if err != nil {
		return err
	}
	p := e.progress("importing comments", len(imp.comments))
	var chunk []restore.Comment
	for i, ic := range imp.comments {
		c := ic.c
		t.links(ic.id, &c)
		// A deleted comment without replies is one whose removal a
		// DeleteComment left (the source's {prefix}:cremoving): the next
		// DeleteComment goes on with it here too.
		chunk = append(chunk, restoreComment(ic.id, c, c.Deleted && len(t.kids[ic.id]) == 0))
		if len(chunk) == cstep || i == len(imp.comments)-1 {
			if err := restore.PutComments(e.ctx, st, chunk); err != nil {
				return err
			}
			p.add(len(chunk))
			chunk = chunk[:0]
		}
	}
	p.done()
	var es []restore.Entry
	for _, aid := range sortedKeys(t.arts) {
		es = append(es, restore.Entry{Kind: restore.Count, ID: aid, N: float64(t.arts[aid])})
	}
	for _, a := range imp.articles {
		if first, last := ends(t.kids["a"+a.id]); first != "" {
			es = append(es, restore.Entry{Kind: restore.Thread, ID: a.id, Text: first, Item: last})
		}
	}
	// Each vote of a comment voter record carries the record's expiry,
	// as its "" field does: an import interrupted between the two (they
	// may fall in two calls of restore.PutEntries) and resumed once the
	// comments' voting closed leaves no record that never expires.
	for _, aid := range imp.cvotedOrder {
		r := imp.cvoted[aid]
		if r.expMs <= nowMs {
			continue // its comments' voting closed meanwhile
		}
		for _, v := range r.votes {
			es = append(es, restore.Entry{Kind: restore.CVoter, ID: aid, Item: v.ID, User: v.User, Vote: *v.Vote, Shadow: v.Shadow,
				ExpireAtMs: r.expMs})
		}
		es = append(es, restore.Entry{Kind: restore.CVoted, ID: aid, Text: r.marker, ExpireAtMs: r.expMs})
	}
	// The counter at least the highest id: Comment never reuses one.
	seq := imp.cseq
	if n := len(imp.comments); n > 0 && (seq == "" || lessID(seq, imp.comments[n-1].id)) {
		seq = imp.comments[n-1].id
	}
	if seq != "" {
		es = append(es, restore.Entry{Kind: restore.CSeq, ID: seq})
	}
	return e.putEntries(es)
}

// comments checks the comments: each of an article with a record, under
// a parent of its article, at its depth; the linked lists of replies
// and the live counts as the comments imply them (deriveThreads); the
// bodies; the counts of the comments whose votes stand against the
// comment voter record; the kids sorted sets against the records (both
// bands of Best and Top, and the optional orderings, with the values of
// voting.Order.Value); no key of layout 4 left; and the id counter.
// What it can, -repair sets right: links, counts, sorted sets, keys left
// behind and the counter; a record's fields through the store's own
// script (restore.PutComments), which writes its head and keeps its body.
func (c *checker) comments() error {
	for _, n := range c.inv.names(famComment) {
		if !canonicalID(n) {
			c.problem(false, "key %s: not a comment id", c.e.l.key(famComment, n))
		}
	}
	ids := c.inv.ids(famComment)
	cs, err := c.e.readComments(ids, func(id string, err error) { c.problem(false, "comment %s: %v", id, err) })
	if err != nil {
		return err
	}
	c.crecs = cs
	good := map[string]crecord{}
	for _, id := range ids {
		x, ok := cs[id]
		if !ok {
			continue
		}
		depth := 0
		if _, ok := c.recs[x.Article]; !ok {
			c.problem(false, "comment %s: of article %s, which has no record (a Delete under way finishes it)", id, x.Article)
			continue
		}
		if x.Parent != "" {
			p, ok := good[x.Parent]
			if !ok || p.Article != x.Article || !lessID(x.Parent, id) {
				c.problem(false, "comment %s: its parent %s is no earlier comment of article %s", id, x.Parent, x.Article)
				continue
			}
			depth = p.Depth + 1
		}
		if x.Depth != depth {
			c.problem(false, "comment %s: at depth %d, its parents make %d", id, x.Depth, depth)
		}
		good[id] = x
	}
	if err := c.commentVotes(good); err != nil {
		return err
	}
	t := deriveThreads(good)
	gids := sortedKeys(good)
	sortIDs(gids)
	for _, id := range gids {
		x := good[id]
		want := x
		t.links(id, &want)
		for _, f := range []struct {
			name, have, want string
		}{{"first", x.First, want.First}, {"last", x.Last, want.Last},
			{"next", x.Next, want.Next}, {"prev", x.Prev, want.Prev}} {
			if f.have != f.want {
				c.problem(true, "comment %s: link %s is %q, its place makes %q", id, f.name, f.have, f.want)
				c.rewriteComment(id, want, true)
			}
		}
		if x.Replies != want.Replies {
			c.problem(true, "comment %s: %d live replies, its descendants make %d", id, x.Replies, want.Replies)
			c.rewriteComment(id, want, true)
		}
		if _, ok := c.rewrite[id]; ok {
			c.rewriteComment(id, want, true) // its counts, with its links and replies
		}
		switch {
		case x.Deleted && x.Body != "":
			// The whole record, as the repairs above leave it.
			c.problem(true, "comment %s: deleted, with a body", id)
			want.Body = ""
			c.rewriteComment(id, want, false)
		case !x.Deleted && x.Body == "":
			c.problem(false, "comment %s: no body", id)
		}
	}
	// Removals a DeleteComment left to a later step: deleted comments
	// without replies, which the next DeleteComment removes, with the
	// deleted ancestors left without replies above them. No problem.
	if c.inv.has(famRemoving, "") {
		key := c.e.l.key(famRemoving, "")
		if n, err := redis.Int(c.e.do("SCARD", key)); err != nil {
			c.problem(false, "%s: %v (a set of comment ids)", key, err)
		} else {
			fmt.Fprintf(c.e.stdout, "comments: %d removals of deleted comments left by a DeleteComment (the next one finishes them)\n", n)
		}
	}
	// Keys of layout 4 left behind.
	for _, id := range c.inv.names(famCBody) {
		key := c.e.l.key(famCBody, id)
		c.problem(true, "%s: a body of layout 4, left behind (layout %d keeps it in the record)", key, voting.LayoutVersion)
		c.remove = append(c.remove, restore.Removal{Kind: restore.CBody, Name: id, Whole: true})
	}
	// Each article's top level and live count.
	counts, err := c.e.hashAll(c.e.l.key(famComments, ""))
	if err != nil {
		return err
	}
	aids := sortedKeys(c.recs)
	sortIDs(aids)
	for _, aid := range aids {
		key := c.e.l.key(famThread, aid)
		first, last := ends(t.kids["a"+aid])
		h := map[string]string{}
		if c.inv.has(famThread, aid) {
			if h, err = c.e.hashAll(key); err != nil {
				return err
			}
		}
		if h["f"] != first || h["l"] != last {
			c.problem(true, "%s: newest %q and oldest %q, its comments make %q and %q", key, h["f"], h["l"], first, last)
			if first == "" {
				c.remove = append(c.remove, restore.Removal{Kind: restore.Thread, Name: aid, Whole: true})
			} else {
				c.put = append(c.put, restore.Entry{Kind: restore.Thread, ID: aid, Text: first, Item: last})
			}
		}
		if have, want := counts[aid], t.arts[aid]; have != strconv.FormatInt(want, 10) && !(have == "" && want == 0) {
			c.problem(true, "article %s: %q live comments, its comments make %d", aid, have, want)
			if want == 0 {
				c.remove = append(c.remove, restore.Removal{Kind: restore.Count, Member: aid})
			} else {
				c.put = append(c.put, restore.Entry{Kind: restore.Count, ID: aid, N: float64(want)})
			}
		}
	}
	for _, aid := range sortedKeys(counts) {
		if _, ok := c.recs[aid]; !ok {
			c.problem(true, "%s: a count of article %s, which has no record", c.e.l.key(famComments, ""), aid)
			c.remove = append(c.remove, restore.Removal{Kind: restore.Count, Member: aid})
		}
	}
	if err := c.kids(good); err != nil {
		return err
	}
	// The counter at least the highest id.
	if len(ids) > 0 {
		seq, err := redis.String(c.e.do("GET", c.e.l.key(famCSeq, "")))
		if err != nil && err != redis.ErrNil {
			return err
		}
		if top := ids[len(ids)-1]; !canonicalID(seq) || lessID(seq, top) {
			c.problem(true, "%s is %q, below comment %s: a Comment would find its id taken", c.e.l.key(famCSeq, ""), seq, top)
			c.put = append(c.put, restore.Entry{Kind: restore.CSeq, ID: top})
		}
	}
	return nil
}

// commentVotes checks the counts of the comments whose votes stand (those
// at or above their article's comment voter record's marker) against
// the record's fields, and sets good's counts to theirs.
func (c *checker) commentVotes(good map[string]crecord) error {
	for _, aid := range c.inv.ids(famCVoted) {
		key := c.e.l.key(famCVoted, aid)
		h, marker, ok, err := c.voterRecord(key)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		c.markers[aid] = marker
		votes := map[string][2]int64{}
		own := map[string]bool{}
		for f, v := range h {
			cid, user, ok := strings.Cut(f, ":")
			x, known := good[cid]
			if f == "" || !known {
				continue // a comment removed
			}
			n := votes[cid]
			switch {
			case !ok:
				c.problem(false, "%s: field %q is no vote", key, f)
			case countedVote(v) == 1:
				n[0]++
			case countedVote(v) == -1:
				n[1]++
			case v == "0": // a vote taken back (ilayout.VoteValue), a poster's own among them
			case shadowVote(v) != 0: // a shadowed user's vote: counted nowhere
			default:
				c.problem(false, "%s: field %q holds %q, not a vote", key, f, v)
			}
			if ok && countedVote(v) != 0 {
				c.stand(user, "c"+cid, v)
			}
			if user == x.Poster {
				own[cid] = true // any field of the poster's, a shadow vote too, replaces the implied upvote
			} else if countedVote(v) != 0 {
				c.cvotes = append(c.cvotes, [3]string{x.Poster, user, strconv.Itoa(countedVote(v))})
			}
			votes[cid] = n
		}
		for _, cid := range sortedKeys(good) {
			x := good[cid]
			if x.Article != aid || lessID(cid, marker) {
				continue
			}
			c.open["c"+cid] = !x.Deleted
			n := votes[cid]
			if !own[cid] {
				n[0]++ // the poster's own upvote, implied: it stands, and is logged once cast again
				c.stand(x.Poster, "c"+cid, "1")
				c.implied[x.Poster+" c"+cid] = true
			}
			if n[0] != x.Up || n[1] != x.Down {
				c.problem(true, "comment %s: counts %d up %d down, but its voters are %d up %d down", cid, x.Up, x.Down, n[0], n[1])
				x.Up, x.Down = n[0], n[1]
				good[cid] = x
				c.rewriteComment(cid, x, true)
			}
		}
	}
	return nil
}

// rewriteComment has -repair write comment id's record of x's fields by the
// store's own script, and its places: its head alone, keeping its body
// (keepBody), or whole.
func (c *checker) rewriteComment(id string, x crecord, keepBody bool) {
	if c.rewrite == nil {
		c.rewrite = map[string]restore.Comment{}
	}
	r := restoreComment(id, x, false)
	r.KeepBody = keepBody
	c.rewrite[id] = r
}

// placeAgain has -repair write comment id (of good, the records as the
// counts left them) and its places again, by the store's own script.
func (c *checker) placeAgain(id string, good map[string]crecord) {
	if c.replace == nil {
		c.replace = map[string]crecord{}
	}
	c.replace[id] = good[id]
}

// kids checks each parent's sorted sets of replies against the comments
// (their counts as commentVotes left them): Best and Top, both bands, at
// kids:<parent>, and the optional orderings at kids:<ordering>:<parent>.
// A key of another name (kids:best: and kids:top: of layout 4) is left
// behind.
func (c *checker) kids(good map[string]crecord) error {
	want := map[string]map[string]place{} // key -> member -> its place
	for id, x := range good {
		for _, p := range places(c.e.l, id, x) {
			if want[p.key] == nil {
				want[p.key] = map[string]place{}
			}
			want[p.key][p.member] = p
		}
	}
	keys := map[string]bool{}
	for _, name := range c.inv.names(famKids) {
		key := c.e.l.key(famKids, name)
		if _, _, ok := kidsName(name); !ok {
			c.problem(true, "%s: no key of layout %d (kids:best: and kids:top: are layout 4's), left behind", key, voting.LayoutVersion)
			c.remove = append(c.remove, restore.Removal{Kind: restore.Kids, Name: name, Whole: true})
			continue
		}
		keys[key] = true
	}
	for k := range want {
		keys[k] = true
	}
	for _, key := range sortedKeys(keys) {
		have := map[string]float64{}
		name := strings.TrimPrefix(key, c.e.l.key(famKids, ""))
		if c.inv.has(famKids, name) {
			var err error
			if have, err = c.e.zsetAll(key); err != nil {
				return err
			}
		}
		w := want[key]
		if len(w) == 0 {
			c.problem(true, "%s: the replies of no comment", key)
			c.remove = append(c.remove, restore.Removal{Kind: restore.Kids, Name: name, Whole: true})
			continue
		}
		for _, m := range sortedKeys(w) {
			p := w[m]
			if v, ok := have[m]; !ok {
				c.problem(true, "%s: comment %s missing from %s", key, m[1:], p.ordering)
				c.placeAgain(m[1:], good)
			} else if !sameValue(p.ordering, v, p.value) {
				c.problem(true, "%s: comment %s at %s in %s, its record makes %s", key, m[1:], num(v), p.ordering, num(p.value))
				c.placeAgain(m[1:], good)
			}
		}
		for _, m := range sortedKeys(have) {
			if _, ok := w[m]; !ok {
				c.problem(true, "%s: %s is no reply of its parent", key, m)
				c.remove = append(c.remove, restore.Removal{Kind: restore.Kids, Name: name, Member: m})
			}
		}
	}
	return nil
}

// commentVotesStand reports whether the votes of every comment ever
// posted stand, so that karma can be worked out from them: no comment
// removed (the counter names as many as there are), none closed with
// its article's comment voter record.
func (c *checker) commentVotesStand() bool {
	seq, err := redis.Int(c.e.do("GET", c.e.l.key(famCSeq, "")))
	if err != nil && err != redis.ErrNil || seq != len(c.crecs) {
		return false
	}
	for id, x := range c.crecs {
		if m, ok := c.markers[x.Article]; !ok || lessID(id, m) {
			return false
		}
	}
	return true
}
