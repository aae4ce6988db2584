package voting

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/votekit/voting/internal/layout"
)

// A store's identity is recorded in Redis, at {prefix}:store: the
// version of its key layout and the options every process writing to it
// must share (docs/LAYOUT.md, "The store's identity"). Every script declares the
// fence, whose name carries this store's identity (keys.go fence), and
// compares it with the record with one GET (lib/base.lua openStore, the
// first line of each script, in the mode scripts.go scriptTable gives
// it; a vote, before its first write): a write runs only where they are equal, a read where
// the layouts are. Post records the identity of an empty store with its
// first write; CheckIdentity, below, makes a write's comparison for a
// service at start. The Store's other methods about it are
// reconfigure.go's.

// LayoutVersion is the version of the key layout this package reads and
// writes (docs/LAYOUT.md, "Keys"). Versions 1 and 2, which kept articles as
// hashes, were never recorded: a store with data and no record reads as
// another layout. Version 4 added the families of comments to version 3:
// a library of layout 3 would leave an article's comments behind when it
// deletes the article. Version 5 keeps each comment, its body included,
// in one string, and a parent's Best and Top orderings of its replies in
// one sorted set, where version 4 had a hash, a string for the body and
// two sorted sets. Version 6 keeps the numbers of the rules in a record
// of their own, data of the store ([Store.SetRules]), where version 5
// had them in the identity's words ("votelimit=10,60000"; now
// "votelimit"), the comments whose removal a DeleteComment left to
// its next steps in a set (cremoving), and moderation's data: the
// suspensions, whose latest end the record carries after a newline
// while any is on record, a shadowed voter's "1s" or "-1s" in voter
// records, and the vote logs and events of the options that keep them
// (moderation.go). Version 7 keeps a user's vote log as a journal, a
// string of one line a vote, where version 6 kept a sorted set, and a
// logged vote's value in its voter record carries the offset of its
// line ("1@4096"). A store of layout 3 to 6 becomes one of layout 7 by
// [Store.Reconfigure], which moves the comments of one of layout 4, the
// numbers of the rules of one of layout 3 to 5, and the vote logs of
// one of layout 6 (docs/LAYOUT.md, "Layout versions and migrations").
const LayoutVersion = 7

// oldestMigrated is the oldest layout Reconfigure migrates to
// LayoutVersion.
const oldestMigrated = 3

// migrates reports whether Reconfigure migrates a store of layout to
// LayoutVersion.
func migrates(layout int) bool { return layout >= oldestMigrated && layout < LayoutVersion }

// Identity is a store's key layout version and the options that every
// process writing to it must share, as a store records it in Redis.
// Options lists the shared options that are on, in a fixed order, each
// as a word: "orders=top,hot" (WithOrders), the rules that are on,
// "karma" (WithKarma), "cost" (WithVoteCost), "minkarma"
// (WithMinKarma), "votelimit" (WithVoteLimit), "postinterval"
// (WithPostInterval), "repostafter" (WithRepostAfter), "editwindow"
// (WithEditWindow), "commentinterval" (WithCommentInterval), then
// "userpages" (WithUserPages), "uniquelinks" (WithUniqueLinks),
// "votelog" (WithVoteLog) and "events=10000" (WithVoteEvents). A store
// with none of them has no Options. The rules' numbers are not shared
// options but data of the store ([Rules]): processes with other numbers
// in their options share a store, which applies its own.
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
	if len(orders) > 0 {
		id.Options = append(id.Options, layout.OptionOrders+"="+strings.Join(orders, ","))
	}
	id.Options = append(id.Options, c.rules.names()...)
	if c.userPages {
		id.Options = append(id.Options, layout.OptionUserPages)
	}
	if c.uniqueLinks {
		id.Options = append(id.Options, layout.OptionUniqueLinks)
	}
	if c.voteLog {
		id.Options = append(id.Options, layout.OptionVoteLog)
	}
	if c.hasEvents {
		id.Options = append(id.Options, layout.OptionEvents+"="+strconv.FormatInt(c.voteEvents, 10))
	}
	return id
}

// recordIdentity returns the identity a store's record holds: the record
// less the latest end of its suspensions, which follows a newline while
// a user is suspended (lib/moderation.lua lastEnd), and less the marks
// of the moves under way, a move of the vote logs of layout 6
// (logsMovingMark), last, and one of comments of layout 4 (movingMark)
// before it (lib/base.lua unmarked).
func recordIdentity(record string) string {
	id, _, _ := strings.Cut(record, "\n")
	return strings.TrimSuffix(strings.TrimSuffix(id, logsMovingMark), movingMark)
}

// movingMark follows the identity in the record of a store whose
// comments of layout 4 Reconfigure is moving (lib/base.lua MOVING): the
// calls about comments refuse (errMoving), the others run, and Health
// reports it.
const movingMark = " moving"

// logsMovingMark follows the identity (and movingMark) in the record of
// a store whose vote logs of layout 6 Reconfigure is moving into
// journals (lib/base.lua LOGS_MOVING): VotesBy and ReverseVotes refuse
// (errLogsMoving), the others run, and a vote keeps a log not moved yet
// as layout 6 did (lib/moderation.lua logVote6).
const logsMovingMark = " logs moving"

// incompatibleError is the error of a script that found the store's
// record (recorded; "" for none, on a store with data) other than this
// store's identity (here): it wraps ErrIncompatible, and names the
// difference.
type incompatibleError struct{ recorded, here string }

// incompatiblePrefix starts the error lib/base.lua identity raises:
// "<prefix><recorded> | <here> |".
const incompatiblePrefix = "voting: incompatible store: "

func (e *incompatibleError) Error() string {
	return ErrIncompatible.Error() + ": " + difference(e.recorded, e.here, "", "")
}

func (e *incompatibleError) Unwrap() error { return ErrIncompatible }

// rulesPrefix starts the error of a script that finds no numbers for a
// rule that is on (lib/rules.lua storeRules).
const rulesPrefix = "voting: rules: "

// movingPrefix starts the error lib/tree.lua moving raises: a call
// about comments while Reconfigure moves those of a store of layout 4
// (reconfigure.go); errMoving is its error.
const movingPrefix = "voting: comments moving: "

var errMoving = fmt.Errorf("%w: the comments of layout 4 are not all moved to layout %d yet: "+
	"Reconfigure (votectl options) moves them", ErrIncompatible, LayoutVersion)

// logsMovingPrefix starts the error lib/base.lua identity raises for a
// call about the vote logs (VotesBy, ReverseVotes) while Reconfigure
// moves those of a store of layout 6 (reconfigure.go); errLogsMoving is
// its error.
const logsMovingPrefix = "voting: logs moving: "

var errLogsMoving = fmt.Errorf("%w: the vote logs of layout 6 are not all moved to layout %d yet: "+
	"Reconfigure (votectl options) moves them", ErrIncompatible, LayoutVersion)

// parseIncompatible returns the error of msg, a script's error without
// Redis's decoration, where it is lib/base.lua identity's refusal.
// miniredis puts text of its own around it.
func parseIncompatible(msg string) (error, bool) {
	if strings.Contains(msg, movingPrefix) {
		return errMoving, true
	}
	if strings.Contains(msg, logsMovingPrefix) {
		return errLogsMoving, true
	}
	if i := strings.Index(msg, rulesPrefix); i >= 0 {
		return fmt.Errorf("%w: %s", ErrIncompatible, strings.TrimSpace(msg[i+len(rulesPrefix):])), true
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

// ruleAsRecorded turns rule i of ruleList on with the numbers the store
// records, and none of its own (ruleConfig.asRecorded).
func ruleAsRecorded(i int) Option {
	return func(c *config) {
		*ruleList[i].on(&c.rules) = true
		c.rules.asRecorded |= 1 << i
	}
}

// difference names how the recorded identity differs from here, this
// store's: "layout 2, this library reads 3", "karma off here, 1,-1 in the
// store", with the numbers of the rules of recordedRules (the store's
// rules record) and hereRules (this store's words) where it has them
// (withRuleNumbers).
func difference(recorded, here, recordedRules, hereRules string) string {
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
	for _, d := range withRuleNumbers(optionDiffs(r, h), recordedRules, hereRules) {
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

// withRuleNumbers returns diffs with the numbers of the rules in place
// of "on": those of the words of recordedRules (a rules record) for the
// values recorded, and of hereRules (a store's words) for the values
// here, where they have them.
func withRuleNumbers(diffs []optionDiff, recordedRules, hereRules string) []optionDiff {
	values := func(words string) map[string]string {
		m := map[string]string{}
		for _, w := range strings.Fields(words) {
			if name, v, ok := strings.Cut(w, "="); ok {
				m[name] = v
			}
		}
		return m
	}
	rm, hm := values(recordedRules), values(hereRules)
	out := make([]optionDiff, len(diffs))
	for i, d := range diffs {
		if v := rm[d.name]; d.recorded == "on" && v != "" {
			d.recorded = v
		}
		if v := hm[d.name]; d.here == "on" && v != "" {
			d.here = v
		}
		out[i] = d
	}
	return out
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
	layout.OptionOrders: "orders", layout.RuleKarma: "karma", layout.RuleCost: "vote-cost", layout.RuleMinKarma: "min-karma",
	layout.RuleVoteLimit: "vote-limit", layout.RulePostInterval: "post-interval", layout.RuleRepostAfter: "repost-after",
	layout.RuleEditWindow: "edit-window", layout.RuleCommentInterval: "comment-interval",
	layout.OptionUserPages: "user-pages", layout.OptionUniqueLinks: "unique-links", layout.OptionVoteLog: "vote-log",
	layout.OptionEvents: "vote-events",
}

// optionFlag returns the flag of votectl options that sets the shared
// option name to v, an identity's value ("" for off, "on" for an option
// without a value): "-karma 1,-1", "-vote-limit 10/1m", "-karma off",
// "-user-pages=false". It reports false for an option votectl does not
// know.
func optionFlag(name, v string) (string, bool) {
	f, ok := optionFlags[name]
	if !ok {
		return "", false
	}
	switch {
	case v == "on":
		return "-" + f, true
	case v == "" && (name == layout.OptionUserPages || name == layout.OptionUniqueLinks || name == layout.OptionVoteLog):
		return "-" + f + "=false", true
	case v == "":
		return "-" + f + " off", true
	case name == layout.RuleVoteLimit:
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
func reconcile(prefix string, recorded, here Identity, recordedRules, hereRules string) (command, flags string, ok bool) {
	if recorded.Layout != here.Layout {
		return "", "", false
	}
	cmd := []string{"votectl", "-prefix", shellWord(prefix), "options"}
	var start []string
	for _, d := range withRuleNumbers(optionDiffs(recorded, here), recordedRules, hereRules) {
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
// recordedRules and hereRules are the store's rules record and this
// store's words (withRuleNumbers).
type identityError struct{ prefix, recorded, here, recordedRules, hereRules string }

func (e *identityError) Error() string {
	msg := ErrIncompatible.Error() + ": " + difference(e.recorded, e.here, e.recordedRules, e.hereRules)
	r, ok1 := parseIdentity(e.recorded)
	h, ok2 := parseIdentity(e.here)
	if !ok1 || !ok2 {
		return msg
	}
	if cmd, flags, ok := reconcile(e.prefix, r, h, e.recordedRules, e.hereRules); ok {
		msg += fmt.Sprintf(": to write with this process's options, record them first with %q; "+
			"or start the process with the store's: %s", cmd, flags)
	}
	return msg
}

func (e *identityError) Unwrap() error { return ErrIncompatible }

// StoreOptions returns the shared options of a store whose identity is
// id, as options of New: an operator's tool opens a recorded store with
// them ([Store.Recorded]), so that its calls are the store's own. A rule
// named bare ("votelimit") is on with the numbers the store records
// ([Store.Rules]), and none of its own; one with numbers, as identities
// of layouts 3 to 5 wrote them ("votelimit=10,60000"), gets them. An
// identity of layout 3 to 6 gets its options too, for the Reconfigure
// that migrates it. An identity of another layout, or an option it does
// not know, gets an error wrapping [ErrIncompatible].
func (id Identity) StoreOptions() ([]Option, error) {
	if id.Layout != LayoutVersion && !migrates(id.Layout) {
		return nil, fmt.Errorf("%w: layout %d, this library reads %d", ErrIncompatible, id.Layout, LayoutVersion)
	}
	var opts []Option
	for _, word := range id.Options {
		name, value, hasValue := strings.Cut(word, "=")
		if spec, i, ok := ruleNamed(name); ok {
			// A rule, bare (on with the store's numbers) or with its
			// numbers (layouts 3 to 5): the rules record's codec.
			if !hasValue {
				opts = append(opts, ruleAsRecorded(i))
				continue
			}
			w, err := layout.ParseRuleWord(word)
			if err != nil {
				return nil, fmt.Errorf("%w: option %q", ErrIncompatible, word)
			}
			opts = append(opts, ruleOption(i, func(rc *ruleConfig) { spec.set(rc, &Rules{}, w.Numbers) }))
			continue
		}
		if hasValue != (name == layout.OptionOrders || name == layout.OptionEvents) { // the others are flags
			return nil, fmt.Errorf("%w: option %q", ErrIncompatible, word)
		}
		switch name {
		case layout.OptionOrders:
			var orders []Order
			for _, n := range strings.Split(value, ",") {
				o, err := ParseOrder(n)
				if err != nil {
					return nil, fmt.Errorf("%w: option %q", ErrIncompatible, word)
				}
				orders = append(orders, o)
			}
			opts = append(opts, WithOrders(orders...))
		case layout.OptionUserPages:
			opts = append(opts, WithUserPages())
		case layout.OptionUniqueLinks:
			opts = append(opts, WithUniqueLinks())
		case layout.OptionVoteLog:
			opts = append(opts, WithVoteLog())
		case layout.OptionEvents:
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: option %q", ErrIncompatible, word)
			}
			opts = append(opts, WithVoteEvents(n))
		default:
			return nil, fmt.Errorf("%w: option %q", ErrIncompatible, word)
		}
	}
	return opts, nil
}
