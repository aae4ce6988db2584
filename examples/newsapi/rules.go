package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/votekit/voting"
)

// The service's karma and rules: GET /users, PATCH /articles/{id}, and
// the flags that turn each of the store's rules on.

// ruleFlags are the settings of karma and the rules, from their flags;
// each is off at its zero value.
type ruleFlags struct {
	karma, voteCost, minKarma *[2]int64     // -karma, -vote-cost, -min-karma: UP,DOWN
	voteLimit                 int           // -vote-limit N/DURATION
	votePer                   time.Duration //
	postInterval              time.Duration // -post-interval
	commentInterval           time.Duration // -comment-interval
	repostAfter               time.Duration // -repost-after
	editWindow                time.Duration // -edit-window
}

// register defines the flags of f on fs.
func (f *ruleFlags) register(fs *flag.FlagSet) {
	fs.Func("karma", "keep karma: `UP,DOWN` points a vote gives the poster (e.g. 1,-1); GET /users lists it", pairFlag(&f.karma))
	fs.Func("vote-cost", "with -karma, karma each standing vote costs the voter: `UP,DOWN` (e.g. 1,6)", pairFlag(&f.voteCost))
	fs.Func("min-karma", "with -karma, the least karma to upvote and to downvote: `UP,DOWN` (e.g. 0,30); less gets 403", pairFlag(&f.minKarma))
	fs.Func("vote-limit", "at most N votes per user in any span of DURATION: `N/DURATION` (e.g. 100/24h); more get 429", func(s string) error {
		n, d, ok := strings.Cut(s, "/")
		var err error
		if f.voteLimit, err = strconv.Atoi(n); err != nil || !ok {
			return fmt.Errorf("%q is not N/DURATION", s)
		}
		if f.votePer, err = time.ParseDuration(d); err != nil {
			return err
		}
		return nil
	})
	fs.DurationVar(&f.postInterval, "post-interval", 0, "the least time between two posts of one user (e.g. 15m); sooner gets 429")
	fs.DurationVar(&f.commentInterval, "comment-interval", 0, "the least time between two comments of one user (e.g. 30s); sooner gets 429")
	fs.DurationVar(&f.repostAfter, "repost-after", 0, "a link may be posted again this long after (e.g. 48h); sooner gets 409 and the article")
	fs.DurationVar(&f.editWindow, "edit-window", 0, "how long a poster may PATCH their article or comment (e.g. 15m); later, or anyone else, gets 403")
}

// pairFlag parses "UP,DOWN" into *p.
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

// options returns the store's options of f.
func (f ruleFlags) options() []voting.Option {
	var opts []voting.Option
	if f.karma != nil {
		opts = append(opts, voting.WithKarma(f.karma[0], f.karma[1]))
	}
	if f.voteCost != nil {
		opts = append(opts, voting.WithVoteCost(f.voteCost[0], f.voteCost[1]))
	}
	if f.minKarma != nil {
		opts = append(opts, voting.WithMinKarma(f.minKarma[0], f.minKarma[1]))
	}
	if f.voteLimit != 0 || f.votePer != 0 {
		opts = append(opts, voting.WithVoteLimit(f.voteLimit, f.votePer))
	}
	if f.postInterval != 0 {
		opts = append(opts, voting.WithPostInterval(f.postInterval))
	}
	if f.commentInterval != 0 {
		opts = append(opts, voting.WithCommentInterval(f.commentInterval))
	}
	if f.repostAfter != 0 {
		opts = append(opts, voting.WithRepostAfter(f.repostAfter))
	}
	if f.editWindow != 0 {
		opts = append(opts, voting.WithEditWindow(f.editWindow))
	}
	return opts
}

// userKarma is a user and their karma, as GET /users shows them.
type userKarma struct {
	User  string `json:"user"`
	Karma int64  `json:"karma"`
}

// GET /users?page=1: users by karma, highest first, ties by name.
func (a *api) listUsers(w http.ResponseWriter, r *http.Request) error {
	if !a.karma {
		return featureOff("karma is off", "-karma")
	}
	n, err := pageNumber(r.URL.Query().Get("page"))
	if err != nil {
		return err
	}
	list, err := a.store.TopUsers(r.Context(), n)
	if err != nil {
		return err
	}
	users := make([]userKarma, len(list)) // [] in JSON, not null
	for i, u := range list {
		users[i] = userKarma{u.User, u.Karma}
	}
	a.reply(w, http.StatusOK, struct {
		Page  int         `json:"page"`
		Users []userKarma `json:"users"`
	}{n, users})
	return nil
}

// decodeEdit reads the body of an edit (PATCH of an article or a
// comment) into v, a pointer: a service without -edit-window gets 404
// feature_off before the body is read.
func (a *api) decodeEdit(w http.ResponseWriter, r *http.Request, v any) error {
	if a.rules.editWindow == 0 {
		return featureOff("editing is off", "-edit-window")
	}
	return decode(w, r, v)
}

// PATCH /articles/{id} {"title": "...", "link": "..."}: the poster
// changes the title and link within the edit window.
func (a *api) editArticle(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		User  string `json:"user"`
		Title string `json:"title"`
		Link  string `json:"link"`
	}
	if err := a.decodeEdit(w, r, &req); err != nil {
		return err
	}
	user, err := c.actAs(`"user"`, req.User)
	if err != nil {
		return err
	}
	if err := checkArticle(req.Link); err != nil {
		return err
	}
	art, err := a.store.Edit(r.Context(), r.PathValue("id"), user, req.Title, req.Link)
	if errors.Is(err, voting.ErrDuplicate) {
		a.duplicate(w, art, err)
		return nil
	}
	return a.edited(r.Context(), w, "an article", toArticle(art), err)
}

// edited replies to an edit of what ("an article", "a comment") that the
// store answered with err: 200 with v, the item as edited; a refusal
// (ErrNotAllowed) names the rule, with the store's numbers, 403.
func (a *api) edited(ctx context.Context, w http.ResponseWriter, what string, v any, err error) error {
	if errors.Is(err, voting.ErrNotAllowed) {
		return forbidden(err, "only its poster may edit %s, within %v of posting it", what, a.storeRules(ctx).EditWindow)
	}
	if err != nil {
		return err
	}
	a.reply(w, http.StatusOK, v)
	return nil
}

// voteError is the error of a vote v that the store refused with err:
// for a refusal of -min-karma (the only rule that refuses a vote), the
// karma v needs, as the store's rules say; err itself otherwise.
func (a *api) voteError(ctx context.Context, err error, v voting.VoteType) error {
	if !errors.Is(err, voting.ErrNotAllowed) || a.rules.minKarma == nil {
		return err
	}
	rules := a.storeRules(ctx)
	what, least := "an upvote", rules.MinKarmaToUpvote
	if v == voting.Downvote {
		what, least = "a downvote", rules.MinKarmaToDownvote
	}
	return forbidden(err, "%s needs at least %d karma, and the voter has less", what, least)
}

// storeRules returns the numbers of the store's rules, which are data of
// the store (voting.Store.SetRules, votectl options) and may differ from
// the flags', which only gave a new store its numbers; the flags' where
// the store cannot tell, a refusal's reason being worth no failure.
func (a *api) storeRules(ctx context.Context) voting.Rules {
	if r, err := a.store.Rules(ctx); err == nil {
		return r
	}
	r := voting.Rules{EditWindow: a.rules.editWindow}
	if m := a.rules.minKarma; m != nil {
		r.MinKarmaToUpvote, r.MinKarmaToDownvote = m[0], m[1]
	}
	return r
}

// setRetryAfter sets the Retry-After header of a reply to a rate-limited
// call, in whole seconds rounded up.
func setRetryAfter(w http.ResponseWriter, err error) {
	if d := voting.RetryAfter(err); d > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(retrySeconds(d), 10))
	}
}
