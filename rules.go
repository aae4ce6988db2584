package voting

import (
	"context"
	"fmt"
	"time"
)

// The rules that protect a site (WithMinKarma, WithVoteCost,
// WithVoteLimit, WithPostInterval, WithCommentInterval, WithRepostAfter,
// WithEditWindow) and karma (WithKarma, karma.go) are decided inside the
// scripts of the calls they guard, so concurrent requests cannot get
// past them. Each is off unless its option is given; a store with none of
// the vote rules sends vote.lua the same arguments as before them, and
// vote() skips them with one test.
//
// Whether a rule is on is a shared option, in the store's identity
// (identity.go); its numbers are data of the store, in the rules record
// (keys.go rules; lib/rules.lua storeRules), which SetRules changes for
// every process at its next call. A store's options give the numbers of
// a new store, and of a rule that Reconfigure turns on.

// Rules returns the numbers of the store's rules, as its calls apply
// them: the store's own, recorded in Redis, and this store's options'
// for a rule on that the store has no numbers for yet (an empty store
// before its first Post). It reads them in one round trip, from the
// read pool where the store has one ([WithReadPool]). A store whose
// options name a rule ([Identity.StoreOptions]) that neither has numbers
// for gets its other rules and an error wrapping [ErrIncompatible].
func (s *Store) Rules(ctx context.Context) (Rules, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Rules"}, s.Rules)
	}
	const op = "rules"
	reply, err := s.eval(ctx, rulesGetScript, []interface{}{s.keys.rules, s.rules.want})
	rest, err := s.rest(op, "", reply, err)
	if err != nil {
		return Rules{}, err
	}
	return s.parseRulesReply(op, rest)
}

// parseRulesReply reads the rules record of a script's reply.
func (s *Store) parseRulesReply(op string, rest []interface{}) (Rules, error) {
	var text string
	if err := scan(statusOK, rest, &text); err != nil {
		return Rules{}, opErr(op, err)
	}
	r, lacking, err := parseRules(text)
	if err != nil {
		return Rules{}, opErr(op, err)
	}
	if lacking != "" {
		return r, &opError{op: op, err: ErrIncompatible, detail: fmt.Sprintf("the store records no numbers for %s: SetRules (votectl options) sets them", lacking)}
	}
	return r, nil
}

// SetRules changes the numbers of rules that are on, for every process
// of the store from its next call, in one round trip, and returns the
// store's rules after. It takes the rules' options with their new numbers:
//
//	rules, err := s.SetRules(ctx, voting.WithVoteLimit(6, time.Minute), voting.WithKarma(1, -2))
//
// The rules it is not given keep their numbers. Each option must be one
// of a rule ([WithKarma], [WithVoteCost], [WithMinKarma],
// [WithVoteLimit], [WithPostInterval], [WithCommentInterval],
// [WithRepostAfter], [WithEditWindow]) with numbers in its range: else
// an error wrapping [ErrInvalidArgument], and nothing changes. A rule
// that is off in this store gets [ErrNotAllowed]: turning a rule on or
// off changes the store's identity, which is [Store.Reconfigure]'s. Like
// every write, it needs the store's identity recorded as this store's
// ([ErrIncompatible]); in an empty store it records it, as a first Post
// would. Calls already running finish under the numbers they read.
//
// New numbers count from then on; what was done before keeps what the
// old ones made of it. A vote cast before and cancelled or switched
// after moves karma and cost back by the new numbers, not by what it
// moved (the store keeps each vote's direction, not its worth): karma is
// exactly the sum of the standing votes only while the numbers stay. A
// span raised (a vote limit's, an interval, the repost span) holds the
// calls made before the raise for as long as their keys last: twice the
// span they were made under and a minute (docs/OPERATIONS.md, "Clocks").
func (s *Store) SetRules(ctx context.Context, opts ...Option) (Rules, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "SetRules"}, func(ctx context.Context) (Rules, error) { return s.SetRules(ctx, opts...) })
	}
	const op = "set rules"
	if len(opts) == 0 {
		return Rules{}, opErr(op, fmt.Errorf("%w: no rule given", ErrInvalidArgument))
	}
	var set ruleConfig
	for i, o := range opts {
		var probe config
		if o != nil {
			o(&probe)
		}
		if o == nil || probe.rules == (ruleConfig{}) {
			return Rules{}, opErr(op, fmt.Errorf("%w: option %d is not a rule's: SetRules takes WithKarma, WithVoteCost, WithMinKarma, "+
				"WithVoteLimit, WithPostInterval, WithCommentInterval, WithRepostAfter and WithEditWindow", ErrInvalidArgument, i+1))
		}
		for _, spec := range ruleList {
			if *spec.on(&probe.rules) {
				*spec.on(&set) = true
				spec.set(&set, &Rules{}, spec.get(&probe.rules))
			}
		}
	}
	if err := set.validNumbers(); err != nil {
		return Rules{}, opErr(op, err)
	}
	for i, spec := range ruleList {
		if *spec.on(&set) && !*spec.on(&s.rules.config) {
			return Rules{}, &opError{op: op, err: ErrNotAllowed, detail: fmt.Sprintf("%s is off in this store (%s): "+
				"turning a rule on is Reconfigure's (votectl options)", spec.name, ruleOptionNames[i])}
		}
	}
	reply, err := s.eval(ctx, rulesSetScript, []interface{}{s.keys.rules, s.rules.want, set.words()})
	status, rest, late, err := decodeWrite(op, reply, err)
	if err != nil {
		return Rules{}, err
	}
	if status != statusOK {
		return Rules{}, statusErr(op, status, "")
	}
	r, err := s.parseRulesReply(op, rest)
	if err != nil {
		return r, err
	}
	return r, replicationErr(op, late)
}

// Edit changes the title and link of the article, for its poster until
// the edit window ([WithEditWindow]) after its Posted time, on the
// store's clock, in one round trip. It returns the article as edited. Anyone else, a call
// after the window, or a store without WithEditWindow gets
// [ErrNotAllowed]; an unknown article gets [ErrNotFound]. Title and link
// are checked as Post checks them. With [WithUniqueLinks] or
// [WithRepostAfter] the link's claim follows the change: a new link that
// Post would refuse gets that article and [ErrDuplicate], and the old one
// is freed. A refused Edit changes nothing.
func (s *Store) Edit(ctx context.Context, id, user, title, link string) (Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Edit"}, func(ctx context.Context) (Article, error) { return s.Edit(ctx, id, user, title, link) })
	}
	const op = "edit"
	if err := s.text.post("user", user, title, link); err != nil {
		return Article{}, opErr(op, err)
	}
	if !canonicalID(id) {
		return Article{}, notFound(op, id)
	}
	reply, err := s.eval(ctx, editScript, s.editArgs(id, user, title, link, s.now()))
	status, rest, late, err := decodeWrite(op, reply, err)
	if err != nil {
		return Article{}, err
	}
	switch status {
	case statusOK, statusDup:
		list, err := parseArticles(rest)
		if err != nil || len(list) != 1 {
			return Article{}, opErr(op, fmt.Errorf("edit reply: %d rows, %v", len(list), err))
		}
		if status == statusDup {
			return list[0], &opError{op: op, err: ErrDuplicate, detail: fmt.Sprintf("%q is article %q", link, list[0].ID)}
		}
		return list[0], replicationErr(op, late)
	case statusNotAllowed:
		return Article{}, s.editRefused(op, "article", id, user)
	}
	return Article{}, statusErr(op, status, id)
}

// editArgs lays out edit.lua's arguments: the edit window and the
// repost span are the store's rules, read from its record (the
// store's words: "" for none, off at any clock). KEYS[1]: the score
// ordering (the store's slot). ARGV[1..4]: id, user, title, link;
// ARGV[5..6]: now in ms, unique links ("1"); ARGV[7..8]: the rules record
// and the store's words; ARGV[9..10]: the prefixes of articles and links.
func (s *Store) editArgs(id, user, title, link string, t time.Time) []interface{} {
	k := s.keys
	return []interface{}{k.orderingKey("score"), id, user, title, link, t.UnixMilli(),
		flag(s.uniqueLinks), k.rules, s.rules.want, k.article, k.link}
}

// editRefused is the error of op, an edit by user of the article or
// comment (what) id that the script refused.
func (s *Store) editRefused(op, what, id, user string) error {
	detail := fmt.Sprintf("%s %q is not %q's to edit, or its edit window has passed", what, id, user)
	if !s.rules.edit {
		detail = "editing is off (WithEditWindow)"
	}
	return &opError{op: op, err: ErrNotAllowed, detail: detail}
}
