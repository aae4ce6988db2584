package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/votekit/voting"
)

// recorded returns a Store of the package on e's prefix opened with the
// shared options the store records (Store.Recorded,
// Identity.StoreOptions), so that its calls and its Check are the
// store's own, and the identity recorded; ok is false for a store
// without one, opened with the defaults.
func (e *env) recorded() (st *voting.Store, id voting.Identity, ok bool, err error) {
	st, err = e.store()
	if err != nil {
		return nil, id, false, err
	}
	id, ok, err = st.Recorded(e.ctx)
	if err != nil || !ok {
		return st, id, ok, err
	}
	opts, err := id.StoreOptions()
	if err != nil {
		return nil, id, true, err
	}
	st, err = e.store(opts...)
	return st, id, true, err
}

// identityOf parses a recorded identity's text, "5 karma=1,-1".
func identityOf(text string) voting.Identity {
	f := strings.Fields(text)
	id := voting.Identity{}
	if len(f) > 0 {
		id.Layout, _ = strconv.Atoi(f[0])
		id.Options = f[1:]
	}
	return id
}

// record records id as the store's identity once an import has written
// its data: Reconfigure of a store of id's options, which takes over a
// store of this layout that has none recorded and brings what derives
// from the options in line.
func (e *env) record(id voting.Identity) error {
	opts, err := id.StoreOptions()
	if err != nil {
		return err
	}
	st, err := e.store(opts...)
	if err != nil {
		return err
	}
	_, err = st.Reconfigure(e.ctx)
	return err
}

// printHealth prints what Check found, an item a line, and reports
// whether it found a problem that loses data or fails calls.
func printHealth(e *env, h voting.Health) bool {
	w := e.stdout
	fmt.Fprintf(w, "health: redis %s reachable %v, scripts %s\n", h.Version, h.Reachable, h.Scripts)
	if h.Config {
		fmt.Fprintf(w, "  maxmemory-policy %s, lazyfree-lazy-expire %s, lazyfree-lazy-eviction %s\n",
			h.MaxmemoryPolicy, h.LazyfreeLazyExpire, h.LazyfreeLazyEviction)
	} else {
		fmt.Fprintf(w, "  CONFIG GET refused: settings not checked\n")
	}
	fmt.Fprintf(w, "  replicas %d\n", len(h.Replicas))
	for _, p := range h.Problems {
		fmt.Fprintf(w, "  PROBLEM: %s\n", p)
	}
	if len(h.Problems) == 0 {
		fmt.Fprintf(w, "  no problems\n")
	}
	return h.Serious
}

// sharedFlags are the flags of the shared options, named as
// examples/newsapi names them, for `options` to change.
type sharedFlags struct {
	orders                     string
	karma, cost, minKarma      *[2]int64
	voteLimit                  string
	postInterval, repost, edit time.Duration
	userPages, uniqueLinks     bool
}

func (f *sharedFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.orders, "orders", "", "the optional orders, comma-separated: top,hot,best,controversial")
	fs.Func("karma", "", pairFlag(&f.karma))
	fs.Func("vote-cost", "", pairFlag(&f.cost))
	fs.Func("min-karma", "", pairFlag(&f.minKarma))
	fs.StringVar(&f.voteLimit, "vote-limit", "", "N/DURATION")
	fs.DurationVar(&f.postInterval, "post-interval", 0, "")
	fs.DurationVar(&f.repost, "repost-after", 0, "")
	fs.DurationVar(&f.edit, "edit-window", 0, "")
	fs.BoolVar(&f.userPages, "user-pages", false, "")
	fs.BoolVar(&f.uniqueLinks, "unique-links", false, "")
}

// options returns the store options the flags name.
func (f *sharedFlags) options() ([]voting.Option, error) {
	var opts []voting.Option
	if f.orders != "" {
		var orders []voting.Order
		for _, n := range strings.Split(f.orders, ",") {
			o, err := voting.ParseOrder(strings.TrimSpace(n))
			if err != nil {
				return nil, usagef("options: -orders: %v", err)
			}
			orders = append(orders, o)
		}
		opts = append(opts, voting.WithOrders(orders...))
	}
	for _, p := range []struct {
		v   *[2]int64
		opt func(up, down int64) voting.Option
	}{{f.karma, voting.WithKarma}, {f.cost, voting.WithVoteCost}, {f.minKarma, voting.WithMinKarma}} {
		if p.v != nil {
			opts = append(opts, p.opt(p.v[0], p.v[1]))
		}
	}
	if f.voteLimit != "" {
		n, d, ok := strings.Cut(f.voteLimit, "/")
		limit, err1 := strconv.Atoi(n)
		per, err2 := time.ParseDuration(d)
		if !ok || err1 != nil || err2 != nil {
			return nil, usagef("options: -vote-limit %q is not N/DURATION", f.voteLimit)
		}
		opts = append(opts, voting.WithVoteLimit(limit, per))
	}
	for _, d := range []struct {
		v   time.Duration
		opt func(time.Duration) voting.Option
	}{{f.postInterval, voting.WithPostInterval}, {f.repost, voting.WithRepostAfter}, {f.edit, voting.WithEditWindow}} {
		if d.v != 0 {
			opts = append(opts, d.opt(d.v))
		}
	}
	if f.userPages {
		opts = append(opts, voting.WithUserPages())
	}
	if f.uniqueLinks {
		opts = append(opts, voting.WithUniqueLinks())
	}
	return opts, nil
}

// cmdOptions shows the store's recorded identity, or, given the flags of
// the shared options, changes it to theirs (Store.Reconfigure: the
// record, then the existing data in steps, resumable): the one
// operation of a change, before the processes restart with the new
// options (doc.go, "The store's identity").
func cmdOptions(e *env, args []string) error {
	var f sharedFlags
	if _, err := subFlags(e, "options", args, 0, f.define); err != nil {
		return err
	}
	if len(args) == 0 {
		inv, err := e.scanStore()
		if err != nil {
			return err
		}
		_, id, ok, err := e.recorded()
		if err != nil {
			return err
		}
		o := e.shownOptions(inv)
		out := map[string]interface{}{"recorded": ok, "data": map[string]interface{}{"orders": o.orders,
			"karma": o.karma, "user_pages": o.userPages, "links_kept": o.uniqueLinks}}
		if ok {
			out["layout"], out["options"] = id.Layout, id.Options
		}
		return printJSON(e, out)
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	st, err := e.store(opts...)
	if err != nil {
		return usagef("options: %v", err)
	}
	was, err := st.Reconfigure(e.ctx)
	if err != nil {
		return err
	}
	if was.Layout == 0 {
		fmt.Fprintf(e.stdout, "was: none\n")
	} else {
		fmt.Fprintf(e.stdout, "was: %s\n", was)
	}
	fmt.Fprintf(e.stdout, "recorded: %s\n", st.Identity())
	return nil
}
