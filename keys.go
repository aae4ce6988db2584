package voting

import (
	"strings"

	"github.com/votekit/voting/internal/layout"
)

// keys names every Redis key of one store; nothing else in the package
// builds a key name. Every name starts with "{prefix}:", a Redis Cluster
// hash tag, so all keys of a store live in one hash slot and one script may
// touch any of them. The layout is docs/LAYOUT.md's ("Keys"), which says
// what each family holds; a test (docs_test.go) holds its key table to
// newKeys.
//
// Scripts that reach keys named after an id, a group, an ordering or a
// bucket receive the family prefix from here and append only that name.
// No family's fixed part is a prefix of another's, and ids are canonical
// decimals, so no id or group name can reach another family's keys.
type keys struct {
	prefix string // as given to WithKeyPrefix, without braces
	tag    string // layout.Tag(prefix), which every key starts with
	seq    string
	// record holds the store's identity: its key layout version and the
	// options every process writing to it shares (identity.go), which
	// every script checks (lib/base.lua identity). backfill holds the cursor
	// of a Reconfigure that indexes the live links, while it runs.
	record, backfill string
	// The family prefixes to which a name is appended.
	by, topBucket, article, voted, groupsOf, group, cache, link string
	// A user's pages (WithUserPages): a user's name is appended.
	submitted, upvoted string
	// Karma and the rules (karma.go, rules.go); rules holds the numbers
	// of the rules that are on (lib/rules.lua storeRules).
	karma, voteLog, lastPost, rules string
	// Comments (comments.go): the comment id counter, the per-article
	// live counts (one hash, aid -> count), and the families to which a
	// comment id, an article id, "<ordering>:<parent>" or a user's name is
	// appended.
	cseq, comments                                              string
	comment, body, thread, kids, cvoted, commented, lastComment string
	// moving flags a Reconfigure moving the comments of a store of
	// layout 4 into this layout, whose bodies were strings at body (a
	// family of layout 4 only), and whose replies were ordered at
	// kids "best:" and "top:" (reconfigure.lua).
	moving string
	// removing holds the cids of deleted comments left without replies
	// whose removal, with the deleted ancestors above them, a
	// DeleteComment left to a later step (comments.go DeleteComment,
	// lib/removal.lua).
	removing string
	// Moderation (moderation.go): the prefix of the users' vote logs
	// (WithVoteLog), to which a user's name is appended, and the hash of
	// the suspensions, which the scripts name as record's sibling
	// (lib/moderation.lua suspendedKeyOf).
	userVotes, suspended string
	// events is the stream of vote events (WithVoteEvents).
	events string
}

func newKeys(prefix string) keys {
	tag := layout.Tag(prefix)
	return keys{
		prefix:    prefix,
		tag:       tag,
		seq:       tag + layout.Seq,
		record:    tag + layout.Store,
		backfill:  tag + layout.Backfill,
		by:        tag + layout.By,
		topBucket: tag + layout.Top,
		article:   tag + layout.Article,
		voted:     tag + layout.Voted,
		groupsOf:  tag + layout.Groups,
		group:     tag + layout.Group,
		cache:     tag + layout.Cache,
		link:      tag + layout.Link,
		submitted: tag + layout.Submitted,
		upvoted:   tag + layout.Upvoted,
		karma:     tag + layout.Karma,
		voteLog:   tag + layout.VoteLog,
		lastPost:  tag + layout.LastPost,
		rules:     tag + layout.Rules,

		cseq:        tag + layout.CSeq,
		comments:    tag + layout.Comments,
		comment:     tag + layout.Comment,
		body:        tag + layout.CBody,
		thread:      tag + layout.Thread,
		kids:        tag + layout.Kids,
		cvoted:      tag + layout.CVoted,
		commented:   tag + layout.Commented,
		lastComment: tag + layout.LastComment,
		moving:      tag + layout.Moving,
		removing:    tag + layout.Removing,

		userVotes: tag + layout.UserVotes,
		suspended: tag + layout.Suspended,
		events:    tag + layout.Events,
	}
}

// fence returns the key every script declares after its own keys
// (functions.go fenced): the record's key, a colon and the store's
// identity, "{prefix}:store:6 karma userpages". The store never writes it, so
// that Redis refuses every script, before it runs, while the store's
// hash slot moves between cluster nodes (docs/OPERATIONS.md, "Redis Cluster"); and
// its name tells each script the record's key and the identity to check
// it against (lib/base.lua identity) at no cost of an argument.
func (k keys) fence(identity string) string { return k.record + ":" + identity }

func (k keys) articleKey(id string) string  { return k.article + id }
func (k keys) votedKey(id string) string    { return k.voted + id }
func (k keys) groupsOfKey(id string) string { return k.groupsOf + id }
func (k keys) groupKey(name string) string  { return k.group + name }

// submittedKey and upvotedKey return a user's pages (WithUserPages).
func (k keys) submittedKey(user string) string { return k.submitted + user }
func (k keys) upvotedKey(user string) string   { return k.upvoted + user }

// orderingKey returns the zset of an ordering ("score", "time", "top", ...).
func (k keys) orderingKey(ordering string) string { return k.by + ordering }

// cacheKey returns the cached page of a group in an ordering. Both
// directions of one ordering share a cache.
func (k keys) cacheKey(group, ordering string) string { return k.cache + ordering + ":" + group }

// topBucketKey returns the TopSince bucket of size seconds that holds
// time t (layout.Bucket).
func (k keys) topBucketKey(size, t int64) string { return k.tag + layout.Bucket(size, t) }

// votePrefixes returns the score key and the key prefixes that vote.lua
// and vote_batch.lua take, in their order, boxed: the store keeps them
// for every vote (vote.go voteArgs). The prefixes that only a vote on
// an article in groups or optional orders uses (its groups, the
// orderings, the group caches and the TopSince buckets) go as one
// argument, newline-separated (a prefix has no newline, checkPrefix),
// which lib/ballot.lua fill splits when it needs them: every argument costs Redis
// about a tenth of a microsecond on each vote.
func (k keys) votePrefixes() []interface{} {
	more := strings.Join([]string{k.groupsOf, k.by, k.cache, k.topBucket}, "\n")
	return []interface{}{k.orderingKey("score"), k.article, k.voted, more}
}

// pattern returns a SCAN pattern that matches every key of the store and
// nothing else (layout.Pattern).
func (k keys) pattern() string { return layout.Pattern(k.prefix) }

// lastPostKey returns the key of a poster's last post time (WithPostInterval).
func (k keys) lastPostKey(poster string) string { return k.lastPost + poster }

// commentKey returns a comment's record; threadKey an article's top
// level of comments.
func (k keys) commentKey(id string) string { return k.comment + id }
func (k keys) threadKey(id string) string  { return k.thread + id }

// commentedKey returns a user's comments page (WithUserPages).
func (k keys) commentedKey(user string) string { return k.commented + user }

// lastCommentKey returns the key of a user's last comment time
// (WithCommentInterval).
func (k keys) lastCommentKey(user string) string { return k.lastComment + user }

// userVotesKey returns a user's vote log (WithVoteLog).
func (k keys) userVotesKey(user string) string { return k.userVotes + user }
