package voting

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Comment threads (issue 29): comments on an article and replies to
// them, voted with the same engine as articles. Each call is one script
// in one round trip, Comment after a PING, DeleteComment in bounded
// steps past a long chain of deleted ancestors (lua/comment*.lua,
// lua/thread.lua, with the helpers of lua/lib/tree.lua and
// lua/lib/removal.lua); the layout is docs/LAYOUT.md's ("Keys",
// "Records").

// Comment posts a reply by poster to the article articleID, or, with
// parentID not "", to its comment parentID, and records the poster's own
// upvote, as Post does: the comment starts with one upvote. Ids come
// from a counter of their own ("1", "2", ...); a refused Comment takes
// none. The body must not be blank, is kept byte for byte and may be up
// to [MaxCommentLen] bytes of text without control characters but
// newlines and tabs, or bidi controls ([WithRawText] relaxes that); the
// poster is checked as Post's. Commenting is open while the article's
// voting is ([ErrVotingClosed] after). An unknown article or parent gets
// [ErrNotFound]; a parent of another article, or one at depth
// [MaxCommentDepth]-1, gets [ErrInvalidArgument]. A deleted parent may be
// replied to. With
// [WithCommentInterval], a comment too soon after the poster's last gets
// [ErrRateLimited] ([RetryAfter]). A refused Comment changes nothing. A
// Comment whose reply is lost may or may not have posted, and returns an
// error wrapping [ErrUnknownOutcome], as Post does.
func (s *Store) Comment(ctx context.Context, articleID, parentID, poster, body string) (Comment, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Comment"}, func(ctx context.Context) (Comment, error) {
			return s.Comment(ctx, articleID, parentID, poster, body)
		})
	}
	const op = "comment"
	if err := s.text.comment("poster", poster, body); err != nil {
		return Comment{}, opErr(op, err)
	}
	if !canonicalID(articleID) {
		return Comment{}, notFound(op, articleID)
	}
	if parentID != "" && !canonicalID(parentID) {
		return Comment{}, commentNotFound(op, parentID)
	}
	t := s.now()
	c, status, rest, err := s.writeComment(ctx, op, commentScript, s.commentArgs(articleID, parentID, poster, body, t))
	if err != nil || status == statusOK {
		return c, err
	}
	switch status {
	case statusRateLimited:
		return Comment{}, opErr(op, parseRetry(rest))
	case statusNotAllowed: // a suspended poster (moderation.go)
		return Comment{}, opErr(op, parseRefused(rest))
	case statusNotFound:
		if len(rest) == 1 {
			return Comment{}, commentNotFound(op, parentID)
		}
		return Comment{}, notFound(op, articleID)
	case statusInvalid:
		return Comment{}, invalidErr(op, rest)
	}
	return Comment{}, statusErr(op, status, articleID)
}

// commentArgs lays out comment.lua's arguments: the comment, the store's
// window, weight and comment orderings, the key prefixes, and the
// comment interval (WithCommentInterval) at the time t: the poster's
// last-comment key, the rules record and the store's words. KEYS[1..2]:
// the comment id counter, the live comment counts. ARGV[1..4]: article,
// parent, poster, body; ARGV[5..9]: now, window, weight, orderings,
// MaxCommentDepth; ARGV[10..15]: the prefixes of articles, voter records,
// comments, threads, replies, comment voter records; ARGV[16]: the
// commented pages' prefix, or ""; ARGV[17..18]: now in ms, the
// last-comment key or ""; ARGV[19..20]: the rules record, the store's
// words.
func (s *Store) commentArgs(aid, parent, poster, body string, t time.Time) []interface{} {
	k := s.keys
	commented, last := "", ""
	if s.userPages {
		commented = k.commented
	}
	if s.rules.commentInterval {
		last = k.lastCommentKey(poster)
	}
	return []interface{}{k.cseq, k.comments,
		aid, parent, poster, body, t.Unix(), s.window, s.weight, s.commentOrderings, MaxCommentDepth,
		k.article, k.voted, k.comment, k.thread, k.kids, k.cvoted, commented,
		t.UnixMilli(), last, k.rules, s.rules.want}
}

// VoteComment records user's vote v on the comment, exactly as Vote
// does on an article: [Upvote], [Downvote], or [CancelVote] to take it
// back ([NoVote], the zero value, gets [ErrInvalidVote]); it
// replaces the user's previous vote, which the result reports, and
// voting the same way again changes nothing. Voting is open for the
// store's vote window after the comment was posted ([ErrVotingClosed]
// after, or once the article's comment voter records expired). The
// poster's own upvote is recorded with the comment. [WithKarma],
// [WithVoteCost] and [WithMinKarma] apply as to article votes, moving
// the comment poster's karma, and [WithVoteLimit] counts comment votes
// with article votes. The result's Points is the comment's Upvotes −
// Downvotes, as Reddit shows a comment's score; its Score, an article's,
// is 0. A malformed or unknown
// comment id, or a deleted comment kept for its replies, gets
// [ErrNotFound]. A refused vote changes nothing.
func (s *Store) VoteComment(ctx context.Context, user, commentID string, v VoteType) (VoteResult, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "VoteComment"}, func(ctx context.Context) (VoteResult, error) {
			return s.VoteComment(ctx, user, commentID, v)
		})
	}
	const op = "vote comment"
	if err := s.text.vote(op, user, commentID, v, commentNotFound); err != nil {
		return VoteResult{}, err
	}
	t := s.now()
	reply, err := s.eval(ctx, commentVoteScript, s.appendVoteRules(s.commentVoteArgs(user, commentID, v, t.Unix()), t))
	r, err := voteReply(op, commentID, reply, err, commentNotFound)
	r.Score = 0 // the script's score field holds the points, which r.Points has
	return r, err
}

// commentVoteArgs lays out comment_vote.lua's arguments before the vote
// rules (appendVoteRules). KEYS[1]: the comment. ARGV[1..4]: id, user,
// the vote (voteArg), now (Unix seconds); ARGV[5..7]: the prefixes of
// comments, comment voter records, replies; ARGV[8]: the vote's line
// in the voter's vote log (logLine), or "".
func (s *Store) commentVoteArgs(user, id string, v VoteType, now int64) []interface{} {
	k := s.keys
	args := make([]interface{}, 0, 9+1+len(s.rules.vote))
	return append(args, k.commentKey(id), id, user, voteArg(v), now, k.comment, k.cvoted, k.kids, s.logLine(true, id, v, now))
}

// Thread returns the article's comments as a tree, flattened in display
// order: each comment is followed by its replies, siblings in order.
// order is Best, Top, TimeDesc (newest first) or TimeAsc (oldest
// first), or Hot, Controversial or ScoreDesc where the store's
// [WithOrders] has them; equal values are ordered by id, newest first
// (oldest first in TimeAsc). Time order is the order in which Redis
// received the comments, which is that of their ids. The tree is filled
// best-first, as Reddit's CommentOrderer does, up to limit comments (1
// to [MaxThread]) and [MaxThreadDepth] levels: the best of the replies
// of the comments taken so far is taken next. More counts the live
// descendants of each comment that the reply leaves out. Deleted
// comments kept for their replies are in it (Deleted set), and never
// counted. An unknown article gets [ErrNotFound]; a limit out of range
// or an order not kept, [ErrInvalidArgument]. Its work is bounded by
// limit, not by the size of the thread.
func (s *Store) Thread(ctx context.Context, articleID string, order Order, limit int) ([]ThreadComment, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Thread", Order: order, HasOrder: true},
			func(ctx context.Context) ([]ThreadComment, error) { return s.Thread(ctx, articleID, order, limit) })
	}
	list, _, err := s.thread(ctx, "thread", "", "a", articleID, order, limit)
	return list, err
}

// ThreadFor returns the comments of the article, exactly as
// [Store.Thread] returns them, and user's vote on each of them, as
// [Store.CommentVotesOf] reads it: votes[i] is the vote on list[i],
// [NoVote] where there is none, or the comment's voting closed and its
// voter records expired; a comment's poster reads Upvote until they
// change it, but for a comment deleted and kept for its replies, whose
// poster no read names. The thread and
// the votes are one script, one round trip, one atomic read. A user
// name that CommentVotesOf refuses gets [ErrInvalidArgument], as do the
// limits and orders Thread refuses; an unknown article, [ErrNotFound].
func (s *Store) ThreadFor(ctx context.Context, user, articleID string, order Order, limit int) ([]ThreadComment, []VoteType, error) {
	if s.hooked(ctx) {
		return observeView(ctx, s, Call{Op: "ThreadFor", Order: order, HasOrder: true}, func(ctx context.Context) ([]ThreadComment, []VoteType, error) {
			return s.ThreadFor(ctx, user, articleID, order, limit)
		})
	}
	const op = "thread for"
	if err := checkName("user", user); err != nil {
		return nil, nil, opErr(op, err)
	}
	return s.thread(ctx, op, user, "a", articleID, order, limit)
}

// Replies returns the subtree under the comment commentID, as Thread
// returns an article's: the comment itself is not in it, its direct
// replies have Depth 0, and MaxThreadDepth levels are counted from them.
// A malformed or unknown comment id gets [ErrNotFound].
func (s *Store) Replies(ctx context.Context, commentID string, order Order, limit int) ([]ThreadComment, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Replies", Order: order, HasOrder: true},
			func(ctx context.Context) ([]ThreadComment, error) { return s.Replies(ctx, commentID, order, limit) })
	}
	list, _, err := s.thread(ctx, "replies", "", "c", commentID, order, limit)
	return list, err
}

// RepliesFor returns the subtree under the comment, exactly as
// [Store.Replies] returns it, and user's vote on each of its comments,
// as [ThreadFor] does, in one script, one round trip. A user name that
// CommentVotesOf refuses gets [ErrInvalidArgument], as do the limits and
// orders Replies refuses; a malformed or unknown comment id,
// [ErrNotFound].
func (s *Store) RepliesFor(ctx context.Context, user, commentID string, order Order, limit int) ([]ThreadComment, []VoteType, error) {
	if s.hooked(ctx) {
		return observeView(ctx, s, Call{Op: "RepliesFor", Order: order, HasOrder: true}, func(ctx context.Context) ([]ThreadComment, []VoteType, error) {
			return s.RepliesFor(ctx, user, commentID, order, limit)
		})
	}
	const op = "replies for"
	if err := checkName("user", user); err != nil {
		return nil, nil, opErr(op, err)
	}
	return s.thread(ctx, op, user, "c", commentID, order, limit)
}

// checkThread validates the order and limit of a Thread or Replies.
func (s *Store) checkThread(order Order, limit int) error {
	switch {
	case limit < 1 || limit > MaxThread:
		return fmt.Errorf("%w: limit %d is not in [1, %d]", ErrInvalidArgument, limit, MaxThread)
	case order == ScoreAsc, !order.Valid():
		return fmt.Errorf("%w: order %v is not a comment order", ErrInvalidArgument, order)
	case (order == Hot || order == Controversial || order == ScoreDesc) && !s.commentOrders[order]:
		return fmt.Errorf("%w: order %v is not enabled for comments (WithOrders)", ErrInvalidArgument, order)
	}
	return nil
}

// thread is the body of Thread (kind "a", id an article's) and Replies
// (kind "c", id a comment's), and of ThreadFor and RepliesFor with
// user's votes (none for user ""), op theirs: a malformed or unknown id
// gets [ErrNotFound], naming the comment in Replies.
func (s *Store) thread(ctx context.Context, op, user, kind, id string, order Order, limit int) ([]ThreadComment, []VoteType, error) {
	if err := s.checkThread(order, limit); err != nil {
		return nil, nil, opErr(op, err)
	}
	var rest []interface{}
	err := notFound(op, id)
	if canonicalID(id) {
		rest, err = s.call(ctx, op, threadScript, id, s.threadForArgs(user, kind, id, order, limit))
	}
	if err != nil {
		if kind == "c" && errors.Is(err, ErrNotFound) {
			return nil, nil, commentNotFound(op, id)
		}
		return nil, nil, err
	}
	if user == "" {
		list, err := parseComments(rest)
		if err != nil {
			return nil, nil, opErr(op, err)
		}
		return displayOrder(list), nil, nil
	}
	list, votes, err := parseThreadFor(rest)
	if err != nil {
		return nil, nil, opErr(op, err)
	}
	return list, votes, nil
}

// threadArgs lays out thread.lua's arguments: the root, an article
// (kind "a") or a comment ("c"), and the ordering of order. KEYS[1]: the
// root's record. ARGV[1..4]: kind, id, the ordering, desc; ARGV[5..6]:
// limit, MaxThreadDepth; ARGV[7..9]: the prefixes of comments, replies,
// threads.
func (s *Store) threadArgs(kind, id string, order Order, limit int) []interface{} {
	k := s.keys
	root := k.articleKey(id)
	if kind == "c" {
		root = k.commentKey(id)
	}
	name, desc := order.ordering()
	return []interface{}{root, kind, id, name, flag(desc), limit, MaxThreadDepth, k.comment, k.kids, k.thread}
}

// threadForArgs lays out thread.lua's arguments with user, whose votes
// its reply then carries after the rows (ThreadFor, RepliesFor): ARGV[10..11],
// the comment voter records' prefix and the user; a plain read (user "")
// sends threadArgs's alone.
func (s *Store) threadForArgs(user, kind, id string, order Order, limit int) []interface{} {
	args := s.threadArgs(kind, id, order, limit)
	if user == "" {
		return args
	}
	return append(args, s.keys.cvoted, user)
}

// parseThreadFor parses thread.lua's reply with a user's votes: the
// rows, in the order taken, then a vote a row in that order. It returns
// the comments in display order (displayOrder), each with its vote.
func parseThreadFor(rest []interface{}) ([]ThreadComment, []VoteType, error) {
	list, taken, err := parseWithVotes(rest, 3, parseComments)
	if err != nil {
		return nil, nil, err
	}
	of := make(map[string]VoteType, len(list))
	for i, c := range list {
		of[c.ID] = taken[i]
	}
	list = displayOrder(list)
	votes := make([]VoteType, len(list))
	for i, c := range list {
		votes[i] = of[c.ID]
	}
	return list, votes, nil
}

// parseComments parses rows of comments, {id, depth, record}... each
// (lua/lib/tree.lua appendRow).
func parseComments(rows []interface{}) ([]ThreadComment, error) {
	if len(rows)%3 != 0 {
		return nil, fmt.Errorf("reply of %d fields, not rows of 3", len(rows))
	}
	list := make([]ThreadComment, len(rows)/3)
	for i := range list {
		var f [3]string
		for j := range f {
			b, ok := rows[3*i+j].([]byte)
			if !ok {
				return nil, fmt.Errorf("comment row %d: unexpected %T", i, rows[3*i+j])
			}
			f[j] = string(b)
		}
		depth, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, fmt.Errorf("comment %q depth: %w", f[0], err)
		}
		if err := parseCommentRecord(f[2], &list[i].Comment); err != nil {
			return nil, fmt.Errorf("comment %q: %w", f[0], err)
		}
		list[i].ID, list[i].Depth = f[0], depth
	}
	return list, nil
}

// parseOneComment parses a reply of one comment row.
func parseOneComment(rest []interface{}) (ThreadComment, error) {
	list, err := parseComments(rest)
	if err != nil {
		return ThreadComment{}, err
	}
	if len(list) != 1 {
		return ThreadComment{}, fmt.Errorf("reply of %d comments, want 1", len(list))
	}
	return list[0], nil
}

// CommentsByID returns the comments with the given ids, in the order of
// ids, in one round trip, skipping ids that name no comment (never
// posted, removed, or malformed). At most [MaxBatch] ids.
func (s *Store) CommentsByID(ctx context.Context, ids []string) ([]Comment, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "CommentsByID", Count: len(ids)}, func(ctx context.Context) ([]Comment, error) { return s.CommentsByID(ctx, ids) })
	}
	return readByID(ctx, "comments by id", ids, s.comments)
}

// comments reads the comments ids, canonical, under op.
func (s *Store) comments(ctx context.Context, op string, ids []string) ([]Comment, error) {
	rest, err := s.call(ctx, op, commentsScript, "", s.commentsArgs(ids))
	if err != nil {
		return nil, err
	}
	return plainComments(op, rest)
}

// commentsArgs lays out comments.lua's arguments. KEYS[1]: the comment
// id counter (the store's slot). ARGV[1]: the comments' prefix;
// ARGV[2..]: the ids.
func (s *Store) commentsArgs(ids []string) []interface{} {
	args := make([]interface{}, 0, 2+len(ids))
	return appendStrings(append(args, s.keys.cseq, s.keys.comment), ids)
}

// CommentVotesOf returns user's vote on each of the comments ids, in one
// round trip: votes[i] is the vote on ids[i], [NoVote] where there is
// none, the comment's voting closed and its voter records expired, or
// no such comment exists (a malformed id included). A comment's poster
// reads Upvote, their own vote recorded with the comment, until they
// change it, but for a comment deleted and kept for its replies, whose
// poster no read names. At most [MaxBatch] ids.
func (s *Store) CommentVotesOf(ctx context.Context, user string, ids []string) ([]VoteType, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "CommentVotesOf", Count: len(ids)}, func(ctx context.Context) ([]VoteType, error) { return s.CommentVotesOf(ctx, user, ids) })
	}
	return votesByID(ctx, "comment votes of", user, ids, s.commentVotes)
}

// commentVotes reads user's votes on the comments ids, canonical, under
// op.
func (s *Store) commentVotes(ctx context.Context, op, user string, ids []string) ([]VoteType, error) {
	rest, err := s.call(ctx, op, commentVotesScript, "", s.commentVotesArgs(user, ids))
	if err != nil {
		return nil, err
	}
	votes, _, err := parseVotes(rest, len(ids))
	if err != nil {
		return nil, opErr(op, err)
	}
	return votes, nil
}

// commentVotesArgs lays out comment_votes.lua's arguments. KEYS[1]: the
// comment id counter (the store's slot). ARGV[1..3]: the user, the
// prefixes of comments and comment voter records; ARGV[4..]: the ids.
func (s *Store) commentVotesArgs(user string, ids []string) []interface{} {
	args := make([]interface{}, 0, 4+len(ids))
	return appendStrings(append(args, s.keys.cseq, user, s.keys.comment, s.keys.cvoted), ids)
}

// EditComment changes the body of the comment, for its poster until the
// edit window ([WithEditWindow]) after its Posted time, on the store's
// clock, in one round trip, and returns the comment as edited. Anyone
// else, a call after the window, or a store without WithEditWindow gets
// [ErrNotAllowed]; an unknown or deleted comment gets [ErrNotFound]. The
// body is checked as Comment checks it. A refused EditComment changes
// nothing.
func (s *Store) EditComment(ctx context.Context, commentID, user, body string) (Comment, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "EditComment"}, func(ctx context.Context) (Comment, error) { return s.EditComment(ctx, commentID, user, body) })
	}
	const op = "edit comment"
	if err := s.text.comment("user", user, body); err != nil {
		return Comment{}, opErr(op, err)
	}
	if !canonicalID(commentID) {
		return Comment{}, commentNotFound(op, commentID)
	}
	c, status, _, err := s.writeComment(ctx, op, commentEditScript, s.commentEditArgs(commentID, user, body, s.now()))
	if err != nil || status == statusOK {
		return c, err
	}
	switch status {
	case statusNotFound:
		return Comment{}, commentNotFound(op, commentID)
	case statusNotAllowed:
		return Comment{}, s.editRefused(op, "comment", commentID, user)
	}
	return Comment{}, statusErr(op, status, commentID)
}

// commentEditArgs lays out comment_edit.lua's arguments. KEYS[1]: the
// comment. ARGV[1..4]: id, user, body, now in ms; ARGV[5..6]: the rules
// record and the store's words; ARGV[7]: the comments' prefix.
func (s *Store) commentEditArgs(id, user, body string, t time.Time) []interface{} {
	return []interface{}{s.keys.commentKey(id), id, user, body, t.UnixMilli(), s.keys.rules, s.rules.want, s.keys.comment}
}

// DeleteComment deletes the comment. A comment without replies is
// removed whole, and so, then, is each deleted ancestor left without
// replies. One with replies stays in its place as Deleted, its Poster
// and Body emptied, its votes and the karma they moved kept, and its
// replies untouched. The live counts (its ancestors' Replies, the
// article's Comments) drop by one where the comment was live. Deleting
// a deleted comment again changes nothing; an unknown one gets
// [ErrNotFound].
//
// It takes one round trip, and, where deleted ancestors go too, one
// more for each 50 of them past those the first removes: each step is
// one atomic script. The first also walks up every ancestor for their
// live counts, as Comment does, and removes one ancestor fewer for
// every 5 ancestors it walked, down to none. Between steps the deleted ancestors not yet removed read everywhere as deleted
// comments without replies. A DeleteComment interrupted between steps
// (its context done, its connection lost) leaves them so, and the next
// DeleteComment of any comment of the store removes them, before it
// returns. With [WithWaitReplicas] each step waits for the replicas, and
// DeleteComment stops after the first step not replicated, with an error
// wrapping [ErrNotReplicated].
func (s *Store) DeleteComment(ctx context.Context, commentID string) error {
	if s.hooked(ctx) {
		return observeErr(ctx, s, Call{Op: "DeleteComment"}, func(ctx context.Context) error { return s.DeleteComment(ctx, commentID) })
	}
	const op = "delete comment"
	if !canonicalID(commentID) {
		return commentNotFound(op, commentID) // a malformed id, as an unknown one
	}
	id := commentID
	for {
		rest, err := s.call(ctx, op, commentDeleteScript, commentID, s.commentDeleteArgs(id))
		if errors.Is(err, ErrNotFound) {
			return commentNotFound(op, commentID)
		}
		var more int64
		if len(rest) == 2 {
			more, _ = redis.Int64(rest[0], nil)
		}
		if err != nil || more == 0 {
			return err
		}
		id = "" // go on with the removal left (comment_delete.lua)
	}
}

// commentDeleteArgs lays out comment_delete.lua's arguments. KEYS[1..2]:
// the comment (for an id of "", the set of removals left, which it goes
// on with) and the live comment counts. ARGV[1]: the id; ARGV[2..4]: the
// prefixes of comments, threads, replies; ARGV[5]: the commented pages'
// prefix, passed whether or not the store keeps pages, as lifecycleKeys
// passes the submitted pages'; ARGV[6]: the removals left; ARGV[7..8]:
// ancestorStep, ancestorWalk.
func (s *Store) commentDeleteArgs(id string) []interface{} {
	k := s.keys
	key := k.removing
	if id != "" {
		key = k.commentKey(id)
	}
	return []interface{}{key, k.comments, id, k.comment, k.thread, k.kids, k.commented, k.removing, ancestorStep, ancestorWalk}
}

// UserComments returns page (1-based) of user's comments, newest first
// (by post time, ties by id, highest first), in one round trip: the
// latest [MaxUserPageEntries] comments the user made with
// [WithUserPages], never a deleted or removed one; every page but the
// last is full, and a page past the end is empty. A store without
// WithUserPages, a bad user name or a page below 1 gets
// [ErrInvalidArgument]. A read drops from the list the entries of
// removed comments it walks past, so it may write.
func (s *Store) UserComments(ctx context.Context, user string, page int) ([]Comment, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "UserComments", Page: page, HasPage: true}, func(ctx context.Context) ([]Comment, error) { return s.UserComments(ctx, user, page) })
	}
	const op = "user comments"
	start, err := s.userPageStart(op, user, page)
	if err != nil {
		return nil, err
	}
	if start < 0 {
		return []Comment{}, nil
	}
	rest, err := s.call(ctx, op, userCommentsScript, "", s.userCommentsArgs(user, start))
	if err != nil {
		return nil, err
	}
	return plainComments(op, rest)
}

// userCommentsArgs lays out user_comments.lua's arguments. KEYS[1]: the
// user's comments page. ARGV[1]: the comments' prefix; ARGV[2..3]: the
// live entries skipped, the page size.
func (s *Store) userCommentsArgs(user string, start int) []interface{} {
	return []interface{}{s.keys.commentedKey(user), s.keys.comment, start, s.pageSize}
}

// writeComment runs sc, a script that writes a comment and replies
// {OK, row} or a refusal: it returns the comment written, with status
// statusOK, or the refusal's status and the rest of its reply.
func (s *Store) writeComment(ctx context.Context, op string, sc script, args []interface{}) (Comment, int64, []interface{}, error) {
	reply, err := s.eval(ctx, sc, args)
	status, rest, late, err := decodeWrite(op, reply, err)
	if err != nil {
		return Comment{}, 0, nil, err
	}
	if status != statusOK {
		return Comment{}, status, rest, nil
	}
	c, err := parseOneComment(rest)
	if err != nil {
		return Comment{}, 0, nil, opErr(op, err)
	}
	return c.Comment, statusOK, nil, replicationErr(op, late)
}

// plainComments parses rows of comments into Comments.
func plainComments(op string, rest []interface{}) ([]Comment, error) {
	list, err := parseComments(rest)
	if err != nil {
		return nil, opErr(op, err)
	}
	out := make([]Comment, len(list))
	for i, c := range list {
		out[i] = c.Comment
	}
	return out, nil
}

// commentNotFound is the error of op for a comment that does not exist.
func commentNotFound(op, id string) error {
	return &opError{op: op, err: errCommentNotFound, detail: strconv.Quote(id)}
}

// invalidErr is the error of a statusInvalid reply, {reason}.
func invalidErr(op string, rest []interface{}) error {
	detail := ""
	if len(rest) == 1 {
		if b, ok := rest[0].([]byte); ok {
			detail = string(b)
		}
	}
	return &opError{op: op, err: ErrInvalidArgument, detail: detail}
}

// displayOrder orders list, the comments of a Thread or Replies in the
// order the script took them (Depth 0 for the root's children), for
// display: each comment followed by its replies, siblings in the order
// taken; and counts each comment's More, its live descendants left out.
// A reply is taken after its parent, so every comment's parent but the
// root is in list, and siblings are taken best first.
func displayOrder(list []ThreadComment) []ThreadComment {
	children := map[string][]int{}
	for i, c := range list {
		p := c.Parent
		if c.Depth == 0 {
			p = ""
		}
		children[p] = append(children[p], i)
	}
	out := make([]ThreadComment, 0, len(list))
	// walk appends list[i] and its replies in the reply to out, and
	// returns how many of those replies are live. It recurses at most
	// MaxThreadDepth deep.
	var walk func(i int) int64
	walk = func(i int) int64 {
		at := len(out)
		out = append(out, list[i])
		var shown int64
		for _, j := range children[list[i].ID] {
			shown += walk(j)
			if !list[j].Deleted {
				shown++
			}
		}
		out[at].More = max(out[at].Replies-shown, 0)
		return shown
	}
	for _, i := range children[""] {
		walk(i)
	}
	return out
}
