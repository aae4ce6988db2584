package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
	ilayout "github.com/votekit/voting/internal/layout"
	"github.com/votekit/voting/internal/restore"
)

// The export format, one JSON object a line, each with a "type", in this
// order (README, "votectl"):
//
//	{"type":"options","format":1,"identity":"6 karma userpages","rules":"karma=1,-1","orders":[...],"karma_kept":true,"user_pages":true,"unique_links":true}
//	    the store's recorded identity (voting.Identity: its layout and
//	    shared options), which import records in the target, and what
//	    the store's data shows of its shared options (informative)
//	{"type":"seq","seq":"42"}                      the last issued id
//	{"type":"article","id":"1","title":..,"link":..,"poster":..,"posted":1700000000,
//	 "up":3,"down":1,"weight":432,"orders":["top"],"closes":1700604800,"expires_ms":1700604800000}
//	    every field of the record; closes and expires_ms (when the voter
//	    record expires, Unix ms) only while voting is open
//	{"type":"group","id":"1","groups":["go","redis"]}   after its article
//	{"type":"vote","id":"1","user":"bob","vote":1}     after its article, open articles only
//	    the vote as it counts: a logged vote's value ("1@<offset>") is
//	    written as its vote, and the import links it again (uvote); a
//	    vote taken back, whose field the record keeps as "0" while it
//	    lives, is no vote and no line
//	{"type":"vote","id":"1","user":"sam","vote":1,"shadow":true}
//	    a shadowed user's vote (voting.Shadow), "1s" or "-1s" in the voter
//	    record: the user's reads show it, no count, karma, page or log has it
//	{"type":"karma","user":"alice","karma":3}
//	{"type":"submitted","user":"alice","id":"1","at":1700000000}
//	{"type":"upvoted","user":"bob","id":"1","at":1700000100}
//	{"type":"link","link":"https://...","id":"1","expires_ms":0}  unique links, repost claims
//	{"type":"lastpost","user":"alice","ms":1700000000000,"expires_ms":...}
//	{"type":"votelog","user":"bob","entries":[["1700000100000:1",1700000100000]],"expires_ms":...}
//	    the vote rules' log of a user's recent votes (votelimit)
//	{"type":"uvote","id":"1","user":"bob","vote":1,"at":1700000100,"item":"article"}
//	    an entry of a user's vote log (WithVoteLog, {prefix}:ulog:USER, a
//	    journal of a line a vote, "+a1 1700000100\n"): a standing vote on
//	    the article, or the comment ("item":"comment"), id, and its time,
//	    Unix s, as the log keeps it; oldest first, the log's order, the
//	    lines taken back (changed, cancelled or reversed votes) left out,
//	    entries of closed and deleted items kept. import appends each
//	    line to the user's log and links the voter record's vote to it
//	    ("1@<offset>"), which the vote lines carry as the plain vote
//	{"type":"comment","id":"7","article":"1","parent":"3","poster":"bob","posted":1700000100,
//	 "closes":1700604900,"up":2,"down":1,"orders":["hot","score"],"weight":432,"body":"..."}
//	    every comment of an exported article, in id order (a parent before
//	    its replies): parent absent for a reply to the article; orders,
//	    weight (with score only) as the comment was posted; "deleted":true
//	    and no body for a placeholder (its poster is kept, for its votes)
//	{"type":"cvoted","id":"1","marker":"5","expires_ms":1700604900000}
//	    an article's comment voter record while it lives: the comment that
//	    made it (votes on older comments are closed) and when it expires
//	{"type":"cvote","id":"7","user":"carol","vote":-1}  after its article's cvoted
//	    a standing vote on a comment: 1, -1, or 0 for its poster's own
//	    vote cancelled (another voter's "0", a vote taken back, is no
//	    line); the poster's own upvote is implied, as the store keeps it
//	    (but one cast again, which the record keeps, "1", or "1@<offset>"
//	    logged, as a vote line does); "shadow":true for a shadowed user's,
//	    as on a vote line
//	{"type":"cseq","seq":"83"}                      the last issued comment id
//	{"type":"commented","user":"bob","id":"7","at":1700000100}
//	{"type":"lastcomment","user":"bob","ms":1700000100000,"expires_ms":...}
//	{"type":"suspension","user":"sam","mode":"shadow","until_ms":1700003600000}
//	    a suspension on at the export (Store.Suspend): mode refuse or shadow,
//	    its end in Unix ms; one that ended is left out. import writes it
//	    through Store.Suspend once the identity is recorded, which records
//	    the latest end in the store's record (and, in a store with vote
//	    events, adds a "suspend" event of it)
//
// The vote events (WithVoteEvents, the stream {prefix}:events) are a
// feed of changes, not state: they are not exported, and an import
// starts the target's stream anew.
//
// Ids, users and groups are sorted (ids as numbers), so two exports of
// the same data are the same bytes. Orderings, TopSince buckets and group
// caches are not exported: they derive from the records, and import
// rebuilds them; so are a comment's depth, its place among its siblings
// (time order is id order), its live replies, the kids orderings and the
// articles' live comment counts (comments.go), and the set of removals a
// DeleteComment left (cremoving: each deleted comment without replies). The lines are the same
// whatever the layout of the comments' keys: an export of a store of
// layout 4 imports into one of this layout (voting.LayoutVersion), which
// the import records.
type line struct {
	Type string `json:"type"`
	// options
	Format      int      `json:"format,omitempty"`
	Identity    string   `json:"identity,omitempty"`
	Rules       string   `json:"rules,omitempty"` // the numbers of the rules (voting.Rules.String), from layout 6
	UserPages   *bool    `json:"user_pages,omitempty"`
	UniqueLinks *bool    `json:"unique_links,omitempty"`
	HasKarma    *bool    `json:"karma_kept,omitempty"`
	Seq         string   `json:"seq,omitempty"`
	ID          string   `json:"id,omitempty"`
	Title       *string  `json:"title,omitempty"`
	Link        *string  `json:"link,omitempty"`
	Poster      string   `json:"poster,omitempty"`
	Posted      *int64   `json:"posted,omitempty"`
	Up          *int64   `json:"up,omitempty"`
	Down        *int64   `json:"down,omitempty"`
	Weight      *float64 `json:"weight,omitempty"`
	Orders      []string `json:"orders,omitempty"`
	Closes      int64    `json:"closes,omitempty"`
	ExpiresMs   int64    `json:"expires_ms,omitempty"`
	Groups      []string `json:"groups,omitempty"`
	User        string   `json:"user,omitempty"`
	Vote        *int     `json:"vote,omitempty"`
	Shadow      bool     `json:"shadow,omitempty"` // a shadowed user's vote (vote, cvote)
	Karma       *int64   `json:"karma,omitempty"`
	At          *float64 `json:"at,omitempty"`
	Ms          int64    `json:"ms,omitempty"`
	Entries     [][2]any `json:"entries,omitempty"`
	// comments
	Article string  `json:"article,omitempty"`
	Parent  string  `json:"parent,omitempty"`
	Deleted bool    `json:"deleted,omitempty"`
	Body    *string `json:"body,omitempty"`
	Marker  string  `json:"marker,omitempty"`
	// moderation
	Item    string `json:"item,omitempty"` // a vote log's entry: "article" or "comment"
	Mode    string `json:"mode,omitempty"` // a suspension's: "refuse" or "shadow"
	UntilMs int64  `json:"until_ms,omitempty"`
}

func bptr(b bool) *bool       { return &b }
func iptr(i int64) *int64     { return &i }
func fptr(f float64) *float64 { return &f }
func sptr(s string) *string   { return &s }
func (e *env) emit(w *bufio.Writer, l line) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	w.Write(b)
	return w.WriteByte('\n')
}

// expireAt returns when key expires, in Unix ms: 0 for no expiry, and
// goneMs, long past, for a key gone since its value was read (it
// expired meanwhile), so that its line says it expired, never that it
// does not expire.
func (e *env) expireAt(key string) (int64, error) {
	ms, err := redis.Int64(e.do("PEXPIRETIME", key))
	if err != nil {
		// Redis before 7: TIME + PTTL.
		t, err2 := redis.Int64s(e.do("TIME"))
		ttl, err3 := redis.Int64(e.do("PTTL", key))
		if err2 != nil || err3 != nil {
			return 0, err
		}
		if ttl < 0 {
			return expiry(ttl), nil
		}
		return t[0]*1000 + t[1]/1000 + ttl, nil
	}
	if ms < 0 {
		return expiry(ms), nil
	}
	return ms, nil
}

// goneMs is the expiry, in Unix ms, expireAt gives a key gone.
const goneMs = 1

// expiry reads PEXPIRETIME's or PTTL's answer for a key without a time:
// -1, no expiry (0); -2, no key (goneMs).
func expiry(n int64) int64 {
	if n == -2 {
		return goneMs
	}
	return 0
}

func cmdExport(e *env, args []string) error {
	inv, err := scanFlags(e, "export", args, nil)
	if err != nil {
		return err
	}
	if len(inv.names(famOther)) > 0 && inv.has(famOther, importMarker) {
		return usagef("the store holds an unfinished import (%s): finish it with import -resume first", e.l.marker())
	}
	if err := e.commentsReadable(inv); err != nil {
		return err
	}
	if err := e.logsReadable(inv); err != nil {
		return err
	}
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	ids := inv.ids(famArticle)
	opts := e.shownOptions(inv)
	_, id, recorded, err := e.recorded()
	if err != nil {
		return err
	}
	identity, rules := "", ""
	if recorded {
		identity = id.String()
		if st, _, _, err := e.recorded(); err == nil {
			rules = e.rulesOf(st)
		}
	}
	if err := e.emit(w, line{Type: "options", Format: 1, Identity: identity, Rules: rules, Orders: opts.orders, HasKarma: bptr(opts.karma),
		UserPages: bptr(opts.userPages), UniqueLinks: bptr(opts.uniqueLinks)}); err != nil {
		return err
	}
	if len(inv.names(famSeq)) > 0 {
		seq, err := redis.String(e.do("GET", e.l.seq()))
		if err != nil {
			return fmt.Errorf("GET %s: %w", e.l.seq(), err)
		}
		e.emit(w, line{Type: "seq", Seq: seq})
	}
	exported := map[string]bool{}
	p := e.progress("exporting articles", len(ids))
	for at := 0; at < len(ids); at += step {
		chunk := ids[at:min(at+step, len(ids))]
		keys := make([]string, len(chunk))
		for i, id := range chunk {
			keys[i] = e.l.key(famArticle, id)
		}
		recs := make([][]byte, len(chunk))
		if err := e.mget(keys, func(i int, v []byte) { recs[i] = v }); err != nil {
			return err
		}
		for i, id := range chunk {
			if recs[i] == nil {
				continue // deleted meanwhile
			}
			r, err := ilayout.ParseRecord(string(recs[i]))
			if err != nil {
				return fmt.Errorf("article %s: %v (run check)", id, err)
			}
			if err := e.exportArticle(w, inv, id, r); err != nil {
				return err
			}
			exported[id] = true
		}
		p.add(len(chunk))
	}
	p.done()
	karma, err := e.zsetAll(e.l.karma())
	if err != nil {
		return err
	}
	for _, u := range sortedKeys(karma) {
		e.emit(w, line{Type: "karma", User: u, Karma: iptr(-int64(karma[u]))})
	}
	for _, fam := range []string{famSubmitted, famUpvoted} {
		if err := e.exportPage(w, inv, fam); err != nil {
			return err
		}
	}
	links := inv.names(famLink)
	var failed error // the first error of a link's line
	err = e.mget(prefixed(e.l, famLink, links), func(i int, v []byte) {
		if v == nil || failed != nil {
			return
		}
		exp, err := e.expireAt(e.l.key(famLink, links[i]))
		if err == nil {
			err = e.emit(w, line{Type: "link", Link: sptr(links[i]), ID: string(v), ExpiresMs: exp})
		}
		failed = err
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return err
	}
	if err := e.exportLast(w, inv, famLastPost); err != nil {
		return err
	}
	for _, u := range inv.names(famVoteLog) {
		key := e.l.key(famVoteLog, u)
		ms, z, err := e.zsetByScore(key, false)
		if err != nil {
			return err
		}
		entries := make([][2]any, len(ms))
		for i, m := range ms {
			entries[i] = [2]any{m, int64(z[m])}
		}
		exp, err := e.expireAt(key)
		if err != nil {
			return err
		}
		e.emit(w, line{Type: "votelog", User: u, Entries: entries, ExpiresMs: exp})
	}
	if err := e.exportVoteLogs(w, inv); err != nil {
		return err
	}
	if err := e.exportComments(w, inv, exported); err != nil {
		return err
	}
	if err := e.exportSuspensions(w, inv); err != nil {
		return err
	}
	return w.Flush()
}

// zsetByScore reads the sorted set key (zsetAll): its members in score
// order, lowest first, or highest first where desc, ties by member; and
// their scores.
func (e *env) zsetByScore(key string, desc bool) ([]string, map[string]float64, error) {
	z, err := e.zsetAll(key)
	if err != nil {
		return nil, nil, err
	}
	ms := sortedKeys(z)
	sort.SliceStable(ms, func(i, j int) bool {
		if desc {
			return z[ms[i]] > z[ms[j]]
		}
		return z[ms[i]] < z[ms[j]]
	})
	return ms, z, nil
}

// exportVoteLogs writes the users' vote logs (WithVoteLog), a line a
// standing vote (the lines taken back left out), by user, oldest first,
// as the log keeps them, read in bounded chunks (journal).
func (e *env) exportVoteLogs(w *bufio.Writer, inv *inventory) error {
	for _, u := range inv.names(famUVotes) {
		key := e.l.key(famUVotes, u)
		err := e.journal(key, func(l logLine) error {
			if !l.ok {
				return fmt.Errorf("%s: the line at offset %d, %q, is no logged vote (run check)", key, l.off, l.text)
			}
			if l.e.Vote == 0 {
				return nil // taken back
			}
			v := l.e.Vote
			return e.emit(w, line{Type: "uvote", User: u, Item: logItem(l.e), ID: l.e.ID, Vote: &v, At: fptr(float64(l.e.At))})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// exportSuspensions writes the suspensions on at the time of the export;
// those that ended are left out, as a read finds them (Store.Suspended,
// to the second: storeNowMs).
func (e *env) exportSuspensions(w *bufio.Writer, inv *inventory) error {
	if !inv.has(famSuspended, "") {
		return nil
	}
	key := e.l.key(famSuspended, "")
	h, err := e.hashAll(key)
	if err != nil {
		return err
	}
	now := storeNowMs(e.now())
	for _, u := range sortedKeys(h) {
		mode, until, ok := parseSuspension(h[u])
		if !ok {
			return fmt.Errorf("%s: user %q holds %q, no suspension (run check)", key, u, h[u])
		}
		if until > now {
			e.emit(w, line{Type: "suspension", User: u, Mode: mode, UntilMs: until})
		}
	}
	return nil
}

// exportPage writes the entries of the users' pages of a family
// (submitted, upvoted, commented), a line each, by user then id.
func (e *env) exportPage(w *bufio.Writer, inv *inventory, fam string) error {
	for _, u := range inv.names(fam) {
		z, err := e.zsetAll(e.l.key(fam, u))
		if err != nil {
			return err
		}
		type entry struct {
			id string
			at float64
		}
		var list []entry
		for m, v := range z {
			if id, ok := idOf(m); ok {
				list = append(list, entry{id, v})
			}
		}
		sort.Slice(list, func(i, j int) bool { return lessID(list[i].id, list[j].id) })
		for _, x := range list {
			e.emit(w, line{Type: strings.TrimSuffix(fam, ":"), User: u, ID: x.id, At: fptr(x.at)})
		}
	}
	return nil
}

// exportLast writes the users' last-post or last-comment times of a
// family (lastpost, lastcomment) with their expiry.
func (e *env) exportLast(w *bufio.Writer, inv *inventory, fam string) error {
	users := inv.names(fam)
	var failed error // the first error of a user's line
	err := e.mget(prefixed(e.l, fam, users), func(i int, v []byte) {
		if v == nil || failed != nil {
			return // gone meanwhile
		}
		key := e.l.key(fam, users[i])
		ms, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			failed = fmt.Errorf("%s: %q is no time in ms (run check)", key, v)
			return
		}
		exp, err := e.expireAt(key)
		if err == nil {
			err = e.emit(w, line{Type: strings.TrimSuffix(fam, ":"), User: users[i], Ms: ms, ExpiresMs: exp})
		}
		failed = err
	})
	if err == nil {
		err = failed
	}
	return err
}

func prefixed(l layout, fam string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = l.key(fam, n)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (e *env) exportArticle(w *bufio.Writer, inv *inventory, id string, r record) error {
	weight, _ := strconv.ParseFloat(r.Weight, 64)
	a := line{Type: "article", ID: id, Title: sptr(r.Title), Link: sptr(r.Link), Poster: r.Poster,
		Posted: iptr(r.Posted), Up: iptr(r.Up), Down: iptr(r.Down), Weight: fptr(weight), Orders: r.OrderList()}
	var votes map[string]string
	if inv.has(famVoted, id) {
		key := e.l.key(famVoted, id)
		var err error
		if votes, err = e.hashAll(key); err != nil {
			return err
		}
		if m, ok := votes[""]; ok {
			mt, err := ilayout.ParseVoteMeta(m)
			if err != nil {
				return fmt.Errorf("article %s: %v (run check)", id, err)
			}
			a.Closes = mt.Closes
			if a.ExpiresMs, err = e.expireAt(key); err != nil {
				return err
			}
		}
	}
	if a.Closes == 0 {
		votes = nil
	}
	if err := e.emit(w, a); err != nil {
		return err
	}
	if inv.has(famGroups, id) {
		groups, err := e.setAll(e.l.key(famGroups, id))
		if err != nil {
			return err
		}
		if len(groups) > 0 {
			e.emit(w, line{Type: "group", ID: id, Groups: groups})
		}
	}
	for _, u := range sortedKeys(votes) {
		if u == "" {
			continue
		}
		v, shadow, ok := voteValue(votes[u])
		if !ok {
			return fmt.Errorf("article %s: voter %q holds %q, not a vote (run check)", id, u, votes[u])
		}
		if v == 0 {
			continue // a vote taken back: no vote
		}
		e.emit(w, line{Type: "vote", ID: id, User: u, Vote: &v, Shadow: shadow})
	}
	return nil
}

// An importing article: its record, groups and votes.
type importArticle struct {
	id     string
	r      record
	closes int64
	expMs  int64
	groups []string
	votes  []line
}

// parsedImport is a whole export, validated.
type parsedImport struct {
	identity string // the store's recorded identity, "" for none
	rules    string // the numbers of its rules, "" for none
	seq      string
	articles []*importArticle
	rest     []line // karma, pages, links, rule state
	byID     map[string]*importArticle
	// The comments, in id order, and the comment voter records.
	cseq, lastCID string
	comments      []*importComment
	byCID         map[string]*importComment
	cvoted        map[string]*importCVoted
	cvotedOrder   []string
	// The suspensions, which Store.Suspend writes once the identity is
	// recorded.
	suspensions []line
}

// parseImport reads and validates every line; it writes nothing.
func parseImport(e *env, data []byte) (*parsedImport, error) {
	byID := map[string]*importArticle{}
	out := &parsedImport{byID: byID, byCID: map[string]*importComment{}, cvoted: map[string]*importCVoted{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	bad := func(format string, args ...interface{}) error {
		return usagef("line %d: %s; nothing was written", n, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		n++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l line
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, bad("%v", err)
		}
		name := func(what, s string) error {
			if err := checkName(what, s); err != nil {
				return bad("%v", err)
			}
			return nil
		}
		switch l.Type {
		case "options":
			if l.Format != 1 {
				return nil, bad("format %d, this votectl reads 1", l.Format)
			}
			if l.Identity != "" {
				if _, err := withRules(identityOf(l.Identity), l.Rules).StoreOptions(); err != nil {
					return nil, bad("identity %q: %v", l.Identity, err)
				}
			}
			out.identity, out.rules = l.Identity, l.Rules
		case "seq":
			if !canonicalID(l.Seq) && l.Seq != "0" {
				return nil, bad("seq %q is not an id", l.Seq)
			}
			out.seq = l.Seq
		case "article":
			if !canonicalID(l.ID) {
				return nil, bad("article id %q is not an id (1 to %d)", l.ID, int64(math.MaxInt64))
			}
			if byID[l.ID] != nil {
				return nil, bad("article id %q repeated", l.ID)
			}
			if l.Title == nil || l.Link == nil || l.Posted == nil || l.Up == nil || l.Down == nil || l.Weight == nil {
				return nil, bad("article %s lacks one of title, link, posted, up, down, weight", l.ID)
			}
			if err := name("poster", l.Poster); err != nil {
				return nil, err
			}
			for _, o := range l.Orders {
				if !contains(optionalOrders, o) {
					return nil, bad("article %s: unknown order %q", l.ID, o)
				}
			}
			a := &importArticle{id: l.ID, closes: l.Closes, expMs: l.ExpiresMs, r: record{Up: *l.Up, Down: *l.Down,
				Posted: *l.Posted, Weight: formatWeight(*l.Weight), Orders: strings.Join(l.Orders, ","),
				Poster: l.Poster, Title: *l.Title, Link: *l.Link}}
			// The record's limits are the codec's; the close and the
			// expiry, beside it, are times.
			err := a.r.Check()
			if err == nil {
				err = ilayout.CheckExact("closes", l.Closes)
			}
			if err == nil {
				err = ilayout.CheckExact("expires_ms", l.ExpiresMs)
			}
			if err != nil {
				return nil, bad("article %s: %v", l.ID, err)
			}
			if (a.closes == 0) != (a.expMs == 0) {
				return nil, bad("article %s: closes and expires_ms go together", l.ID)
			}
			byID[l.ID] = a
			out.articles = append(out.articles, a)
		case "group", "vote":
			a := byID[l.ID]
			if a == nil {
				return nil, bad("%s of article %q before (or without) its article line", l.Type, l.ID)
			}
			if l.Type == "group" {
				for _, g := range l.Groups {
					if err := name("group", g); err != nil {
						return nil, err
					}
				}
				if len(l.Groups) > voting.MaxArticleGroups {
					return nil, bad("article %s in %d groups, more than %d", l.ID, len(l.Groups), voting.MaxArticleGroups)
				}
				a.groups = l.Groups
				continue
			}
			if err := name("user", l.User); err != nil {
				return nil, err
			}
			if l.Vote == nil || (*l.Vote != 1 && *l.Vote != -1) {
				return nil, bad("vote is neither 1 nor -1")
			}
			if a.closes == 0 {
				return nil, bad("vote on article %s, whose voting is closed", l.ID)
			}
			a.votes = append(a.votes, l)
		case "karma":
			if l.Karma == nil {
				return nil, bad("karma line without karma")
			}
			if err := ilayout.CheckExact("karma", *l.Karma); err != nil {
				return nil, bad("karma of %q: %v", l.User, err)
			}
			fallthrough
		case "lastpost", "votelog", "lastcomment":
			if err := name("user", l.User); err != nil {
				return nil, err
			}
			err := ilayout.CheckExact("ms", l.Ms)
			if err == nil {
				err = ilayout.CheckExact("expires_ms", l.ExpiresMs)
			}
			if err != nil {
				return nil, bad("%s of %q: %v", l.Type, l.User, err)
			}
			for i, x := range l.Entries {
				m, ok := x[0].(string)
				ms, isNum := x[1].(float64)
				if !ok || m == "" || !isNum || ms != math.Trunc(ms) || math.Abs(ms) > maxExact {
					return nil, bad("votelog of %q: entry %d is no [member, ms] the log holds (ms a whole number up to %d)", l.User, i+1, int64(maxExact))
				}
			}
			out.rest = append(out.rest, l)
		case "uvote":
			if err := name("user", l.User); err != nil {
				return nil, err
			}
			what := fmt.Sprintf("uvote of %q on %s %s", l.User, l.Item, l.ID)
			switch l.Item {
			case "article":
				if !canonicalID(l.ID) {
					return nil, bad("%s: id %q is not an id", what, l.ID)
				}
			case "comment":
				if err := ilayout.CheckCID("id", l.ID); err != nil {
					return nil, bad("%s: %v", what, err)
				}
			default:
				return nil, bad("uvote of %q: item %q is neither article nor comment", l.User, l.Item)
			}
			if l.Vote == nil || (*l.Vote != 1 && *l.Vote != -1) {
				return nil, bad("%s: vote is neither 1 nor -1", what)
			}
			if l.At == nil || *l.At != math.Trunc(*l.At) || math.Abs(*l.At) >= maxExact/2 {
				return nil, bad("%s: at is missing, or no whole number of seconds below %d", what, int64(maxExact/2))
			}
			out.rest = append(out.rest, l)
		case "suspension":
			if err := name("user", l.User); err != nil {
				return nil, err
			}
			if suspensionOf(l.Mode) == 0 {
				return nil, bad("suspension of %q: mode %q is neither refuse nor shadow", l.User, l.Mode)
			}
			if l.UntilMs <= 0 || l.UntilMs > maxExact {
				return nil, bad("suspension of %q: until_ms %d is no time (Unix ms, 1 to %d)", l.User, l.UntilMs, int64(maxExact))
			}
			if out.identity == "" {
				return nil, bad("suspension of %q without an identity before it (the options line's): a suspension is recorded with the store's identity", l.User)
			}
			for _, x := range out.suspensions {
				if x.User == l.User {
					return nil, bad("suspension of %q repeated", l.User)
				}
			}
			out.suspensions = append(out.suspensions, l)
		case "comment":
			if err := out.parseComment(l, bad); err != nil {
				return nil, err
			}
		case "cvoted", "cvote":
			if err := out.parseCVote(l, bad); err != nil {
				return nil, err
			}
		case "cseq":
			if err := ilayout.CheckCID("cseq", l.Seq); err != nil {
				return nil, bad("%v", err)
			}
			out.cseq = l.Seq
		case "submitted", "upvoted", "commented":
			if err := name("user", l.User); err != nil {
				return nil, err
			}
			if !canonicalID(l.ID) || l.At == nil {
				return nil, bad("%s entry: id %q or at missing", l.Type, l.ID)
			}
			out.rest = append(out.rest, l)
		case "link":
			if l.Link == nil || *l.Link == "" || !canonicalID(l.ID) {
				return nil, bad("link line without a link or an id")
			}
			if err := ilayout.CheckExact("expires_ms", l.ExpiresMs); err != nil {
				return nil, bad("link %q: %v", *l.Link, err)
			}
			out.rest = append(out.rest, l)
		default:
			return nil, bad("unknown type %q", l.Type)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, usagef("line %d: %v; nothing was written", n+1, err)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func cmdImport(e *env, args []string) error {
	resume, err := boolFlag(e, "import", args, "resume", "finish an interrupted import (its marker key left)")
	if err != nil {
		return err
	}
	data, err := readAll(e)
	if err != nil {
		return err
	}
	imp, err := parseImport(e, data)
	if err != nil {
		return err
	}
	if err := e.target(resume); err != nil {
		return err
	}
	if err := e.writeImport(imp); err != nil {
		return fmt.Errorf("%w; the import is unfinished: run the same import with -resume", err)
	}
	if !e.quiet {
		fmt.Fprintf(e.stderr, "votectl: imported %d articles, %d comments and %d other entries under %q\n", len(imp.articles),
			len(imp.comments), len(imp.rest)+len(imp.suspensions), e.prefix)
	}
	return nil
}

// target checks that the store is empty, or, with resume, that it holds
// an unfinished import, and writes the import marker first.
func (e *env) target(resume bool) error {
	empty, key, err := e.empty()
	if err != nil {
		return err
	}
	if !empty {
		n, err := redis.Int(e.do("EXISTS", e.l.marker()))
		if err != nil {
			return err
		}
		switch {
		case resume && n == 1:
		case n == 1:
			return usagef("the store under %q holds an unfinished import (%s): run it again with -resume; nothing was written", e.prefix, e.l.marker())
		default:
			return usagef("the store under %q is not empty (it has %s): import into an empty prefix; nothing was written", e.prefix, key)
		}
	} else if resume {
		return usagef("-resume: the store under %q is empty, there is nothing to resume: import without -resume", e.prefix)
	}
	_, err = e.do("SET", e.l.marker(), e.now().UTC().Format("2006-01-02T15:04:05Z"))
	return err
}

// writeImport writes everything, each write idempotent, so that a resumed
// import writes the same again; the marker goes last.
func (e *env) writeImport(imp *parsedImport) error {
	now := e.now().UnixMilli()
	p := e.progress("importing articles", len(imp.articles))
	for _, a := range imp.articles {
		if err := e.putArticle(a, now); err != nil {
			return err
		}
		p.add(1)
	}
	p.done()
	if err := e.writeComments(imp, now); err != nil {
		return err
	}
	var es []restore.Entry
	// Each user's vote log is written anew from its lines, in their
	// order: a line goes at the offset the lines before it end at, where
	// an import resumed finds it written.
	logEnd := map[string]int64{}
	for _, l := range logOrder(imp.rest, identityOf(imp.identity).Layout) {
		switch l.Type {
		case "karma":
			es = append(es, restore.Entry{Kind: restore.Karma, User: l.User, N: float64(*l.Karma)})
		case "uvote":
			x := restore.Entry{Kind: restore.VoteLog, User: l.User, Item: l.Item, ID: l.ID, Vote: *l.Vote,
				N: float64(int64(*l.At)), Offset: logEnd[l.User]}
			logEnd[l.User] += int64(len(logLineOf(x)))
			es = append(es, x)
		case "submitted", "upvoted", "commented":
			es = append(es, restore.Entry{Kind: restore.Page, Item: l.Type, User: l.User, ID: l.ID, N: *l.At})
		case "link":
			if live(l.ExpiresMs, now) {
				es = append(es, restore.Entry{Kind: restore.Link, Text: *l.Link, ID: l.ID, ExpireAtMs: l.ExpiresMs})
			}
		case "lastpost", "lastcomment":
			if live(l.ExpiresMs, now) {
				kind := restore.LastPost
				if l.Type == "lastcomment" {
					kind = restore.LastComment
				}
				es = append(es, restore.Entry{Kind: kind, User: l.User, N: float64(l.Ms), ExpireAtMs: l.ExpiresMs})
			}
		case "votelog":
			if !live(l.ExpiresMs, now) {
				continue
			}
			for _, x := range l.Entries {
				m, _ := x[0].(string)
				ms, _ := x[1].(float64)
				es = append(es, restore.Entry{Kind: restore.RateLog, User: l.User, Text: m, N: float64(int64(ms)),
					ExpireAtMs: l.ExpiresMs})
			}
		}
	}
	if imp.seq != "" {
		es = append(es, restore.Entry{Kind: restore.Seq, ID: imp.seq})
	}
	if err := e.putEntries(es); err != nil {
		return err
	}
	if imp.identity != "" {
		if err := e.record(identityOf(imp.identity), imp.rules); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(e.stderr, "votectl: import: the export records no identity: record the store's options with votectl options, with the flags of its service")
	}
	if err := e.putSuspensions(imp.suspensions); err != nil {
		return err
	}
	_, err := e.do("DEL", e.l.marker())
	return err
}

// journalLayout is the first layout whose vote logs are journals, whose
// export lists each user's lines oldest first; an export of layout 6
// listed a user's entries of its sorted set newest first.
const journalLayout = 7

// logOrder returns the lines of an import, rest, with each user's uvote
// lines oldest first, the order of the log import writes: as they come
// in an export of a layout from journalLayout on (or of none recorded),
// reversed in one of an earlier layout.
func logOrder(rest []line, layout int) []line {
	if layout <= 0 || layout >= journalLayout {
		return rest
	}
	at := map[string][]int{} // user -> the places of their uvote lines
	for i, l := range rest {
		if l.Type == "uvote" {
			at[l.User] = append(at[l.User], i)
		}
	}
	out := append([]line(nil), rest...)
	for _, places := range at {
		for i, p := range places {
			out[p] = rest[places[len(places)-1-i]]
		}
	}
	return out
}

// suspensionOf returns the Suspension of a mode's name, refuse or shadow;
// 0 for another.
func suspensionOf(mode string) voting.Suspension {
	return map[string]voting.Suspension{"refuse": voting.Refuse, "shadow": voting.Shadow}[mode]
}

// putSuspensions writes the suspensions through Store.Suspend, on the
// store opened with its recorded identity, so that the store's record
// carries the latest end of them as Suspend keeps it; one that ended
// meanwhile is left out. A store with vote events gets a "suspend" event
// of each, once: a suspension the store holds already, the same mode to
// the same end (Store.Suspended), is one a resumed import wrote before
// it was interrupted, and Suspend, which would add a second event of
// it, is not called again.
func (e *env) putSuspensions(list []line) error {
	if len(list) == 0 {
		return nil
	}
	st, _, _, err := e.recorded()
	if err != nil {
		return err
	}
	for _, l := range list {
		until := time.UnixMilli(l.UntilMs)
		if !until.After(e.now()) {
			continue
		}
		mode, end, err := st.Suspended(e.ctx, l.User)
		if err != nil {
			return fmt.Errorf("suspension of %q: %w", l.User, err)
		}
		if mode == suspensionOf(l.Mode) && end.UnixMilli() == l.UntilMs {
			continue // written before the import was interrupted
		}
		err = st.Suspend(e.ctx, l.User, suspensionOf(l.Mode), until)
		if errors.Is(err, voting.ErrInvalidArgument) && !until.After(e.now().Add(time.Second)) {
			continue // ended on the store's clock as it was written
		}
		if err != nil {
			return fmt.Errorf("suspension of %q: %w", l.User, err)
		}
	}
	return nil
}

// live reports whether a key expiring at expMs (0: never) is still
// there at now: one past its expiry is not written.
func live(expMs, now int64) bool { return expMs == 0 || expMs > now }

// putEntries writes es through the store's own script
// (restore.PutEntries).
func (e *env) putEntries(es []restore.Entry) error {
	if len(es) == 0 {
		return nil
	}
	st, err := e.store()
	if err != nil {
		return err
	}
	return restore.PutEntries(e.ctx, st, es)
}

// putArticle writes one article through the store's own scripts: its
// voters (restore.PutEntries), each with the voter record's expiry, then
// its record, indexes, groups and voter record's "" field (restore.Put).
// An import interrupted between the two and resumed once voting closed
// writes no voter and no "" field: the voters it wrote expire with
// voting, and the store ends as a whole import at that time leaves it.
func (e *env) putArticle(a *importArticle, nowMs int64) error {
	closes, exp := a.closes, a.expMs
	if exp != 0 && exp <= nowMs {
		closes, exp = 0, 0 // its voting closed meanwhile
	}
	st, err := e.store()
	if err != nil {
		return err
	}
	if closes != 0 && len(a.votes) > 0 {
		es := make([]restore.Entry, len(a.votes))
		for i, v := range a.votes {
			es[i] = restore.Entry{Kind: restore.Voter, ID: a.id, User: v.User, Vote: *v.Vote, Shadow: v.Shadow, ExpireAtMs: exp}
		}
		if err := restore.PutEntries(e.ctx, st, es); err != nil {
			return fmt.Errorf("article %s: %w", a.id, err)
		}
	}
	if _, err := restore.Put(e.ctx, st, restoreOf(a.id, a.r, true, closes, exp, a.groups)); err != nil {
		return fmt.Errorf("article %s: %w", a.id, err)
	}
	return nil
}

// readAll reads stdin whole: import validates every line before it
// writes one.
func readAll(e *env) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(e.stdin); err != nil {
		return nil, usagef("reading stdin: %v", err)
	}
	return buf.Bytes(), nil
}
