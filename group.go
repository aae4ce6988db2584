package voting

import (
	"context"
	"errors"
	"sort"
)

// AddToGroups adds the article to each of groups, and to the cached pages
// those groups have, so group pages show it at once; adding it to a group
// it is in already changes nothing. Group names follow the rules of the
// user names a call writes (1 to [MaxNameLen] bytes of printable UTF-8,
// no white space at either end unless [WithRawText]). An article may be
// in at most [MaxArticleGroups] groups: beyond that the call gets
// ErrInvalidArgument and changes nothing. An unknown article gets
// ErrNotFound. A name given twice counts once; the script's work follows
// the groups the article joins (at most MaxArticleGroups), not the names
// given, up to [MaxBatch].
func (s *Store) AddToGroups(ctx context.Context, id string, groups ...string) error {
	if s.hooked(ctx) {
		return observeErr(ctx, s, Call{Op: "AddToGroups", Count: len(groups)}, func(ctx context.Context) error { return s.AddToGroups(ctx, id, groups...) })
	}
	return s.changeGroups(ctx, "add to groups", groupAddScript, s.groupAddArgs, id, groups, s.text.name)
}

// groupAddArgs lays out group_add.lua's arguments. KEYS[1]: the score
// ordering (the store's slot). ARGV[1..2]: the id, MaxArticleGroups;
// ARGV[3..8]: the prefixes of articles, an article's groups, groups, the
// other orderings, group caches, voter records; ARGV[9..]: the groups.
func (s *Store) groupAddArgs(id string, groups []string) []interface{} {
	k := s.keys
	args := make([]interface{}, 0, 9+len(groups))
	args = append(args, k.orderingKey("score"), id, MaxArticleGroups,
		k.article, k.groupsOf, k.group, k.by, k.cache, k.voted)
	return appendStrings(args, groups)
}

// RemoveFromGroups removes the article from each of groups, and from their
// cached pages at once, so it never shows in those groups' pages again.
// Removing it from a group it is not in changes nothing. An unknown
// article gets [ErrNotFound]. As with AddToGroups, the work follows the
// groups the article leaves, not the names given.
func (s *Store) RemoveFromGroups(ctx context.Context, id string, groups ...string) error {
	if s.hooked(ctx) {
		return observeErr(ctx, s, Call{Op: "RemoveFromGroups", Count: len(groups)}, func(ctx context.Context) error { return s.RemoveFromGroups(ctx, id, groups...) })
	}
	return s.changeGroups(ctx, "remove from groups", groupRemoveScript, s.groupRemoveArgs, id, groups, checkName)
}

// groupRemoveArgs lays out group_remove.lua's arguments. KEYS[1]: the
// score ordering (the store's slot). ARGV[1]: the id; ARGV[2..6]: the
// prefixes of articles, an article's groups, groups, group caches, voter
// records; ARGV[7..]: the groups.
func (s *Store) groupRemoveArgs(id string, groups []string) []interface{} {
	k := s.keys
	args := make([]interface{}, 0, 7+len(groups))
	args = append(args, k.orderingKey("score"), id, k.article, k.groupsOf, k.group, k.cache, k.voted)
	return appendStrings(args, groups)
}

// changeGroups validates a change of the article's groups, each name with
// check, and runs its script; without groups it only checks that the
// article exists.
func (s *Store) changeGroups(ctx context.Context, op string, sc script,
	args func(id string, groups []string) []interface{}, id string, groups []string, check func(what, s string) error) error {
	if err := checkGroups(groups, check); err != nil {
		return opErr(op, err)
	}
	if !canonicalID(id) {
		return notFound(op, id)
	}
	if len(groups) == 0 {
		return s.exists(ctx, op, id)
	}
	_, err := s.call(ctx, op, sc, id, args(id, distinct(groups)))
	return err
}

// distinct returns names without repeats, in the order of their first
// appearance: a script's work then follows the groups, not the names.
func distinct(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := names[:0:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// exists returns nil if the article exists, or [ErrNotFound]; it asks
// the primary, as the call it stands for writes there.
func (s *Store) exists(ctx context.Context, op, id string) error {
	_, err := s.call(ctx, op, onPrimary(groupsScript), id, s.groupsArgs(id))
	return err
}

// Groups returns the groups the article is in, sorted. An unknown article
// gets [ErrNotFound].
func (s *Store) Groups(ctx context.Context, id string) ([]string, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Groups"}, func(ctx context.Context) ([]string, error) { return s.Groups(ctx, id) })
	}
	const op = "groups"
	if !canonicalID(id) {
		return nil, notFound(op, id)
	}
	return s.groups(ctx, op, id)
}

func (s *Store) groups(ctx context.Context, op, id string) ([]string, error) {
	rest, err := s.call(ctx, op, groupsScript, id, s.groupsArgs(id))
	if err != nil {
		return nil, err
	}
	groups, err := parseStrings(rest)
	if err != nil {
		return nil, opErr(op, err)
	}
	sort.Strings(groups)
	return groups, nil
}

// groupsArgs lays out groups.lua's arguments. KEYS[1..2]: the article
// and its groups.
func (s *Store) groupsArgs(id string) []interface{} {
	return []interface{}{s.keys.articleKey(id), s.keys.groupsOfKey(id)}
}

// GroupArticles returns page (1-based) of the articles in group, in the
// given order, with every article's fields. A warm group page is exactly
// the page of Articles restricted to the group's members, and costs one
// round trip.
//
// It reads a cache of the group's members in the order's ordering, which
// every vote, addition, removal and deletion keeps current. While the
// cache is missing (the group's first read in an ordering, or the first
// after it expired unread, WithGroupCacheTTL) or being built, a read
// walks the store's ordering from the top (from the bottom for an
// ascending order), a few thousand members a round trip, copying the
// group's members into the cache; the cache keeps where the walk
// stopped, so each round trip, and each later read, goes on from there,
// and a page within the part walked is read from the cache. A sparse
// group's cache is built from the group's members instead, a few hundred
// a round trip. Each round trip is one script of a few milliseconds at
// most, whatever the sizes, and each moves the cache toward complete: a
// cold page costs one round trip for a dense group, a few for a deep page
// of a mid-sized one (page 40 of a group holding a tenth of a store of a
// million: four, about 10 ms on a quiet server) or for a sparse group.
// The page is always the one the complete cache gives; concurrent
// readers share one cache. An empty or unknown group reads as an empty
// page. Paging and orders follow Articles.
//
// With a read pool ([WithReadPool]) it reads a built cache there, and
// reads the page on the primary when the cache there is cold or being
// built, which costs one round trip more; it renews the cache's TTL on
// the primary, one round trip more, when the replica reports less than
// half of it left.
func (s *Store) GroupArticles(ctx context.Context, group string, order Order, page int) ([]Article, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "GroupArticles", Group: group, Order: order, HasOrder: true, Page: page, HasPage: true}, func(ctx context.Context) ([]Article, error) { return s.GroupArticles(ctx, group, order, page) })
	}
	list, _, err := s.groupArticles(ctx, "group articles", "", group, order, page)
	return list, err
}

// GroupArticlesFor returns page (1-based) of the articles in group, in
// the given order, exactly as [Store.GroupArticles] returns it, and
// user's vote on each of them, as [Store.VotesOf] reads it: votes[i] is
// the vote on list[i], [NoVote] where there is none or the article's
// voting has closed. It takes the round trips GroupArticles takes (one
// for a warm page), reading the votes in the script that reads the
// page, so the page and its votes are one atomic read; a cold page's
// steps before it read none. A user name that VotesOf refuses gets
// [ErrInvalidArgument], as do the group names, pages and orders that
// GroupArticles refuses.
func (s *Store) GroupArticlesFor(ctx context.Context, user, group string, order Order, page int) ([]Article, []VoteType, error) {
	if s.hooked(ctx) {
		return observeView(ctx, s, Call{Op: "GroupArticlesFor", Group: group, Order: order, HasOrder: true, Page: page, HasPage: true}, func(ctx context.Context) ([]Article, []VoteType, error) {
			return s.GroupArticlesFor(ctx, user, group, order, page)
		})
	}
	const op = "group articles for"
	if err := checkName("user", user); err != nil {
		return nil, nil, opErr(op, err)
	}
	return s.groupArticles(ctx, op, user, group, order, page)
}

// groupArticles is the body of GroupArticles (user "", no votes) and
// GroupArticlesFor, op theirs.
func (s *Store) groupArticles(ctx context.Context, op, user, group string, order Order, page int) ([]Article, []VoteType, error) {
	if err := checkName("group name", group); err != nil {
		return nil, nil, opErr(op, err)
	}
	start, stop, err := s.pageRange(order, page, maxRank)
	if err != nil {
		return nil, nil, opErr(op, err)
	}
	if start < 0 {
		return []Article{}, []VoteType{}, nil
	}
	if s.readPool != nil {
		list, votes, err := s.groupArticlesRead(ctx, op, user, group, order, start, stop)
		if !errors.Is(err, errBuilding) {
			return list, votes, err
		}
	}
	// Each call does a bounded step of the walk or of the build, and
	// replies BUILDING until the page is in reach: a few calls.
	for {
		list, votes, err := s.readRowsFor(ctx, op, groupPageScript, s.withViewer(s.groupPageArgs(group, order, start, stop), user), user)
		if !errors.Is(err, errBuilding) {
			return list, votes, err
		}
	}
}

// groupPageArgs lays out a group page's script, with the work of one
// call's build step and walk (buildStep and walkStep but in tests).
// KEYS[1..3]: the group, its cache in the ordering of o, that ordering.
// ARGV[1]: the articles' prefix; ARGV[2..4]: start, stop, desc; ARGV[5]:
// the cache's TTL in ms; ARGV[6..7]: the build step, the walk;
// ARGV[8..9]: the viewer (withViewer).
func (s *Store) groupPageArgs(group string, o Order, start, stop int64) []interface{} {
	name, desc := o.ordering()
	k := s.keys
	return []interface{}{k.groupKey(group), k.cacheKey(group, name), k.orderingKey(name),
		k.article, start, stop, flag(desc), s.cacheTTL, s.step, s.walk}
}

// GroupCount returns the number of articles in group; an empty or unknown
// group has none.
func (s *Store) GroupCount(ctx context.Context, group string) (int64, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "GroupCount", Group: group}, func(ctx context.Context) (int64, error) { return s.GroupCount(ctx, group) })
	}
	const op = "group count"
	if err := checkName("group name", group); err != nil {
		return 0, opErr(op, err)
	}
	return s.count(ctx, op, s.keys.groupKey(group), "set")
}
