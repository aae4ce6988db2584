package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/votekit/voting"
	ilayout "github.com/votekit/voting/internal/layout"
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

// withRules returns id with the numbers of rules (a rules record's words,
// voting.Rules.String) in the words of its rules: "votelimit" becomes
// "votelimit=10,60000", which Identity.StoreOptions opens with those
// numbers.
func withRules(id voting.Identity, rules string) voting.Identity {
	numbers := map[string]string{}
	for _, w := range strings.Fields(rules) {
		if name, _, ok := strings.Cut(w, "="); ok {
			numbers[name] = w
		}
	}
	out := voting.Identity{Layout: id.Layout}
	for _, w := range id.Options {
		if n, ok := numbers[w]; ok {
			w = n
		}
		out.Options = append(out.Options, w)
	}
	return out
}

// rulesOf returns the store's rules as st applies them, "" for none or
// for a store it cannot read them of (one of an earlier layout, whose
// identity carries them).
func (e *env) rulesOf(st *voting.Store) string {
	r, err := st.Rules(e.ctx)
	if err != nil {
		return ""
	}
	return r.String()
}

// identityOf parses a recorded identity's text, "6 karma userpages".
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
// its data, with the numbers of rules (withRules): Reconfigure of a store
// of id's options, which takes over a store of this layout that has none
// recorded and brings what derives from the options in line.
func (e *env) record(id voting.Identity, rules string) error {
	opts, err := withRules(id, rules).StoreOptions()
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
// examples/newsapi names them, for options to change: each flag given
// sets its option's word of an identity ("karma=1,-1"), or, for the
// value off (or an empty value; false for a switch), removes it.
type sharedFlags struct {
	words map[string]string // option name -> its word; "" to turn it off
	names []string          // the options given, in the order given
}

// set records name's word w ("" for off).
func (f *sharedFlags) set(name, w string) {
	if _, ok := f.words[name]; !ok {
		f.names = append(f.names, name)
	}
	f.words[name] = w
}

// off reports whether v turns an option off.
func off(v string) bool { return v == "off" || strings.TrimSpace(v) == "" }

func (f *sharedFlags) define(fs *flag.FlagSet) {
	f.words = map[string]string{}
	value := func(flagName, name, usage string, word func(v string) (string, error)) {
		if name == ilayout.OptionOrders {
			usage += "; off or none turns it off"
		} else {
			usage += "; off turns it off"
		}
		fs.Func(flagName, usage, func(v string) error {
			if off(v) || name == ilayout.OptionOrders && v == "none" {
				f.set(name, "")
				return nil
			}
			w, err := word(v)
			if err != nil {
				return err
			}
			f.set(name, name+"="+w)
			return nil
		})
	}
	value("orders", ilayout.OptionOrders, "the optional orders (WithOrders), comma-separated: `top,hot,best,controversial`, score for comments", func(v string) (string, error) {
		var names []string
		for _, n := range strings.Split(v, ",") {
			o, err := voting.ParseOrder(strings.TrimSpace(n))
			if err != nil {
				return "", err
			}
			names = append(names, o.String())
		}
		return strings.Join(names, ","), nil
	})
	pair := func(v string) (string, error) {
		var p *[2]int64
		if err := pairFlag(&p)(v); err != nil {
			return "", err
		}
		return fmt.Sprintf("%d,%d", p[0], p[1]), nil
	}
	value("karma", ilayout.RuleKarma, "karma (WithKarma): `UP,DOWN` points a vote gives the poster, e.g. 1,-1", pair)
	value("vote-cost", ilayout.RuleCost, "with karma, the karma each standing vote costs the voter (WithVoteCost): `UP,DOWN`, e.g. 1,6", pair)
	value("min-karma", ilayout.RuleMinKarma, "with karma, the least karma to upvote and to downvote (WithMinKarma): `UP,DOWN`, e.g. 0,30", pair)
	value("vote-limit", ilayout.RuleVoteLimit, "at most N votes per user in any span of DURATION (WithVoteLimit): `N/DURATION`, e.g. 100/24h", func(v string) (string, error) {
		n, d, ok := strings.Cut(v, "/")
		limit, err1 := strconv.Atoi(n)
		per, err2 := time.ParseDuration(d)
		if !ok || err1 != nil || err2 != nil {
			return "", fmt.Errorf("%q is not N/DURATION", v)
		}
		ms, err := millis(per)
		return fmt.Sprintf("%d,%s", limit, ms), err
	})
	for _, d := range []struct{ flag, name, usage string }{
		{"post-interval", ilayout.RulePostInterval, "the least time between two posts of one user (WithPostInterval): a `duration`, e.g. 15m"},
		{"comment-interval", ilayout.RuleCommentInterval, "the least time between two comments of one user (WithCommentInterval): a `duration`, e.g. 30s"},
		{"repost-after", ilayout.RuleRepostAfter, "a link may be posted again this long after (WithRepostAfter): a `duration`, e.g. 48h"},
		{"edit-window", ilayout.RuleEditWindow, "how long a poster may edit (WithEditWindow): a `duration`, e.g. 15m"},
	} {
		value(d.flag, d.name, d.usage, func(v string) (string, error) {
			per, err := time.ParseDuration(v)
			if err != nil {
				return "", err
			}
			return millis(per)
		})
	}
	value("vote-events", ilayout.OptionEvents, "keep a stream of the vote events, capped at about `N` entries (WithVoteEvents), e.g. 100000", func(v string) (string, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return "", fmt.Errorf("%q is not a length of 1 or more", v)
		}
		return strconv.FormatInt(n, 10), nil
	})
	for _, b := range []struct{ flag, name, usage string }{
		{"user-pages", ilayout.OptionUserPages, "keep each user's submitted and upvoted pages (WithUserPages); -user-pages=false turns it off"},
		{"unique-links", ilayout.OptionUniqueLinks, "one live article per link (WithUniqueLinks); -unique-links=false turns it off"},
		{"vote-log", ilayout.OptionVoteLog, "keep each user's standing votes (WithVoteLog), for votes-by and reverse; -vote-log=false turns it off"},
	} {
		fs.BoolFunc(b.flag, b.usage, func(v string) error {
			on, err := strconv.ParseBool(v)
			if err != nil {
				return err
			}
			if on {
				f.set(b.name, b.name)
			} else {
				f.set(b.name, "")
			}
			return nil
		})
	}
}

// millis is d in whole milliseconds, as an identity records it.
func millis(d time.Duration) (string, error) {
	if d <= 0 || d%time.Millisecond != 0 {
		return "", fmt.Errorf("%v is not a positive whole number of milliseconds", d)
	}
	return strconv.FormatInt(d.Milliseconds(), 10), nil
}

// apply returns id with the options the flags give changed.
func (f *sharedFlags) apply(id voting.Identity) voting.Identity {
	out := voting.Identity{Layout: id.Layout}
	done := map[string]bool{}
	for _, word := range id.Options {
		name, _, _ := strings.Cut(word, "=")
		w, given := f.words[name]
		switch {
		case !given:
			out.Options = append(out.Options, word)
		case w != "" && !done[name]:
			out.Options = append(out.Options, w)
		}
		done[name] = true
	}
	for _, name := range f.names {
		if w := f.words[name]; w != "" && !done[name] {
			out.Options = append(out.Options, w)
		}
	}
	return out
}

// cmdOptions shows the store's recorded identity, or, given the flags of
// shared options, changes those options of the record and records the
// result (Store.Reconfigure: the record, then the existing data in
// steps, resumable): the one operation of a change, before the processes
// restart with the new options (docs/OPERATIONS.md, "Changing shared options"). It
// prints the record before and after; -dry-run prints what it would
// record, and changes nothing.
func cmdOptions(e *env, args []string) error {
	var f sharedFlags
	var dryRun *bool
	if _, err := subFlags(e, "options", args, 0, func(fs *flag.FlagSet) {
		f.define(fs)
		dryRun = fs.Bool("dry-run", false, "print the record before and the one it would record, and change nothing")
	}); err != nil {
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
			if st, _, _, err := e.recorded(); err == nil {
				if r, err := st.Rules(e.ctx); err == nil {
					out["rules"] = r
				}
			}
		}
		return printJSON(e, out)
	}
	plain, err := e.store()
	if err != nil {
		return err
	}
	before, ok, err := plain.Recorded(e.ctx)
	if err != nil {
		return err
	}
	base := before
	if !ok {
		base = voting.Identity{Layout: voting.LayoutVersion}
	}
	// The rules given with numbers: their numbers go to the store's rules
	// record (SetRules), whether Reconfigure turns them on or they were.
	var given voting.Identity
	for _, name := range f.names {
		if w := f.words[name]; strings.Contains(w, "=") && ruleWord(w) {
			given.Options = append(given.Options, w)
		}
	}
	given.Layout = voting.LayoutVersion
	setOpts, err := given.StoreOptions()
	if err != nil {
		return usagef("options: %v", err)
	}
	opts, err := f.apply(base).StoreOptions()
	if err != nil {
		return err
	}
	st, err := e.store(opts...)
	if err != nil {
		return usagef("options: %v", err)
	}
	shown := "none (an empty store, or one written before layouts were recorded)"
	rulesBefore := ""
	if ok {
		shown = before.String()
		if rec, _, _, err := e.recorded(); err == nil {
			rulesBefore = e.rulesOf(rec)
		}
	}
	after := st.Identity()
	fmt.Fprintf(e.stdout, "before: %s\n", shown)
	if rulesBefore != "" {
		fmt.Fprintf(e.stdout, "rules before: %s\n", rulesBefore)
	}
	if *dryRun {
		fmt.Fprintf(e.stdout, "would record: %s (dry run: nothing changed)\n", after)
		if len(given.Options) > 0 {
			fmt.Fprintf(e.stdout, "would set rules: %s (dry run: nothing changed)\n", strings.Join(given.Options, " "))
		}
		return nil
	}
	if !ok || before.String() != after.String() {
		was, err := st.Reconfigure(e.ctx)
		if err != nil {
			return err
		}
		if ok && was.String() != before.String() || !ok && was.Layout != 0 {
			fmt.Fprintf(e.stderr, "votectl: options: the record changed to %q meanwhile; Reconfigure replaced that\n", was)
		}
	}
	if len(setOpts) > 0 {
		if _, err := st.SetRules(e.ctx, setOpts...); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "after:  %s\n", after)
	if r := e.rulesOf(st); r != "" {
		fmt.Fprintf(e.stdout, "rules after:  %s\n", r)
	}
	return nil
}

// ruleWord reports whether w, an option's word, is a rule's.
func ruleWord(w string) bool {
	name, _, _ := strings.Cut(w, "=")
	return ilayout.IsRule(name)
}
