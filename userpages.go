package voting

import (
	"context"
	"fmt"
)

// A user's pages ([WithUserPages]): the articles a user posted and those
// they upvoted, as Reddit's "submitted" and "upvoted" tabs. Post and Vote
// keep them in their scripts; Delete and Prune unlist a post from its
// poster's page at once, and a read drops the entries of the articles
// that are gone from the page it walks: an article's voters may be too
// many to reach in one short script, or their records expired.

// Submitted returns page (1-based) of user's posts, newest first (by post
// time, ties by id, highest first), in one round trip. It lists the
// latest [MaxUserPageEntries] posts the user made with [WithUserPages],
// never a deleted or pruned one, and every page but the last is full; a
// page past the end is empty. A store without WithUserPages, a bad user
// name or a page below 1 gets [ErrInvalidArgument].
func (s *Store) Submitted(ctx context.Context, user string, page int) ([]Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Submitted", Page: page, HasPage: true}, func(ctx context.Context) ([]Article, error) { return s.Submitted(ctx, user, page) })
	}
	list, _, err := s.userPage(ctx, "submitted", "", s.keys.submittedKey(user), user, page)
	return list, err
}

// SubmittedFor returns page (1-based) of poster's posts, exactly as
// [Store.Submitted] returns it, and user's vote on each of them, as
// [Store.VotesOf] reads it: votes[i] is the vote on list[i], [NoVote]
// where there is none or the article's voting has closed. The page and
// the votes are one script, one round trip, one atomic read. A user
// name that VotesOf refuses gets [ErrInvalidArgument], as does what
// Submitted refuses.
func (s *Store) SubmittedFor(ctx context.Context, user, poster string, page int) ([]Article, []VoteType, error) {
	if s.hooked(ctx) {
		return observeView(ctx, s, Call{Op: "SubmittedFor", Page: page, HasPage: true}, func(ctx context.Context) ([]Article, []VoteType, error) {
			return s.SubmittedFor(ctx, user, poster, page)
		})
	}
	const op = "submitted for"
	if err := checkName("user", user); err != nil {
		return nil, nil, opErr(op, err)
	}
	return s.userPage(ctx, op, user, s.keys.submittedKey(poster), poster, page)
}

// Upvoted returns page (1-based) of the articles user upvotes, latest
// upvote first (by the store's clock at the vote, to the second; ties
// by id, highest first), in one round trip. A post counts as its poster's
// upvote. Cancelling or switching the upvote removes the article;
// upvoting it again lists it anew. It lists the latest
// [MaxUserPageEntries] upvotes cast with [WithUserPages], never a
// deleted or pruned article, and every page but the last is full; a page
// past the end is empty. A store without WithUserPages, a bad user name
// or a page below 1 gets [ErrInvalidArgument].
//
// A read drops from the list the entries of deleted articles that it
// walks past, so it may write; it walks at most MaxUserPageEntries
// entries.
func (s *Store) Upvoted(ctx context.Context, user string, page int) ([]Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Upvoted", Page: page, HasPage: true}, func(ctx context.Context) ([]Article, error) { return s.Upvoted(ctx, user, page) })
	}
	list, _, err := s.userPage(ctx, "upvoted", "", s.keys.upvotedKey(user), user, page)
	return list, err
}

// UpvotedFor returns page (1-based) of the articles voter upvotes,
// exactly as [Store.Upvoted] returns it, and user's vote on each of
// them, as [Store.VotesOf] reads it: votes[i] is the vote on list[i],
// [NoVote] where there is none or the article's voting has closed (a
// voter reading their own page sees Upvote on each article still open).
// The page and the votes are one script, one round trip, one atomic
// read. A user name that VotesOf refuses gets [ErrInvalidArgument], as
// does what Upvoted refuses.
func (s *Store) UpvotedFor(ctx context.Context, user, voter string, page int) ([]Article, []VoteType, error) {
	if s.hooked(ctx) {
		return observeView(ctx, s, Call{Op: "UpvotedFor", Page: page, HasPage: true}, func(ctx context.Context) ([]Article, []VoteType, error) {
			return s.UpvotedFor(ctx, user, voter, page)
		})
	}
	const op = "upvoted for"
	if err := checkName("user", user); err != nil {
		return nil, nil, opErr(op, err)
	}
	return s.userPage(ctx, op, user, s.keys.upvotedKey(voter), voter, page)
}

// userPage reads page of owner's list at key, with viewer's votes
// (none for viewer "").
func (s *Store) userPage(ctx context.Context, op, viewer, key, owner string, page int) ([]Article, []VoteType, error) {
	start, err := s.userPageStart(op, owner, page)
	if err != nil {
		return nil, nil, err
	}
	if start < 0 {
		return []Article{}, []VoteType{}, nil
	}
	return s.readRowsFor(ctx, op, userPageScript, s.withViewer(s.userPageArgs(key, start), viewer), viewer)
}

// userPageArgs lays out user_page.lua's arguments, to read a page of a
// user's list at key: start live entries skipped, then up to the page
// size. KEYS[1..2]: the list, the score ordering. ARGV[1]: the
// articles' prefix; ARGV[2..3]: start, the page size; ARGV[4..5]: the
// viewer (withViewer).
func (s *Store) userPageArgs(key string, start int) []interface{} {
	k := s.keys
	return []interface{}{key, k.orderingKey("score"), k.article, start, s.pageSize}
}

// userPageStart checks a read of page of user's list of op, and returns
// how many live entries the page skips: -1 for a page past the last
// entry a list keeps, empty without a round trip.
func (s *Store) userPageStart(op, user string, page int) (int, error) {
	switch {
	case !s.userPages:
		return 0, opErr(op, fmt.Errorf("%w: user pages are not enabled (WithUserPages)", ErrInvalidArgument))
	case page < 1:
		return 0, opErr(op, fmt.Errorf("%w: page %d is below 1", ErrInvalidArgument, page))
	}
	if err := checkName("user", user); err != nil {
		return 0, opErr(op, err)
	}
	if page-1 >= (MaxUserPageEntries+s.pageSize-1)/s.pageSize {
		return -1, nil
	}
	return (page - 1) * s.pageSize, nil
}
