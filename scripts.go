package voting

import (
	_ "embed"

	"github.com/gomodule/redigo/redis"
)

// Every mutation and every read is one Lua script, so it is atomic and
// costs one round trip. The sources live in lua/: each names its KEYS and
// ARGV as locals at the top and says what it replies; every reply is
// {status, ...} (reply.go). lua/lib.lua, the helpers they share (the vote
// and delete logic, the orderings' formulas, the article rows), is put in
// front of each script, which says so in its header.
//
// The argument list of each script is built here, in one function used by
// the store's method and by the benchmarks alike.
var (
	//go:embed lua/lib.lua
	libLua string
	//go:embed lua/post.lua
	postLua string
	//go:embed lua/vote.lua
	voteLua string
	//go:embed lua/vote_batch.lua
	voteBatchLua string
	//go:embed lua/articles.lua
	articlesLua string
	//go:embed lua/page.lua
	pageLua string
	//go:embed lua/top_since.lua
	topSinceLua string
	//go:embed lua/votes.lua
	votesLua string
	//go:embed lua/count.lua
	countLua string
	//go:embed lua/group_add.lua
	groupAddLua string
	//go:embed lua/group_remove.lua
	groupRemoveLua string
	//go:embed lua/groups.lua
	groupsLua string
	//go:embed lua/group_page.lua
	groupPageLua string
	//go:embed lua/delete.lua
	deleteLua string
	//go:embed lua/prune.lua
	pruneLua string
	//go:embed lua/drop.lua
	dropLua string
)

// script is one of the store's scripts.
type script struct {
	*redis.Script
	name string // for errors and tests
}

func newScript(name string, keyCount int, src string) script {
	return script{redis.NewScript(keyCount, libLua+src), name}
}

var (
	postScript        = newScript("post", 3, postLua)
	voteScript        = newScript("vote", 1, voteLua)
	voteBatchScript   = newScript("vote_batch", 1, voteBatchLua)
	articlesScript    = newScript("articles", 1, articlesLua)
	pageScript        = newScript("page", 2, pageLua)
	topSinceScript    = newScript("top_since", 3, topSinceLua)
	votesScript       = newScript("votes", 1, votesLua)
	countScript       = newScript("count", 1, countLua)
	groupAddScript    = newScript("group_add", 1, groupAddLua)
	groupRemoveScript = newScript("group_remove", 1, groupRemoveLua)
	groupsScript      = newScript("groups", 2, groupsLua)
	groupPageScript   = newScript("group_page", 4, groupPageLua)
	deleteScript      = newScript("delete", 1, deleteLua)
	pruneScript       = newScript("prune", 1, pruneLua)
	dropScript        = newScript("drop", 1, dropLua)
)

// allScripts is every script of the store.
var allScripts = []script{
	postScript, voteScript, voteBatchScript, articlesScript, pageScript,
	topSinceScript, votesScript, countScript, groupAddScript,
	groupRemoveScript, groupsScript, groupPageScript, deleteScript,
	pruneScript, dropScript,
}

// Work per step of the calls whose work grows with the data: each step
// is one script that stays well under 10 ms on redis-server.
const (
	buildStep = 500 // group members copied per step of a cache build (SSCAN COUNT)
	pruneStep = 50  // articles deleted per step of Prune
	pruneWork = 100 // group memberships of the articles deleted per step of Prune, but for its first
	dropStep  = 500 // keys scanned per step of Drop (SCAN COUNT)
	batchStep = 25  // ballots per script of VoteBatch, divided by 1 + the optional orders enabled (Store.ballotsPerScript)
)

// walkStep bounds the members of the store's ordering that one call of
// a cold group page examines to serve the page without the cache
// (group_page.lua); the build step of that call shrinks by half of those
// it examined.
const walkStep = 4000

func (s *Store) postArgs(poster, title, link string, now int64) []interface{} {
	k := s.keys
	return []interface{}{k.seq, k.orderingKey("score"), k.orderingKey("time"),
		poster, title, link, now, s.window, s.weight, s.orders, flag(s.uniqueLinks),
		k.article, k.voted, k.groupsOf, k.by, k.topBucket, k.link}
}

// voteArgs is the hottest path: its key and prefixes were boxed once, in
// votePrefixes.
func (s *Store) voteArgs(user, id string, v VoteType, now int64) []interface{} {
	args := make([]interface{}, 0, 5+len(s.votePrefixes))
	args = append(args, s.votePrefixes[0], id, user, int(v), now)
	return append(args, s.votePrefixes[1:]...)
}

// voteBatchArgs lays out ballots, which are valid, for one vote_batch script.
func (s *Store) voteBatchArgs(ballots []Ballot, now int64) []interface{} {
	args := make([]interface{}, 0, 1+len(s.votePrefixes)+3*len(ballots))
	args = append(args, s.votePrefixes[0], now)
	args = append(args, s.votePrefixes[1:]...)
	for _, b := range ballots {
		args = append(args, b.ID, b.User, int(b.Vote))
	}
	return args
}

func (s *Store) articlesArgs(ids []string) []interface{} {
	args := make([]interface{}, 0, 2+len(ids))
	args = append(args, s.keys.orderingKey("score"), s.keys.article)
	return appendStrings(args, ids)
}

func (s *Store) pageArgs(o Order, start, stop int64) []interface{} {
	name, desc := o.ordering()
	k := s.keys
	return []interface{}{k.orderingKey(name), k.orderingKey("score"), k.article, start, stop, flag(desc)}
}

func (s *Store) topSinceArgs(cutoff, start, stop int64) []interface{} {
	k := s.keys
	return []interface{}{k.orderingKey("top"), k.orderingKey("time"), k.orderingKey("score"),
		k.article, k.topBucket, cutoff, start, stop}
}

func (s *Store) votesArgs(user string, ids []string) []interface{} {
	args := make([]interface{}, 0, 4+len(ids))
	args = append(args, s.keys.orderingKey("score"), user, s.keys.article, s.keys.voted)
	return appendStrings(args, ids)
}

func (s *Store) groupAddArgs(id string, groups []string) []interface{} {
	k := s.keys
	args := make([]interface{}, 0, 8+len(groups))
	args = append(args, k.orderingKey("score"), id, MaxArticleGroups,
		k.article, k.groupsOf, k.group, k.by, k.cache)
	return appendStrings(args, groups)
}

func (s *Store) groupRemoveArgs(id string, groups []string) []interface{} {
	k := s.keys
	args := make([]interface{}, 0, 6+len(groups))
	args = append(args, k.orderingKey("score"), id, k.article, k.groupsOf, k.group, k.cache)
	return appendStrings(args, groups)
}

// appendStrings appends list to a script's arguments.
func appendStrings(args []interface{}, list []string) []interface{} {
	for _, s := range list {
		args = append(args, s)
	}
	return args
}

// groupPageArgs lays out a group page's script; walk is the most members
// of the ordering it may examine to serve the page without the cache
// (walkStep, or 0 for a build step alone).
func (s *Store) groupPageArgs(group string, o Order, start, stop int64, walk int) []interface{} {
	name, desc := o.ordering()
	k := s.keys
	return []interface{}{k.groupKey(group), k.cacheKey(group, name), k.orderingKey(name), k.orderingKey("score"),
		k.article, start, stop, flag(desc), s.cacheTTL, buildStep, walk}
}

// lifecycleKeys are the key prefixes delete.lua and prune.lua take.
func (s *Store) lifecycleKeys() []interface{} {
	k := s.keys
	return []interface{}{k.article, k.voted, k.groupsOf, k.group, k.by, k.cache, k.topBucket, k.link}
}

func (s *Store) deleteArgs(id string) []interface{} {
	return append([]interface{}{s.keys.orderingKey("score"), id}, s.lifecycleKeys()...)
}

func (s *Store) pruneArgs(last int64) []interface{} {
	return append([]interface{}{s.keys.orderingKey("time"), last, pruneStep, pruneWork}, s.lifecycleKeys()...)
}

func (s *Store) dropArgs(cursor string) []interface{} {
	return []interface{}{s.keys.seq, cursor, s.keys.pattern(), dropStep}
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
