package voting

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Errors returned by the store. Check them with errors.Is: they come
// wrapped with details ("voting: article not found: \"42\"").
var (
	// ErrNotFound means the article does not exist: it was never posted,
	// was deleted, or the id is not one the store issues.
	ErrNotFound = errors.New("voting: article not found")
	// ErrVotingClosed means the article's voting window has ended.
	ErrVotingClosed = errors.New("voting: voting closed")
	// ErrInvalidVote means a VoteType outside NoVote, Upvote and Downvote.
	ErrInvalidVote = errors.New("voting: invalid vote type")
	// ErrInvalidArgument means an input out of the documented limits: an
	// empty or over-long name, title or id, a bad page or Order, or an
	// option value New rejects.
	ErrInvalidArgument = errors.New("voting: invalid argument")
)

// Pool hands out Redis connections. *redis.Pool satisfies it, and so does
// any cluster-aware pool whose connections route EVALSHA; see doc.go.
type Pool interface {
	GetContext(ctx context.Context) (redis.Conn, error)
}

var _ Pool = (*redis.Pool)(nil)

// binder is a connection that must be bound to a key before use, as the
// connections of cluster-aware pools (mna/redisc) are: they route a
// command by its first argument, which for EVALSHA is not a key.
type binder interface {
	Bind(keys ...string) error
}

// Order is the order of a page of articles.
type Order int

// The orders of a page.
const (
	ScoreDesc Order = iota // highest score first: the front page
	ScoreAsc               // lowest score first
	TimeDesc               // newest first
	TimeAsc                // oldest first
)

func (o Order) valid() bool { return o >= ScoreDesc && o <= TimeAsc }

// String returns "score-desc", "score-asc", "time-desc" or "time-asc".
func (o Order) String() string {
	switch o {
	case ScoreDesc:
		return "score-desc"
	case ScoreAsc:
		return "score-asc"
	case TimeDesc:
		return "time-desc"
	case TimeAsc:
		return "time-asc"
	}
	return "Order(" + strconv.Itoa(int(o)) + ")"
}

// Article is a posted article as the store holds it.
type Article struct {
	ID                  string
	Title, Link, Poster string
	Posted              time.Time // whole seconds, in local time
	// Score is Posted.Unix() + weight × (Upvotes − Downvotes).
	Score              float64
	Upvotes, Downvotes int64
}

// VoteResult is the outcome of a vote: the vote it replaced and the
// article's standing after it.
type VoteResult struct {
	Previous           VoteType
	Score              float64
	Upvotes, Downvotes int64
}

// Store is article voting on one Redis (or one Cluster hash slot), under
// one key prefix. It holds no state of its own beyond its settings: any
// number of Stores in any number of processes may share the same prefix.
// Store is safe for concurrent use; every method is one atomic Lua script
// in one round trip.
type Store struct {
	pool     Pool
	keys     keys
	weight   interface{} // the vote weight as a string, boxed once for the scripts
	window   interface{} // the vote window in seconds (int64), boxed once
	cacheTTL int64       // the group cache TTL, in milliseconds
	pageSize int
	now      func() time.Time
	rebuilds atomic.Int64 // group cache builds, observed by tests
}

// New returns a Store that talks to Redis through pool. Without options it
// uses the defaults of the WithX functions. It returns an error wrapping
// ErrInvalidArgument for a nil pool or an option value out of range. New
// does not talk to Redis.
func New(pool Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("%w: pool is nil", ErrInvalidArgument)
	}
	c := defaultConfig()
	for _, o := range opts {
		o(&c)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &Store{
		pool:     pool,
		keys:     newKeys(c.prefix),
		weight:   strconv.FormatFloat(c.weight, 'g', -1, 64),
		window:   int64(c.window / time.Second),
		cacheTTL: int64(c.cacheTTL / time.Millisecond),
		pageSize: c.pageSize,
		now:      c.now,
	}, nil
}

// eval runs one script on one pooled connection: the only way the store
// talks to Redis.
func (s *Store) eval(ctx context.Context, script *redis.Script, keysAndArgs ...interface{}) (interface{}, error) {
	conn, err := s.pool.GetContext(ctx)
	if err != nil {
		return nil, contextError(ctx, err)
	}
	defer conn.Close()
	if b, ok := conn.(binder); ok {
		// Every key of the store hashes to one slot: binding to the
		// sequence key routes the script to the node that owns them all.
		if err := b.Bind(s.keys.seq); err != nil {
			return nil, err
		}
	}
	if _, ok := conn.(redis.ConnWithContext); ok && ctx.Done() != nil {
		reply, err := script.DoContext(ctx, conn, keysAndArgs...)
		return reply, contextError(ctx, err)
	}
	// A context that can never be done (context.Background) needs no
	// watching, which costs redigo a goroutine per call. A connection
	// without context support still honours a context that is already done.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return script.Do(conn, keysAndArgs...)
}

// contextError returns err, from a call that failed once ctx was done or
// past its deadline, as an error that also wraps the context's: redigo may
// report a passed deadline as a read or dial timeout, and the caller must
// be able to tell with errors.Is(err, context.DeadlineExceeded).
func contextError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	cause := ctx.Err()
	if dl, ok := ctx.Deadline(); ok && cause == nil && !time.Now().Before(dl) {
		cause = context.DeadlineExceeded // the context's timer has yet to fire
	}
	if cause == nil || errors.Is(err, cause) {
		return err
	}
	return fmt.Errorf("%w: %w", cause, err)
}

// Post posts an article by poster and records the poster's own upvote, so
// the article starts with one upvote and a score of its post time plus one
// vote weight. The poster may later change or cancel that vote.
// Title must not be blank; link may be empty; both are stored byte for byte.
func (s *Store) Post(ctx context.Context, poster, title, link string) (Article, error) {
	if err := checkName("poster", poster); err != nil {
		return Article{}, err
	}
	if err := checkText("title", title, MaxTitleLen, true); err != nil {
		return Article{}, err
	}
	if err := checkText("link", link, MaxLinkLen, false); err != nil {
		return Article{}, err
	}
	posted := s.now().Unix()
	k := s.keys
	reply, err := redis.Values(s.eval(ctx, postScript, k.seq, k.score, k.time,
		k.article, k.voted, poster, title, link, posted, s.window, s.weight))
	if err != nil {
		return Article{}, fmt.Errorf("voting: post: %w", err)
	}
	var id string
	var score float64
	if _, err := redis.Scan(reply, &id, &score); err != nil {
		return Article{}, fmt.Errorf("voting: post: %w", err)
	}
	return Article{
		ID: id, Title: title, Link: link, Poster: poster,
		Posted: time.Unix(posted, 0),
		Score:  score, Upvotes: 1,
	}, nil
}

// Article returns the article with the given id, or an error wrapping
// ErrNotFound.
func (s *Store) Article(ctx context.Context, id string) (Article, error) {
	if err := checkID(id); err != nil {
		return Article{}, err
	}
	reply, err := redis.Values(s.eval(ctx, articleScript, s.keys.score, s.keys.article, id))
	if err != nil {
		return Article{}, fmt.Errorf("voting: article: %w", err)
	}
	list, err := parseArticles(reply)
	if err != nil {
		return Article{}, fmt.Errorf("voting: article: %w", err)
	}
	if len(list) == 0 {
		return Article{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return list[0], nil
}

// Articles returns page (1-based) of all articles in the given order, with
// every article's fields, in one round trip. A page past the end is empty.
// A page below 1 or an unknown Order gets ErrInvalidArgument.
func (s *Store) Articles(ctx context.Context, order Order, page int) ([]Article, error) {
	start, stop, err := s.pageRange(order, page)
	if err != nil || start < 0 {
		return nil, err
	}
	key, desc := s.keys.ordering(order)
	reply, err := redis.Values(s.eval(ctx, pageScript, key, s.keys.score,
		s.keys.article, start, stop, flag(desc)))
	if err != nil {
		return nil, fmt.Errorf("voting: articles: %w", err)
	}
	list, err := parseArticles(reply)
	if err != nil {
		return nil, fmt.Errorf("voting: articles: %w", err)
	}
	return list, nil
}

// maxRank bounds the ranks a page may start at; no sorted set holds more.
const maxRank = 1 << 40

// pageRange validates a page request and returns its inclusive ranks. A
// page beyond any possible set gets start -1: empty, without a round trip.
func (s *Store) pageRange(order Order, page int) (start, stop int64, err error) {
	if !order.valid() {
		return 0, 0, fmt.Errorf("%w: unknown order %v", ErrInvalidArgument, order)
	}
	if page < 1 {
		return 0, 0, fmt.Errorf("%w: page %d is below 1", ErrInvalidArgument, page)
	}
	if int64(page-1) >= maxRank/int64(s.pageSize) {
		return -1, -1, nil
	}
	start = int64(page-1) * int64(s.pageSize)
	return start, start + int64(s.pageSize) - 1, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Vote records user's vote v on the article: Upvote, Downvote, or NoVote to
// cancel. It replaces the user's previous vote, which the result reports;
// voting the same way again changes nothing, so a retried Vote is safe.
// It returns an error wrapping ErrInvalidVote for any v outside the three
// constants (before Redis is touched), ErrNotFound for an unknown article,
// and ErrVotingClosed once the vote window has ended.
func (s *Store) Vote(ctx context.Context, user, id string, v VoteType) (VoteResult, error) {
	if !v.Valid() {
		return VoteResult{}, fmt.Errorf("%w: %d", ErrInvalidVote, int(v))
	}
	if err := checkName("user", user); err != nil {
		return VoteResult{}, err
	}
	if err := checkID(id); err != nil {
		return VoteResult{}, err
	}
	k := s.keys
	reply, err := redis.Values(s.eval(ctx, voteScript, k.articleKey(id), k.votedKey(id), k.score,
		id, user, int(v), s.now().Unix(), s.window, s.weight))
	if err != nil {
		return VoteResult{}, fmt.Errorf("voting: vote: %w", err)
	}
	status, r, err := parseVote(reply)
	switch {
	case err != nil:
		return VoteResult{}, fmt.Errorf("voting: vote: %w", err)
	case status == voteNotFound:
		return VoteResult{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	case status == voteClosed:
		return VoteResult{}, fmt.Errorf("%w: article %q", ErrVotingClosed, id)
	}
	return r, nil
}

// VoteOf returns user's vote on the article: NoVote if the user has not
// voted, has cancelled, or the article's voting closed and its voter
// records expired. An unknown article gets ErrNotFound.
func (s *Store) VoteOf(ctx context.Context, user, id string) (VoteType, error) {
	votes, err := s.votesOf(ctx, user, []string{id})
	if err != nil {
		return NoVote, err
	}
	if votes[0] == missing {
		return NoVote, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return votes[0], nil
}

// VotesOf returns user's vote on each of ids, in one round trip, so a page
// can show its arrows: votes[i] is the vote on ids[i], NoVote where there is
// none or the article does not exist. At most MaxBatch ids.
func (s *Store) VotesOf(ctx context.Context, user string, ids []string) ([]VoteType, error) {
	if len(ids) > MaxBatch {
		return nil, fmt.Errorf("%w: more than %d ids", ErrInvalidArgument, MaxBatch)
	}
	votes, err := s.votesOf(ctx, user, ids)
	for i, v := range votes {
		if v == missing {
			votes[i] = NoVote
		}
	}
	return votes, err
}

// missing marks an id whose article does not exist in votesOf's result.
const missing VoteType = 2

func (s *Store) votesOf(ctx context.Context, user string, ids []string) ([]VoteType, error) {
	if err := checkName("user", user); err != nil {
		return nil, err
	}
	votes := make([]VoteType, len(ids))
	args := make([]interface{}, 0, 2+2*len(ids))
	args = append(args, 0) // the key count, set below
	var asked []int        // the indexes of ids that may exist
	for i, id := range ids {
		err := checkID(id)
		if errors.Is(err, ErrNotFound) {
			votes[i] = missing
			continue
		}
		if err != nil {
			return nil, err
		}
		asked = append(asked, i)
		args = append(args, s.keys.articleKey(id), s.keys.votedKey(id))
	}
	if len(asked) == 0 {
		return votes, nil
	}
	args[0] = len(args) - 1
	args = append(args, user)
	reply, err := redis.Int64s(s.eval(ctx, votesScript, args...))
	if err != nil {
		return nil, fmt.Errorf("voting: votes: %w", err)
	}
	if len(reply) != len(asked) {
		return nil, fmt.Errorf("voting: votes: %d replies for %d ids", len(reply), len(asked))
	}
	for j, i := range asked {
		votes[i] = VoteType(reply[j])
	}
	return votes, nil
}
