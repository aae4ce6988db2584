package voting

import (
	"context"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Delete removes the article and every trace of it, in one atomic step:
// its fields, its place in every ordering and cached group page, its
// voter records, its group memberships, its link and its entry on its
// poster's submitted page ([WithUserPages]); the upvoted pages of its
// voters drop it when next read. Afterwards the article is not found
// anywhere; deleting it again gets [ErrNotFound].
// The karma its votes earned or cost ([WithKarma]) stays: taking it back
// would need the article's voter list, which may be huge or expired.
//
// An article with comments loses them first, 200 a round trip, one
// short script each, and the last step removes the article: Delete of
// an article with n comments takes 1 + n/200 round trips (docs/OPERATIONS.md,
// "Deleting comments and articles"). Until the last, the article and the
// comments not yet removed are read as before, and an error leaves the
// article with the rest: call Delete again to go on.
func (s *Store) Delete(ctx context.Context, id string) error {
	if s.hooked(ctx) {
		return observeErr(ctx, s, Call{Op: "Delete"}, func(ctx context.Context) error { return s.Delete(ctx, id) })
	}
	const op = "delete"
	if !canonicalID(id) {
		return notFound(op, id)
	}
	for {
		rest, err := s.call(ctx, op, deleteScript, id, s.deleteArgs(id))
		var more int64
		if len(rest) == 1 {
			more, _ = redis.Int64(rest[0], nil)
		}
		if err != nil || more == 0 {
			return err
		}
	}
}

// lifecycleKeys are the key prefixes delete.lua (ARGV[2..15]) and
// prune.lua (ARGV[4..17]) take: articles, voter records, an article's
// groups, groups, orderings by name, group caches, TopSince buckets,
// links, submitted pages, comments, threads, replies, comment voter
// records, the live comment counts; then the comments a step of theirs
// removes (purgeStep). The submitted pages' is passed whether or not the
// store keeps pages: a delete unlists the article however it was posted.
func (s *Store) lifecycleKeys() []interface{} {
	k := s.keys
	return []interface{}{k.article, k.voted, k.groupsOf, k.group, k.by, k.cache, k.topBucket, k.link,
		k.submitted, k.comment, k.thread, k.kids, k.cvoted, k.comments, purgeStep}
}

// deleteArgs lays out delete.lua's arguments. KEYS[1]: the score
// ordering (the store's slot). ARGV[1]: the id; ARGV[2..16]:
// lifecycleKeys.
func (s *Store) deleteArgs(id string) []interface{} {
	return append([]interface{}{s.keys.orderingKey("score"), id}, s.lifecycleKeys()...)
}

// Prune deletes every article posted before before, with every trace
// Delete removes, and returns how many it deleted. It works in steps of
// 50 articles (fewer when they are in many groups, which make each
// deletion dearer), one round trip and one atomic script each, so no Redis
// command runs long however many articles go: it is safe to run while the
// site runs (a periodic Prune is the store's retention policy), and to
// interrupt and run again. On an error it returns the count deleted so
// far with it. Like Delete, it leaves the karma the articles' votes
// earned ([WithKarma]). With [WithWaitReplicas] each step waits for the
// replicas, and Prune stops after the first step not replicated, with
// the count so far (that step's included) and an error wrapping
// [ErrNotReplicated].
func (s *Store) Prune(ctx context.Context, before time.Time) (int, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Prune"}, func(ctx context.Context) (int, error) { return s.Prune(ctx, before) })
	}
	const op = "prune"
	// The last whole second before before.
	last := before.Unix()
	if before.Nanosecond() == 0 {
		last--
	}
	total := 0
	for {
		var deleted, more int64
		late, err := s.evalScan(ctx, op, pruneScript, s.pruneArgs(last), &deleted, &more)
		if err != nil {
			return total, err
		}
		total += int(deleted)
		if more == 0 || late != nil {
			return total, replicationErr(op, late)
		}
	}
}

// pruneArgs lays out prune.lua's arguments. KEYS[1]: the time ordering.
// ARGV[1]: the last post time pruned; ARGV[2..3]: the most articles a
// step deletes and its budget of group memberships; ARGV[4..18]:
// lifecycleKeys.
func (s *Store) pruneArgs(last int64) []interface{} {
	return append([]interface{}{s.keys.orderingKey("time"), last, pruneStep, pruneWork}, s.lifecycleKeys()...)
}

// Drop removes every key of the store, and no other: the articles, the
// orderings, the groups, the caches, the id counter, and the users'
// pages, karma and rule keys (vote logs, last posts, link claims). The
// Functions library stays on the server. It scans the
// store's keys in steps, one round trip and one script each, so no Redis
// command runs long; keys written while it runs may survive it, so stop
// the store's writers first. Other prefixes are untouched. With
// [WithWaitReplicas] each step waits for the replicas, and Drop stops
// after the first step not replicated with an error wrapping
// [ErrNotReplicated]; call it again to go on.
func (s *Store) Drop(ctx context.Context) error {
	if s.hooked(ctx) {
		return observeErr(ctx, s, Call{Op: "Drop"}, func(ctx context.Context) error { return s.Drop(ctx) })
	}
	const op = "drop"
	cursor := "0"
	for {
		late, err := s.evalScan(ctx, op, dropScript, s.dropArgs(cursor), &cursor)
		if err != nil {
			return err
		}
		if cursor == "0" || late != nil {
			return replicationErr(op, late)
		}
	}
}

// dropArgs lays out drop.lua's arguments. KEYS[1]: the id counter (the
// store's slot). ARGV[1]: the SCAN cursor; ARGV[2]: the store's key
// pattern; ARGV[3]: the SCAN COUNT.
func (s *Store) dropArgs(cursor string) []interface{} {
	return []interface{}{s.keys.seq, cursor, s.keys.pattern(), dropStep}
}
