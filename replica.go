package voting

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
)

// Reads on replicas (WithReadPool). A store with a read pool runs its
// scripts that write nothing (scriptTable) there as EVALSHA_RO, which
// Redis 7 runs on a replica and, on a READONLY connection, on a Redis
// Cluster replica; eval routes them. GroupArticles reads a complete
// cache on the read pool, and builds a cold one, and renews the TTL of a
// warm one, on the primary.

// onPrimary returns sc to be run on the primary, read pool or not: for a
// read that guards a write, such as the check that an article exists in
// AddToGroups without groups.
func onPrimary(sc script) script {
	sc.readOnly = false
	return sc
}

// groupArticlesRead reads a page of a group from its complete cache on
// the read pool. It returns errBuilding when the cache there is missing
// or incomplete, for GroupArticles to read the page on the primary, which
// builds it. With a user, the page's reply carries their votes
// (GroupArticlesFor). When the cache has less than half its TTL left, it renews
// it on the primary: a replica cannot, and a cache read only on replicas
// would otherwise expire under its readers and be rebuilt.
func (s *Store) groupArticlesRead(ctx context.Context, op, user, group string, o Order, start, stop int64) ([]Article, []VoteType, error) {
	rest, err := s.call(ctx, op, groupReadScript, "", s.withViewer(s.groupReadArgs(group, o, start, stop), user))
	if err != nil {
		return nil, nil, err
	}
	if len(rest) == 0 {
		return nil, nil, opErr(op, fmt.Errorf("group page reply without its TTL"))
	}
	pttl, err := redis.Int64(rest[0], nil)
	if err != nil {
		return nil, nil, opErr(op, fmt.Errorf("group page TTL: %w", err))
	}
	list, votes, err := parseRowsFor(rest[1:], user)
	if err != nil {
		return nil, nil, opErr(op, err)
	}
	// pttl is -1 for a cache kept for good, -2 for a group without one.
	if s.cacheTTL > 0 && pttl >= 0 && pttl < s.cacheTTL/2 {
		if _, err := s.call(ctx, op, groupRenewScript, "", s.groupRenewArgs(group, o)); err != nil {
			return nil, nil, err
		}
	}
	return list, votes, nil
}

// groupReadArgs lays out group_read.lua's arguments. KEYS[1..2]: the
// group and its cache in the ordering of o. ARGV[1]: the articles'
// prefix; ARGV[2..4]: start, stop, desc; ARGV[5..6]: the viewer
// (withViewer).
func (s *Store) groupReadArgs(group string, o Order, start, stop int64) []interface{} {
	name, desc := o.ordering()
	k := s.keys
	return []interface{}{k.groupKey(group), k.cacheKey(group, name), k.article, start, stop, flag(desc)}
}

// groupRenewArgs lays out group_renew.lua's arguments. KEYS[1]: the
// group's cache in the ordering of o. ARGV[1]: its TTL in ms.
func (s *Store) groupRenewArgs(group string, o Order) []interface{} {
	name, _ := o.ordering()
	return []interface{}{s.keys.cacheKey(group, name), s.cacheTTL}
}
