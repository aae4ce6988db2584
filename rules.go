package voting

import (
	"context"
	"fmt"
)

// The rules that protect a site (WithMinKarma, WithVoteCost,
// WithVoteLimit, WithPostInterval, WithRepostAfter, WithEditWindow) and
// karma (WithKarma, karma.go) are decided inside the scripts of the
// calls they guard, so concurrent requests cannot get past them. Each is
// off unless its option is given; a store with none of the vote rules
// sends vote.lua the same arguments as before them, and vote() skips
// them with one test.

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

// editRefused is the error of op, an edit by user of the article or
// comment (what) id that the script refused.
func (s *Store) editRefused(op, what, id, user string) error {
	detail := fmt.Sprintf("%s %q is not %q's to edit, or its edit window has passed", what, id, user)
	if s.rules.edit == 0 {
		detail = "editing is off (WithEditWindow)"
	}
	return &opError{op: op, err: ErrNotAllowed, detail: detail}
}
