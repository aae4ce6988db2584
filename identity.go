package voting

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A store's identity is recorded in Redis, at {prefix}:store: the
// version of its key layout and the options every process writing to it
// must share (doc.go, "The store's identity"). Every script declares the
// fence, whose name carries this store's identity (keys.go fence), and
// compares it with the record with one GET (lib/base.lua checkStore, put
// in front of each script by scripts.go identityPrologue; a vote, before
// its first write): a write runs only where they are equal, a read where
// the layouts are. Post records the identity of an empty store with its
// first write. The Store's methods about it are reconfigure.go's.

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
// "userpages" (WithUserPages) and "uniquelinks" (WithUniqueLinks). A
// store with none of them has no Options.
//
// The vote weight and window are not shared: each article keeps those it
// was posted with, whichever store counts its votes. Neither are the
// settings of one process (WithKeyPrefix aside, which names the store):
// page size, group cache TTL, clock, read pool, waits and the checks of
// text (WithRawText, WithLinkSchemes).
type Identity struct {
	Layout  int
	Options []string
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
	hm, hn := values(h)
	rm, rn := values(r)
	var diffs []string
	for _, name := range append(hn, rn...) {
		hv, rv := hm[name], rm[name]
		if hv == rv {
			continue
		}
		delete(hm, name)
		delete(rm, name)
		if hv == "" {
			hv = "off"
		}
		if rv == "" {
			rv = "off"
		}
		diffs = append(diffs, fmt.Sprintf("%s %s here, %s in the store", name, hv, rv))
	}
	if len(diffs) == 0 {
		return fmt.Sprintf("the store records %q, this store is %q", recorded, here)
	}
	return strings.Join(diffs, "; ")
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
			"postinterval": 1, "repostafter": 1, "editwindow": 1, "commentinterval": 1}[name]
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
		default:
			return nil, fmt.Errorf("%w: option %q", ErrIncompatible, word)
		}
	}
	return opts, nil
}
