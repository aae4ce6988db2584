package voting

import (
	"context"
	"fmt"
	"time"
)

// Post posts an article by poster and records the poster's own upvote, so
// the article starts with one upvote and a score of its post time plus one
// vote weight. The poster may later change or cancel that vote. Title
// must not be blank; link may be empty (a text post); both are stored
// byte for byte. A title with a control character, a bidi control or a
// line or paragraph separator, a link that is not an http or https URL
// with a host, and a poster with white space at either end get
// [ErrInvalidArgument] ([WithRawText] and [WithLinkSchemes] relax them).
// With [WithUniqueLinks], a link a live article has already gets that
// article and an error wrapping [ErrDuplicate]; so does, with
// [WithRepostAfter], a link an article posted within its span has. With
// [WithPostInterval], a post too soon after the poster's last gets
// [ErrRateLimited] ([RetryAfter]).
//
// Post sends its script on a connection that has just answered a PING
// (docs/OPERATIONS.md, "Failures"). A Post whose reply is lost may or
// may not have posted, and returns an error wrapping [ErrUnknownOutcome];
// without WithUniqueLinks a retry may post the article twice.
func (s *Store) Post(ctx context.Context, poster, title, link string) (Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Post"}, func(ctx context.Context) (Article, error) { return s.Post(ctx, poster, title, link) })
	}
	const op = "post"
	if err := s.text.post("poster", poster, title, link); err != nil {
		return Article{}, opErr(op, err)
	}
	t := s.now()
	posted := t.Unix()
	args := s.appendPostRules(s.postArgs(poster, title, link, posted), poster, t)
	reply, err := s.eval(ctx, postScript, args)
	status, rest, late, err := decodeWrite(op, reply, err)
	if err != nil {
		return Article{}, err
	}
	switch status {
	case statusOK:
		a := Article{Title: title, Link: link, Poster: poster, Posted: time.Unix(posted, 0).UTC(), Upvotes: 1}
		if err := scan(status, rest, &a.ID, &a.Score); err != nil {
			return Article{}, opErr(op, err)
		}
		return a, replicationErr(op, late)
	case statusDup:
		list, err := parseArticles(rest)
		if err != nil || len(list) != 1 {
			return Article{}, opErr(op, fmt.Errorf("duplicate reply: %v", err))
		}
		return list[0], &opError{op: op, err: ErrDuplicate, detail: fmt.Sprintf("%q is article %q", link, list[0].ID)}
	case statusRateLimited:
		return Article{}, opErr(op, parseRetry(rest))
	case statusNotAllowed: // a suspended poster (moderation.go)
		return Article{}, opErr(op, parseRefused(rest))
	}
	return Article{}, statusErr(op, status, "")
}

// postArgs lays out post.lua's arguments before the rules
// (appendPostRules). KEYS[1..3]: the id counter, the score and time
// orderings. ARGV[1..3]: poster, title, link; ARGV[4..8]: now (Unix
// seconds), the window, the weight, the orders kept, unique links ("1");
// ARGV[9..14]: the prefixes of articles, voter records, an article's
// groups, orderings by name, TopSince buckets, links;
// ARGV[15..16]: the submitted and upvoted pages' prefixes, or "" and "".
func (s *Store) postArgs(poster, title, link string, now int64) []interface{} {
	k := s.keys
	args := []interface{}{k.seq, k.orderingKey("score"), k.orderingKey("time"),
		poster, title, link, now, s.window, s.weight, s.orders, flag(s.uniqueLinks),
		k.article, k.voted, k.groupsOf, k.by, k.topBucket, k.link}
	if s.userPages {
		return append(args, k.submitted, k.upvoted)
	}
	return append(args, "", "") // post.lua's ARGV[15..16]: no pages, before the rules
}

// appendPostRules appends to post.lua's arguments the rules record and
// the store's words (ARGV[17..18]), which the first post of an empty store
// records, and the rules of Post (lib/rules.lua postRules) at the time t:
// now in ms and the poster's last-post key (ARGV[19..20]), for a store
// with one. A store with no rule sends none of them.
func (s *Store) appendPostRules(args []interface{}, poster string, t time.Time) []interface{} {
	if s.rules.want == "" {
		return args
	}
	args = append(args, s.keys.rules, s.rules.want)
	if !s.rules.interval && !s.rules.repost {
		return args
	}
	return append(args, t.UnixMilli(), s.keys.lastPostKey(poster))
}

// Article returns the article with the given id, or an error wrapping
// ErrNotFound.
func (s *Store) Article(ctx context.Context, id string) (Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Article"}, func(ctx context.Context) (Article, error) { return s.Article(ctx, id) })
	}
	const op = "article"
	if !canonicalID(id) {
		return Article{}, notFound(op, id)
	}
	list, err := s.articles(ctx, op, []string{id})
	if err != nil {
		return Article{}, err
	}
	if len(list) == 0 {
		return Article{}, notFound(op, id)
	}
	return list[0], nil
}

// ArticlesByID returns the articles with the given ids, in the order of
// ids, in one round trip, skipping ids that name no article (never
// posted, deleted, or malformed). At most [MaxBatch] ids.
func (s *Store) ArticlesByID(ctx context.Context, ids []string) ([]Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "ArticlesByID", Count: len(ids)}, func(ctx context.Context) ([]Article, error) { return s.ArticlesByID(ctx, ids) })
	}
	return readByID(ctx, "articles by id", ids, s.articles)
}

func (s *Store) articles(ctx context.Context, op string, ids []string) ([]Article, error) {
	return s.readRows(ctx, op, articlesScript, s.articlesArgs(ids))
}

// articlesArgs lays out articles.lua's arguments. KEYS[1]: the score
// ordering (the store's slot). ARGV[1]: the articles' prefix; ARGV[2..]:
// the ids.
func (s *Store) articlesArgs(ids []string) []interface{} {
	args := make([]interface{}, 0, 2+len(ids))
	args = append(args, s.keys.orderingKey("score"), s.keys.article)
	return appendStrings(args, ids)
}

// Count returns the number of articles of the store.
func (s *Store) Count(ctx context.Context) (int64, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Count"}, func(ctx context.Context) (int64, error) { return s.Count(ctx) })
	}
	return s.count(ctx, "count", s.keys.orderingKey("time"), "zset")
}

func (s *Store) count(ctx context.Context, op, key, kind string) (int64, error) {
	var n int64
	if _, err := s.evalScan(ctx, op, countScript, []interface{}{key, kind}, &n); err != nil {
		return 0, err
	}
	return n, nil
}
