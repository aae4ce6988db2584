package voting

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/gomodule/redigo/redis"
)

// AddToGroups adds the article to each of groups; adding it to a group it
// is in already changes nothing. Group names follow the rules of user
// names (1 to MaxNameLen bytes of printable UTF-8); at most MaxBatch per
// call. A cached group page shows an addition once the cache expires
// (WithGroupCacheTTL). An unknown article gets ErrNotFound.
func (s *Store) AddToGroups(ctx context.Context, id string, groups ...string) error {
	args, err := s.groupArgs(id, groups, false)
	if err != nil {
		return err
	}
	return s.mutate(ctx, "add to groups", groupAddScript, id, args)
}

// RemoveFromGroups removes the article from each of groups, and from their
// cached pages at once, so it never shows in those groups' pages again.
// Removing it from a group it is not in changes nothing. An unknown
// article gets ErrNotFound.
func (s *Store) RemoveFromGroups(ctx context.Context, id string, groups ...string) error {
	args, err := s.groupArgs(id, groups, true)
	if err != nil {
		return err
	}
	return s.mutate(ctx, "remove from groups", groupRemoveScript, id, args)
}

// groupArgs validates a group change and lays out its script arguments:
// the key count, the article and its groups set, then per group its set
// (and, with caches, its two cached pages); then the id and the names.
func (s *Store) groupArgs(id string, groups []string, caches bool) ([]interface{}, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if err := checkGroups(groups); err != nil {
		return nil, err
	}
	perGroup := 1
	if caches {
		perGroup = 3
	}
	nkeys := 2 + perGroup*len(groups)
	args := make([]interface{}, 0, 1+nkeys+1+len(groups))
	args = append(args, nkeys, s.keys.articleKey(id), s.keys.groupsOfKey(id))
	for _, g := range groups {
		args = append(args, s.keys.groupKey(g))
		if caches {
			args = append(args, s.keys.cacheKey(g, ScoreDesc), s.keys.cacheKey(g, TimeDesc))
		}
	}
	args = append(args, id)
	for _, g := range groups {
		args = append(args, g)
	}
	return args, nil
}

// mutate runs a mutation script whose reply is 1, or 0 for an unknown
// article.
func (s *Store) mutate(ctx context.Context, op string, script *redis.Script, id string, args []interface{}) error {
	ok, err := redis.Bool(s.eval(ctx, script, args...))
	if err != nil {
		return fmt.Errorf("voting: %s: %w", op, err)
	}
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return nil
}

// Groups returns the groups the article is in, sorted. An unknown article
// gets ErrNotFound.
func (s *Store) Groups(ctx context.Context, id string) ([]string, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	groups, err := redis.Strings(s.eval(ctx, groupsScript, s.keys.articleKey(id), s.keys.groupsOfKey(id)))
	if errors.Is(err, redis.ErrNil) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("voting: groups: %w", err)
	}
	sort.Strings(groups)
	return groups, nil
}

// GroupArticles returns page (1-based) of the articles in group, in the
// given order, with every article's fields, in one round trip. The order
// comes from a cache of the group's intersection with the score or time
// ordering, built on the first read and kept for the group cache TTL, so
// it may be that old; the fields are always current, and an article
// removed from the group or deleted never shows. An empty or unknown group
// reads as an empty page. Paging follows Articles.
func (s *Store) GroupArticles(ctx context.Context, group string, order Order, page int) ([]Article, error) {
	if err := checkName("group name", group); err != nil {
		return nil, err
	}
	start, stop, err := s.pageRange(order, page)
	if err != nil || start < 0 {
		return nil, err
	}
	k := s.keys
	ordering, desc := k.ordering(order)
	reply, err := redis.Values(s.eval(ctx, groupPageScript,
		k.groupKey(group), k.cacheKey(group, order), ordering, k.score,
		k.article, start, stop, flag(desc), s.cacheTTL))
	if err != nil {
		return nil, fmt.Errorf("voting: group articles: %w", err)
	}
	var built int64
	if reply, err = redis.Scan(reply, &built); err != nil {
		return nil, fmt.Errorf("voting: group articles: %w", err)
	}
	s.rebuilds.Add(built)
	list, err := parseArticles(reply)
	if err != nil {
		return nil, fmt.Errorf("voting: group articles: %w", err)
	}
	return list, nil
}

// Delete removes the article and every trace of it, in one atomic step:
// its fields, its place in both orderings, its voter records, its group
// memberships and its place in every cached group page. Afterwards the
// article is not found anywhere; deleting it again gets ErrNotFound.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	k := s.keys
	return s.mutate(ctx, "delete", deleteScript, id, []interface{}{
		k.articleKey(id), k.votedKey(id), k.groupsOfKey(id), k.score, k.time,
		id, k.group, k.cacheScore, k.cacheTime})
}
