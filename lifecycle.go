package voting

import (
	"context"
	"time"
)

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
