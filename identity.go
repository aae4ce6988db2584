package voting

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

// A store's identity is recorded in Redis, at {prefix}:store: the
// version of its key layout and the options every process writing to it
// must share (doc.go, "The store's identity"). Every script declares the
// fence, whose name carries this store's identity (keys.go fence), and
// compares it with the record with one GET (lib/base.lua checkStore, put
// in front of each script by scripts.go identityPrologue; a vote, before
// its first write): a write runs only where they are equal, a read where
// the layouts are. Post records the identity of an empty store with its
// first write; CheckIdentity, below, makes a write's comparison for a
// service at start. The Store's other methods about it are
// reconfigure.go's.

// LayoutVersion is the version of the key layout this package reads and
// writes (doc.go, "Key layout"). Versions 1 and 2, which kept articles as
// hashes, were never recorded: a store with data and no record reads as
// another layout. Version 4 added the families of comments to version 3:
// a library of layout 3 would leave an article's comments behind when it
// deletes the article. Version 5 keeps each comment, its body included,
// in one string, and a parent's Best and Top orderings of its replies in
// one sorted set, where version 4 had a hash, a string for the body and
// two sorted sets. A store of layout 3 or 4 becomes one of layout 5 by
// [Store.Reconfigure], which moves the comments of one of layout 4
// (doc.go, "The store's identity").
const LayoutVersion = 5

// oldestMigrated is the oldest layout Reconfigure migrates to
// LayoutVersion.
const oldestMigrated = 3

// migrates reports whether Reconfigure migrates a store of layout to
// LayoutVersion.
func migrates(layout int) bool { return layout >= oldestMigrated && layout < LayoutVersion }

// Identity is a store's key layout version and the options that every
// process writing to it must share, as a store records it in Redis.
// Options lists the shared options that are on, in a fixed order, each
// as a word: "orders=top,hot" (WithOrders), "karma=1,-1" (WithKarma),
// "cost=1,6" (WithVoteCost), "minkarma=0,500" (WithMinKarma),
// "votelimit=10,60000" (WithVoteLimit: n, then the span in ms),
// "postinterval=900000", "repostafter=172800000", "editwindow=900000"
// (WithPostInterval, WithRepostAfter, WithEditWindow, in ms),
// "userpages" (WithUserPages), "uniquelinks" (WithUniqueLinks),
// "votelog" (WithVoteLog) and "events=10000" (WithVoteEvents). A
// store with none of them has no Options.
//
// The vote weight and window are not shared: each article keeps those it
// was posted with, whichever store counts its votes. Neither are the
// settings of one process (WithKeyPrefix aside, which names the store):
// page size, group cache TTL, clock, read pool, waits and the checks of
// text (WithRawText, WithLinkSchemes).
type Identity struct {
	Layout  int      `json:"layout"`
	Options []string `json:"options"`
}

// String returns the identity as the store records it: the layout, then
// the options, space-separated ("3 karma=1,-1 userpages").
func (id Identity) String() string {
	return strings.Join(append([]string{strconv.Itoa(id.Layout)}, id.Options...), " ")
}

// parseIdentity parses a recorded identity; ok is false for text that
// is not one (written by hand, or empty).
func parseIdentity(s string) (id Identity, ok bool) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return id, false
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 1 {
		return id, false
	}
	return Identity{Layout: n, Options: f[1:]}, true
}

// identity returns the identity of a store of c, whose optional orders
// enabled are orders.
func (c *config) identity(orders []string) Identity {
	id := Identity{Layout: LayoutVersion}
	add := func(on bool, name string, v ...int64) {
		if !on {
			return
		}
		if len(v) == 0 {
			id.Options = append(id.Options, name)
			return
		}
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = strconv.FormatInt(x, 10)
		}
		id.Options = append(id.Options, name+"="+strings.Join(s, ","))
	}
	r := c.rules
	if len(orders) > 0 {
		id.Options = append(id.Options, "orders="+strings.Join(orders, ","))
	}
	add(r.karma, "karma", r.perUp, r.perDown)
	add(r.cost, "cost", r.costUp, r.costDown)
	add(r.minKarma, "minkarma", r.minUp, r.minDown)
	add(r.voteLimit, "votelimit", int64(r.limit), r.per.Milliseconds())
	add(r.hasInterval, "postinterval", r.postInterval.Milliseconds())
	add(r.hasRepost, "repostafter", r.repostAfter.Milliseconds())
	add(r.hasEdit, "editwindow", r.editWindow.Milliseconds())
	add(r.hasCommentInterval, "commentinterval", r.commentInterval.Milliseconds())
	add(c.userPages, "userpages")
	add(c.uniqueLinks, "uniquelinks")
	add(c.voteLog, "votelog")
	add(c.hasEvents, "events", c.voteEvents)
	return id
}

// recordIdentity returns the identity a store's record holds: the record
// less the latest end of its suspensions, which follows a newline while
// a user is suspended (lib/moderation.lua lastEnd).
func recordIdentity(record string) string {
	id, _, _ := strings.Cut(record, "\n")
	return id
}

// incompatibleError is the error of a script that found the store's
// record (recorded; "" for none, on a store with data) other than this
// store's identity (here): it wraps ErrIncompatible, and names the
// difference.
type incompatibleError struct{ recorded, here string }

// incompatiblePrefix starts the error lib/base.lua identity raises:
// "<prefix><recorded> | <here> |".
const incompatiblePrefix = "voting: incompatible store: "

func (e *incompatibleError) Error() string {
	return ErrIncompatible.Error() + ": " + difference(e.recorded, e.here)
}

func (e *incompatibleError) Unwrap() error { return ErrIncompatible }

// movingPrefix starts the error lib/comments.lua moving raises: a call
// about comments while Reconfigure moves those of a store of layout 4
// (reconfigure.go); errMoving is its error.
const movingPrefix = "voting: comments moving: "

var errMoving = fmt.Errorf("%w: the comments of layout 4 are not all moved to layout %d yet: "+
	"Reconfigure (votectl options) moves them", ErrIncompatible, LayoutVersion)

// parseIncompatible returns the error of msg, a script's error without
// Redis's decoration, where it is lib/base.lua identity's refusal.
// miniredis puts text of its own around it.
func parseIncompatible(msg string) (error, bool) {
	if strings.Contains(msg, movingPrefix) {
		return errMoving, true
	}
	i := strings.Index(msg, incompatiblePrefix)
	if i < 0 {
		return nil, false
	}
	recorded, rest, ok := strings.Cut(msg[i+len(incompatiblePrefix):], " | ")
	here, _, ok2 := strings.Cut(rest, " |")
	if !ok || !ok2 {
		return nil, false
	}
	return &incompatibleError{recorded: strings.TrimSpace(recorded), here: here}, true
}

// checkRead is lib/base.lua identity's check of a read, for the read
// that runs without a script (VotesOf, votes.go): record is the store's
// record as GET returned it (nil for none) and seqType the type of its
// id counter, here this store's identity. A read passes where the record
// is of this layout, whatever the options, and on an empty store (no
// record, no id counter); a store with data and no record, or with a
// record of another layout, gets an *incompatibleError.
func checkRead(record []byte, seqType, here string) error {
	if record != nil {
		record = []byte(recordIdentity(string(record)))
	}
	switch {
	case string(record) == here:
		return nil
	case record == nil && seqType != "string":
		return nil
	case record != nil && leadingDigits(string(record)) == leadingDigits(here):
		return nil
	}
	return &incompatibleError{recorded: string(record), here: here}
}

// leadingDigits returns the digits s starts with, as lib/base.lua
// identity's match of '^%d+' does: a record's layout.
func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// difference names how the recorded identity differs from here, this
// store's: "layout 2, this library reads 3", "karma off here, 1,-1 in the
// store".
func difference(recorded, here string) string {
	h, _ := parseIdentity(here)
	if recorded == "" {
		return fmt.Sprintf("the store has data and no recorded layout (written before layouts were recorded), this library reads %d: "+
			"a store of layout %d gets its record from Reconfigure (votectl options)", h.Layout, LayoutVersion)
	}
	r, ok := parseIdentity(recorded)
	if !ok {
		return fmt.Sprintf("the store records %q, not an identity", recorded)
	}
	if migrates(r.Layout) && h.Layout == LayoutVersion {
		return fmt.Sprintf("layout %d, this library reads %d: Reconfigure (votectl options) migrates the store, "+
			"after which libraries of layout %d refuse it", r.Layout, h.Layout, r.Layout)
	}
	if r.Layout != h.Layout {
		return fmt.Sprintf("layout %d, this library reads %d", r.Layout, h.Layout)
	}
	var diffs []string
	for _, d := range optionDiffs(r, h) {
		diffs = append(diffs, fmt.Sprintf("%s %s here, %s in the store", d.name, onOff(d.here), onOff(d.recorded)))
	}
	if len(diffs) == 0 {
		return fmt.Sprintf("the store records %q, this store is %q", recorded, here)
	}
	return strings.Join(diffs, "; ")
}

// optionDiff is a shared option whose value differs between two
// identities: "" where it is off, "on" for an option without a value.
type optionDiff struct{ name, recorded, here string }

// optionDiffs returns the shared options whose values differ between
// recorded and here, in the order here names them, then recorded.
func optionDiffs(recorded, here Identity) []optionDiff {
	values := func(id Identity) (map[string]string, []string) {
		m := map[string]string{}
		var names []string
		for _, o := range id.Options {
			name, v, ok := strings.Cut(o, "=")
			if !ok {
				v = "on"
			}
			if _, seen := m[name]; !seen {
				names = append(names, name)
			}
			m[name] = v
		}
		return m, names
	}
	hm, hn := values(here)
	rm, rn := values(recorded)
	var diffs []optionDiff
	seen := map[string]bool{}
	for _, name := range append(hn, rn...) {
		if seen[name] || hm[name] == rm[name] {
			continue
		}
		seen[name] = true
		diffs = append(diffs, optionDiff{name: name, recorded: rm[name], here: hm[name]})
	}
	return diffs
}

// onOff is an option's value as difference names it: "off" for none.
func onOff(v string) string {
	if v == "" {
		return "off"
	}
	return v
}

// optionFlags are the flags of votectl options (and of examples/newsapi)
// that set each shared option, by the option's name in an identity.
var optionFlags = map[string]string{
	"orders": "orders", "karma": "karma", "cost": "vote-cost", "minkarma": "min-karma",
	"votelimit": "vote-limit", "postinterval": "post-interval", "repostafter": "repost-after",
	"editwindow": "edit-window", "commentinterval": "comment-interval",
	"userpages": "user-pages", "uniquelinks": "unique-links", "votelog": "vote-log", "events": "vote-events",
}

// optionFlag returns the flag of votectl options that sets the shared
// option name to v, an identity's value ("" for off, "on" for an option
// without a value): "-karma 1,-1", "-vote-limit 10/1m", "-karma off",
// "-user-pages=false". ok is false for an option votectl does not know.
func optionFlag(name, v string) (flag string, ok bool) {
	f, ok := optionFlags[name]
	if !ok {
		return "", false
	}
	switch {
	case v == "on":
		return "-" + f, true
	case v == "" && (name == "userpages" || name == "uniquelinks" || name == "votelog"):
		return "-" + f + "=false", true
	case v == "":
		return "-" + f + " off", true
	case name == "votelimit":
		n, ms, ok := strings.Cut(v, ",")
		d, err := strconv.ParseInt(ms, 10, 64)
		if !ok || err != nil {
			return "", false
		}
		return "-" + f + " " + n + "/" + shortDuration(time.Duration(d)*time.Millisecond), true
	case name == "postinterval" || name == "repostafter" || name == "editwindow" || name == "commentinterval":
		d, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", false
		}
		return "-" + f + " " + shortDuration(time.Duration(d)*time.Millisecond), true
	}
	return "-" + f + " " + v, true
}

// shortDuration is d as time.Duration.String writes it, less its zero
// minutes and seconds: "24h", "1m", "1h30m", "1.5s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// reconcile returns how to end the difference between the identity
// recorded for the store under prefix and here, its options: the votectl
// command that records here's options, and the flags that give a
// process the recorded ones ("no -karma" for one off in the record). ok
// is false where the layouts differ, or either names an option votectl
// does not set.
func reconcile(prefix string, recorded, here Identity) (command, flags string, ok bool) {
	if recorded.Layout != here.Layout {
		return "", "", false
	}
	cmd := []string{"votectl", "-prefix", shellWord(prefix), "options"}
	var start []string
	for _, d := range optionDiffs(recorded, here) {
		f, ok1 := optionFlag(d.name, d.here)
		g, ok2 := optionFlag(d.name, d.recorded)
		if !ok1 || !ok2 {
			return "", "", false
		}
		cmd = append(cmd, f)
		if d.recorded == "" {
			g = "no -" + optionFlags[d.name]
		}
		start = append(start, g)
	}
	if len(start) == 0 {
		return "", "", false
	}
	return strings.Join(cmd, " "), strings.Join(start, ", "), true
}

// shellWord quotes s for a POSIX shell where it needs it.
func shellWord(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@+=,", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// identityError is CheckIdentity's error: the difference between the
// identity recorded for the store under prefix (recorded; "" for none,
// on a store with data) and the store's (here), and how to end it.
type identityError struct{ prefix, recorded, here string }

func (e *identityError) Error() string {
	msg := ErrIncompatible.Error() + ": " + difference(e.recorded, e.here)
	r, ok1 := parseIdentity(e.recorded)
	h, ok2 := parseIdentity(e.here)
	if !ok1 || !ok2 {
		return msg
	}
	if cmd, flags, ok := reconcile(e.prefix, r, h); ok {
		msg += fmt.Sprintf(": to write with this process's options, record them first with %q; "+
			"or start the process with the store's: %s", cmd, flags)
	}
	return msg
}

func (e *identityError) Unwrap() error { return ErrIncompatible }

// CheckIdentity compares the identity recorded for the store's prefix
// ([Store.Recorded]) with the store's own ([Store.Identity]) as a write
// does, reading the record and the id counter's type on the primary in
// one round trip. It returns nil where they are equal, and for an empty
// store (no record, no id), whose first Post records the store's
// identity. Otherwise every write of this store would fail, and it
// returns an error wrapping [ErrIncompatible] that names the difference
// ("karma off here, 1,-1 in the store") and, where only shared options
// differ, how to end it: the votectl command that records this store's
// options, and the flags of the store's options.
//
// New does not talk to Redis, and a store whose options differ from the
// record reads as usual: a service calls CheckIdentity once after New,
// and refuses to start on its error.
func (s *Store) CheckIdentity(ctx context.Context) error {
	if s.hooked(ctx) {
		return observeErr(ctx, s, Call{Op: "CheckIdentity"}, s.CheckIdentity)
	}
	const op = "check identity"
	c, err := getConn(ctx, s.pool, s.keys.seq)
	if err != nil {
		return opErr(op, err)
	}
	c = s.counted(ctx, c)
	defer c.Close()
	var replies []interface{}
	if err := c.Send("GET", s.keys.record); err != nil {
		// A connection that cannot pipeline (redisc's RetryConn refuses
		// Send, having sent nothing) sends the two commands one by one.
		for _, cmd := range [][]interface{}{{"GET", s.keys.record}, {"TYPE", s.keys.seq}} {
			r, err := do(ctx, c, cmd[0].(string), cmd[1:])
			if err != nil && !errors.Is(err, redis.ErrNil) {
				return opErr(op, scriptError(err))
			}
			replies = append(replies, r)
		}
	} else {
		if err := c.Send("TYPE", s.keys.seq); err != nil {
			return opErr(op, contextError(ctx, err))
		}
		if err := c.Flush(); err != nil {
			return opErr(op, contextError(ctx, err))
		}
		if replies, err = redis.Values(do(ctx, c, "", nil)); err != nil {
			return opErr(op, scriptError(err))
		}
	}
	if len(replies) != 2 {
		return opErr(op, fmt.Errorf("%d replies for 2 commands", len(replies)))
	}
	record, err := redis.Bytes(replies[0], nil)
	if errors.Is(err, redis.ErrNil) {
		record, err = nil, nil
	}
	if err != nil {
		return opErr(op, fmt.Errorf("key %s: %w", s.keys.record, scriptError(err)))
	}
	seqType, err := redis.String(replies[1], nil)
	if err != nil {
		return opErr(op, fmt.Errorf("key %s: %w", s.keys.seq, scriptError(err)))
	}
	here := s.shared.String()
	if record != nil {
		record = []byte(recordIdentity(string(record)))
	}
	if string(record) == here || record == nil && seqType == "none" {
		return nil
	}
	return opErr(op, &identityError{prefix: s.keys.prefix, recorded: string(record), here: here})
}

// StoreOptions returns the shared options of a store whose identity is
// id, as options of New: an operator's tool opens a recorded store with
// them ([Store.Recorded]), so that its calls are the store's own. An
// identity of layout 3 or 4 gets its options too, for the Reconfigure
// that migrates it. An identity of another layout, or an option it does not
// know, gets an error wrapping [ErrIncompatible].
func (id Identity) StoreOptions() ([]Option, error) {
	if id.Layout != LayoutVersion && !migrates(id.Layout) {
		return nil, fmt.Errorf("%w: layout %d, this library reads %d", ErrIncompatible, id.Layout, LayoutVersion)
	}
	var opts []Option
	for _, word := range id.Options {
		name, value, _ := strings.Cut(word, "=")
		var v []int64
		for _, f := range strings.Split(value, ",") {
			if n, err := strconv.ParseInt(f, 10, 64); err == nil {
				v = append(v, n)
			}
		}
		ms := func(i int) time.Duration { return time.Duration(v[i]) * time.Millisecond }
		want := map[string]int{"karma": 2, "cost": 2, "minkarma": 2, "votelimit": 2,
			"postinterval": 1, "repostafter": 1, "editwindow": 1, "commentinterval": 1, "events": 1}[name]
		if len(v) != want && name != "orders" {
			return nil, fmt.Errorf("%w: option %q", ErrIncompatible, word)
		}
		switch name {
		case "orders":
			var orders []Order
			for _, n := range strings.Split(value, ",") {
				o, err := ParseOrder(n)
				if err != nil {
					return nil, fmt.Errorf("%w: option %q", ErrIncompatible, word)
				}
				orders = append(orders, o)
			}
			opts = append(opts, WithOrders(orders...))
		case "karma":
			opts = append(opts, WithKarma(v[0], v[1]))
		case "cost":
			opts = append(opts, WithVoteCost(v[0], v[1]))
		case "minkarma":
			opts = append(opts, WithMinKarma(v[0], v[1]))
		case "votelimit":
			opts = append(opts, WithVoteLimit(int(v[0]), ms(1)))
		case "postinterval":
			opts = append(opts, WithPostInterval(ms(0)))
		case "repostafter":
			opts = append(opts, WithRepostAfter(ms(0)))
		case "editwindow":
			opts = append(opts, WithEditWindow(ms(0)))
		case "commentinterval":
			opts = append(opts, WithCommentInterval(ms(0)))
		case "userpages":
			opts = append(opts, WithUserPages())
		case "uniquelinks":
			opts = append(opts, WithUniqueLinks())
		case "votelog":
			opts = append(opts, WithVoteLog())
		case "events":
			opts = append(opts, WithVoteEvents(v[0]))
		default:
			return nil, fmt.Errorf("%w: option %q", ErrIncompatible, word)
		}
	}
	return opts, nil
}
