package voting

import (
	"embed"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Every mutation and every read is one Lua script, so it is atomic and
// costs one round trip. The sources live in lua/: each names its KEYS and
// ARGV as locals at the top and says what it replies; every reply but a
// vote done is {status, ...} (reply.go). lua/lib/ holds the helpers they share, one
// concern a file (libFiles: the record, the group caches, the user
// pages, the rules, the vote, the comments, their removal, the delete,
// the walks), read as one text,
// libLua, in front of each script, which says so in its header: whole,
// in the Functions library the scripts run as, and as the helpers each
// uses in its EVALSHA form (functions.go).
//
// The argument list of each script is built here, in one function used by
// the store's method and by the benchmarks alike.
var (
	//go:embed lua/lib/*.lua
	libFS embed.FS
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
	//go:embed lua/page_for.lua
	pageForLua string
	//go:embed lua/top_since.lua
	topSinceLua string
	//go:embed lua/top_since_edge.lua
	topSinceEdgeLua string
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
	//go:embed lua/user_page.lua
	userPageLua string
	//go:embed lua/karma.lua
	karmaLua string
	//go:embed lua/top_users.lua
	topUsersLua string
	//go:embed lua/edit.lua
	editLua string
	//go:embed lua/reconfigure.lua
	reconfigureLua string
	//go:embed lua/rules_get.lua
	rulesGetLua string
	//go:embed lua/rules_set.lua
	rulesSetLua string
	//go:embed lua/restore.lua
	restoreLua string
	//go:embed lua/restore_comments.lua
	restoreCommentsLua string
)

// script is one of the store's scripts: a function of the store's
// library, and an EVALSHA script for servers without Functions
// (functions.go).
type script struct {
	*redis.Script              // source
	name          string       // for errors and tests
	source        string       // body after the helpers of lua/lib/ it uses, comment lines dropped
	body          string       // its file: what the library wraps
	function      *interface{} // its name in the library (a string), set once the library is built, boxed once
	scriptSpec                 // what scriptTable says of it
}

// scriptSpec is what the store knows of a script beside its source, all
// in one place (scriptTable).
type scriptSpec struct {
	keyCount int    // its own KEYS; the store declares the fence after them (fenced)
	mode     string // the identity check it opens the store with, the first line of its file (lib/base.lua openStore)
	readOnly bool   // writes nothing: flagged no-writes in the library, sent to the read pool (WithReadPool)
	allowOOM bool   // only removes, or renews a TTL: flagged allow-oom, so that it runs on a full Redis
	wait     bool   // a store with waits (WithWaitReplicas, WithWaitAOF) waits for them after it (durable.go)
	once     bool   // must not run twice for one call: it makes a new id (eval)
}

// Modes of the identity check (lib/base.lua openStore): a write runs
// only where the record is the store's identity; a read where the
// layouts are; the writes and reads about comments (modeWriteComments,
// modeReadComments) refuse besides while Reconfigure moves the comments
// of layout 4; none checks nothing (a vote checks where it knows it
// writes, Drop removes a store whatever its identity, Reconfigure
// changes it, and the restores of votectl write before it is recorded).
const (
	modeWrite         = "w"
	modeRead          = "r"
	modeWriteComments = "wc"
	modeReadComments  = "rc"
	modeNone          = "n"
)

// scriptTable describes every script of the store: its keys, its
// identity check, and how it runs. A script that writes waits for the
// replicas but where its only writes are caches a failover may lose at
// no cost (a group's cached pages and their TTL, and the dropping of
// gone articles and comments from users' pages).
var scriptTable = map[string]scriptSpec{
	// name                keys, mode, readOnly, allowOOM, wait, once
	"post":             {3, modeWrite, false, false, true, true},
	"comment":          {2, modeWriteComments, false, false, true, true},
	"vote":             {1, modeNone, false, false, true, false},
	"vote_batch":       {1, modeWrite, false, false, true, false},
	"comment_vote":     {1, modeNone, false, false, true, false},
	"edit":             {1, modeWrite, false, false, true, false},
	"comment_edit":     {1, modeWriteComments, false, false, true, false},
	"group_add":        {1, modeWrite, false, false, true, false},
	"rules_set":        {1, modeWrite, false, false, true, false},
	"group_remove":     {1, modeWrite, false, true, true, false},
	"delete":           {1, modeWrite, false, true, true, false},
	"prune":            {1, modeWrite, false, true, true, false},
	"comment_delete":   {2, modeWriteComments, false, true, true, false},
	"drop":             {1, modeNone, false, true, true, false},
	"reconfigure":      {3, modeNone, false, false, true, false},
	"restore":          {1, modeNone, false, false, true, false},
	"restore_comments": {1, modeNone, false, false, true, false},
	"restore_entries":  {1, modeNone, false, false, true, false},
	"group_page":       {3, modeRead, false, true, false, false},
	"group_renew":      {1, modeRead, false, true, false, false},
	"user_page":        {2, modeRead, false, true, false, false},
	"user_comments":    {1, modeReadComments, false, true, false, false},
	"articles":         {1, modeRead, true, false, false, false},
	"page":             {1, modeRead, true, false, false, false},
	"page_for":         {1, modeRead, true, false, false, false},
	"top_since":        {2, modeRead, true, false, false, false},
	"top_since_edge":   {2, modeRead, true, false, false, false},
	"votes":            {1, modeRead, true, false, false, false},
	"count":            {1, modeRead, true, false, false, false},
	"groups":           {2, modeRead, true, false, false, false},
	"group_read":       {2, modeRead, true, false, false, false},
	"karma":            {1, modeRead, true, false, false, false},
	"top_users":        {1, modeRead, true, false, false, false},
	"rules_get":        {1, modeRead, true, false, false, false},
	"thread":           {1, modeReadComments, true, false, false, false},
	"comments":         {1, modeReadComments, true, false, false, false},
	"comment_votes":    {1, modeReadComments, true, false, false, false},
	// Moderation (moderation.go).
	"reverse":        {1, modeWrite, false, false, true, false},
	"suspend":        {1, modeWrite, false, false, true, false},
	"votes_by":       {1, modeRead, true, false, false, false},
	"voters":         {1, modeRead, true, false, false, false},
	"comment_voters": {1, modeRead, true, false, false, false},
	"suspended":      {1, modeRead, true, false, false, false},
	"events":         {1, modeRead, true, false, false, false},
}

// newScript makes the script name of its file src, as scriptTable
// describes it. A name the table lacks is a mistake of this package: it
// panics.
func newScript(name, src string) script {
	spec, ok := scriptTable[name]
	if !ok {
		panic("voting: script " + name + " is not in scriptTable")
	}
	// Without comment lines: VoteBatch sends its script's source with
	// EVAL (batch.go), whose body Redis hashes on every call.
	source := compactLua(trimLib(libLuaParts, src) + src)
	sc := script{Script: redis.NewScript(spec.keyCount+1, source), name: name, source: source, body: src,
		function: new(interface{}), scriptSpec: spec}
	registry = append(registry, sc)
	return sc
}

// declared is the number of KEYS sc is sent with: its own, the fence
// and the store's record (fenced).
func (sc script) declared() int { return sc.keyCount + 1 }

// callRoom is how many more arguments a call of a function has than its
// script's keys and arguments: the function's name, the number of keys
// and the fence.
const callRoom = 3

// withRoom returns a slice for n keys and arguments of a script, with
// room for callArgs to lay out the call in it.
func withRoom(n int) []interface{} { return make([]interface{}, 0, n+callRoom) }

// libFiles are the files of lua/lib/, in the order they are read: each
// uses only those before it, as its header says.
var libFiles = []string{"base", "record", "cache", "pages", "rules", "moderation", "ballot", "tree", "removal", "purge", "walk", "reversal"}

// libLua is the helpers of lua/lib/, its files one after the other in
// the order of libFiles.
var libLua = readLib(libFS, libFiles)

// readLib returns the files of lua/lib/ in fsys named by files, in that
// order, one text. A file of lua/lib/ that files leaves out, or a name of
// files with no file, is a mistake of this package: it panics.
func readLib(fsys embed.FS, files []string) string {
	entries, err := fsys.ReadDir("lua/lib")
	if err != nil {
		panic(err)
	}
	if len(entries) != len(files) {
		panic(fmt.Sprintf("voting: lua/lib holds %d files, libFiles names %d", len(entries), len(files)))
	}
	var b strings.Builder
	for i, name := range files {
		src, err := fsys.ReadFile("lua/lib/" + name + ".lua")
		if err != nil {
			panic(err)
		}
		if i > 0 {
			b.WriteString("\n")
		}
		b.Write(src)
	}
	return b.String()
}

// libLuaParts are the helpers of lua/lib/, for the scripts to take the
// ones they use.
var libLuaParts = libParts(libLua)

var (
	postScript            = newScript("post", postLua)
	voteScript            = newScript("vote", voteLua)
	voteBatchScript       = newScript("vote_batch", voteBatchLua)
	articlesScript        = newScript("articles", articlesLua)
	pageScript            = newScript("page", pageLua)
	pageForScript         = newScript("page_for", pageForLua)
	topSinceScript        = newScript("top_since", topSinceLua)
	topSinceEdge          = newScript("top_since_edge", topSinceEdgeLua)
	votesScript           = newScript("votes", votesLua)
	countScript           = newScript("count", countLua)
	groupAddScript        = newScript("group_add", groupAddLua)
	groupRemoveScript     = newScript("group_remove", groupRemoveLua)
	groupsScript          = newScript("groups", groupsLua)
	groupPageScript       = newScript("group_page", groupPageLua)
	deleteScript          = newScript("delete", deleteLua)
	pruneScript           = newScript("prune", pruneLua)
	dropScript            = newScript("drop", dropLua)
	userPageScript        = newScript("user_page", userPageLua)
	karmaScript           = newScript("karma", karmaLua)
	topUsersScript        = newScript("top_users", topUsersLua)
	editScript            = newScript("edit", editLua)
	reconfigureScript     = newScript("reconfigure", reconfigureLua)
	rulesGetScript        = newScript("rules_get", rulesGetLua)
	rulesSetScript        = newScript("rules_set", rulesSetLua)
	restoreScript         = newScript("restore", restoreLua)
	restoreCommentsScript = newScript("restore_comments", restoreCommentsLua)
)

// The scripts of comments (comments.go).
var (
	//go:embed lua/comment.lua
	commentLua string
	//go:embed lua/comment_vote.lua
	commentVoteLua string
	//go:embed lua/thread.lua
	threadLua string
	//go:embed lua/comments.lua
	commentsLua string
	//go:embed lua/comment_votes.lua
	commentVotesLua string
	//go:embed lua/comment_edit.lua
	commentEditLua string
	//go:embed lua/comment_delete.lua
	commentDeleteLua string
	//go:embed lua/user_comments.lua
	userCommentsLua string

	commentScript       = newScript("comment", commentLua)
	commentVoteScript   = newScript("comment_vote", commentVoteLua)
	threadScript        = newScript("thread", threadLua)
	commentsScript      = newScript("comments", commentsLua)
	commentVotesScript  = newScript("comment_votes", commentVotesLua)
	commentEditScript   = newScript("comment_edit", commentEditLua)
	commentDeleteScript = newScript("comment_delete", commentDeleteLua)
	userCommentsScript  = newScript("user_comments", userCommentsLua)
)

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

// voteArgs is the hottest path: its key and prefixes were boxed once, in
// votePrefixes.
func (s *Store) voteArgs(user, id string, v VoteType, now int64) []interface{} {
	args := withRoom(5 + len(s.votePrefixes) + len(s.rules.vote) + 1) // and appendVoteRules's
	args = append(args, s.votePrefixes[0], id, user, voteArg(v), now)
	return append(args, s.votePrefixes[1:]...)
}

// voteArg is a valid vote as a script's argument, boxed without an
// allocation: a constant's box is static, an int's of -1 is not.
func voteArg(v VoteType) interface{} {
	switch v {
	case Upvote:
		return 1
	case Downvote:
		return -1
	}
	return 0
}

// voteBatchArgs lays out ballots, which are valid, for one vote_batch
// script; rules are the vote rules (Store.voteBatchRules).
func (s *Store) voteBatchArgs(ballots []Ballot, now int64, rules []interface{}) []interface{} {
	args := make([]interface{}, 0, 2+len(s.votePrefixes)+len(rules)+3*len(ballots))
	args = append(args, s.votePrefixes[0], now)
	args = append(args, s.votePrefixes[1:]...)
	if !s.votesCarryPages() {
		args = append(args, "", "", "") // vote_batch.lua's ARGV[5..7]: no upvoted pages, vote logs or events
	}
	args = append(args, rules...)
	for _, b := range ballots {
		args = append(args, b.ID, b.User, voteArg(b.Vote))
	}
	return args
}

func (s *Store) articlesArgs(ids []string) []interface{} {
	args := make([]interface{}, 0, 2+len(ids))
	args = append(args, s.keys.orderingKey("score"), s.keys.article)
	return appendStrings(args, ids)
}

func (s *Store) pageArgs(o Order, start, stop int64) []interface{} {
	return s.pageArgsRoom(o, start, stop, 0)
}

// pageForArgs lays out page_for.lua's arguments: pageArgs's, then the
// voter records' prefix and the user.
func (s *Store) pageForArgs(user string, o Order, start, stop int64) []interface{} {
	return append(s.pageArgsRoom(o, start, stop, 2), s.votePrefixes[2], user)
}

// pageArgsRoom is pageArgs with room for more arguments after them.
func (s *Store) pageArgsRoom(o Order, start, stop int64, more int) []interface{} {
	name, desc := o.ordering()
	args := withRoom(5 + more)
	return append(args, s.orderingArgs[name], s.votePrefixes[1], start, stop, flagArg(desc))
}

// flagArg is flag(b) boxed without an allocation.
func flagArg(b bool) interface{} {
	if b {
		return "1"
	}
	return "0"
}

// topSinceArgs lays out top_since.lua's arguments; edge, when not nil,
// lists the first members of the edge bucket's part in the period, which
// the steps of top_since_edge.lua found (Store.topSinceEdge). With a
// user, the reply carries their votes (TopSinceFor); the edge's members
// come after the user, so a plain read sends "" for both.
func (s *Store) topSinceArgs(user string, cutoff, start, stop int64, edge []string) []interface{} {
	k := s.keys
	args := []interface{}{k.orderingKey("top"), k.orderingKey("time"), k.article, k.topBucket, cutoff, start, stop, s.edge}
	given := ""
	if edge != nil {
		given = "1"
	}
	voted := interface{}("")
	if user != "" {
		voted = s.votePrefixes[2]
	}
	return appendStrings(append(args, given, voted, user), edge)
}

// withViewer appends to the arguments of a read script of article rows
// (group_page.lua, group_read.lua, user_page.lua) the voter records'
// prefix and user, whose votes its reply then carries after the rows
// (lib/record.lua withVotes); a plain read (user "") sends neither, and
// its script reads no vote.
func (s *Store) withViewer(args []interface{}, user string) []interface{} {
	if user == "" {
		return args
	}
	return append(args, s.votePrefixes[2], user)
}

// topEdgeSize is the size in seconds of the TopSince buckets the period
// starts in (lib/base.lua BUCKETS[1]).
const topEdgeSize = 600

// floorDiv returns a divided by b (> 0), rounded down.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// topSinceEdgeArgs lays out a step of top_since_edge.lua: the edge
// bucket's members posted in [from, to), after (afterTime, afterMember),
// above (overValue, overMember).
func (s *Store) topSinceEdgeArgs(from, to int64, afterTime, afterMember, overValue, overMember string) []interface{} {
	k := s.keys
	return []interface{}{k.orderingKey("time"), k.topBucketKey(topEdgeSize, floorDiv(from, topEdgeSize)),
		from, to, afterTime, afterMember, s.edge, overValue, overMember}
}

// votesArgs lays out votes.lua's arguments; exists asks it to tell an
// article that does not exist from one whose voting closed.
func (s *Store) votesArgs(user string, ids []string, exists bool) []interface{} {
	args := withRoom(5 + len(ids))
	// The score key and the prefixes of articles and voter records, boxed
	// once (votePrefixes).
	args = append(args, s.votePrefixes[0], user, s.votePrefixes[1], s.votePrefixes[2], flagArg(exists))
	return appendStrings(args, ids)
}

func (s *Store) groupAddArgs(id string, groups []string) []interface{} {
	k := s.keys
	args := make([]interface{}, 0, 9+len(groups))
	args = append(args, k.orderingKey("score"), id, MaxArticleGroups,
		k.article, k.groupsOf, k.group, k.by, k.cache, k.voted)
	return appendStrings(args, groups)
}

func (s *Store) groupRemoveArgs(id string, groups []string) []interface{} {
	k := s.keys
	args := make([]interface{}, 0, 7+len(groups))
	args = append(args, k.orderingKey("score"), id, k.article, k.groupsOf, k.group, k.cache, k.voted)
	return appendStrings(args, groups)
}

// appendStrings appends list to a script's arguments.
func appendStrings(args []interface{}, list []string) []interface{} {
	for _, s := range list {
		args = append(args, s)
	}
	return args
}

// groupPageArgs lays out a group page's script, with the work of one
// call's build step and walk (buildStep and walkStep but in tests).
func (s *Store) groupPageArgs(group string, o Order, start, stop int64) []interface{} {
	name, desc := o.ordering()
	k := s.keys
	return []interface{}{k.groupKey(group), k.cacheKey(group, name), k.orderingKey(name),
		k.article, start, stop, flag(desc), s.cacheTTL, s.step, s.walk}
}

// lifecycleKeys are the key prefixes delete.lua and prune.lua take,
// then the comments a step of theirs removes (purgeStep). The
// submitted pages' is passed whether or not the store keeps pages: a
// delete unlists the article however it was posted.
func (s *Store) lifecycleKeys() []interface{} {
	k := s.keys
	return []interface{}{k.article, k.voted, k.groupsOf, k.group, k.by, k.cache, k.topBucket, k.link,
		k.submitted, k.comment, k.thread, k.kids, k.cvoted, k.comments, purgeStep}
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

// userPageArgs reads a page of a user's list at key: start live entries
// skipped, then up to the page size.
func (s *Store) userPageArgs(key string, start int) []interface{} {
	k := s.keys
	return []interface{}{key, k.orderingKey("score"), k.article, start, s.pageSize}
}

// The scripts of a store with a read pool (WithReadPool, replica.go).
var (
	//go:embed lua/group_read.lua
	groupReadLua string
	//go:embed lua/group_renew.lua
	groupRenewLua string

	groupReadScript  = newScript("group_read", groupReadLua)
	groupRenewScript = newScript("group_renew", groupRenewLua)
)

func (s *Store) groupReadArgs(group string, o Order, start, stop int64) []interface{} {
	name, desc := o.ordering()
	k := s.keys
	return []interface{}{k.groupKey(group), k.cacheKey(group, name), k.article, start, stop, flag(desc)}
}

func (s *Store) groupRenewArgs(group string, o Order) []interface{} {
	name, _ := o.ordering()
	return []interface{}{s.keys.cacheKey(group, name), s.cacheTTL}
}

func (s *Store) groupsArgs(id string) []interface{} {
	return []interface{}{s.keys.articleKey(id), s.keys.groupsOfKey(id)}
}

// compactLua drops the lines of src that are blank or only a comment.
func compactLua(src string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(src, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "--") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// registry is every script newScript made, in the order it made them:
// the scripts of the library (functions.go).
var registry []script

// libPart is one top-level statement of lua/lib/ (a helper or a constant)
// with the comment above it, and the names it defines.
type libPart struct {
	names []string
	text  string
}

var (
	luaComment = regexp.MustCompile(`--[^\n]*`)
	luaName    = regexp.MustCompile(`[.:]?[A-Za-z_][A-Za-z0-9_]*`)
	luaLocal   = regexp.MustCompile(`^local\s+(?:function\s+([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_, ]*?)\s*=)`)
)

// libParts splits lib, the text of lua/lib/ (libLua), into its top-level statements,
// which are local definitions: each starts at a line that starts with
// "local", and takes the comment lines above it. Any other line that is
// not a comment or blank (indented, or "end", "}") continues the
// statement above.
func libParts(lib string) []libPart {
	var parts []libPart
	var pending []string // comment and blank lines not yet in a part
	for _, line := range strings.SplitAfter(lib, "\n") {
		m := luaLocal.FindStringSubmatch(line)
		if m == nil {
			if len(parts) > 0 && strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "--") {
				parts[len(parts)-1].text += strings.Join(pending, "") + line // the body of the last part
				pending = nil
			} else {
				pending = append(pending, line)
			}
			continue
		}
		p := libPart{text: strings.Join(pending, "") + line}
		pending = nil
		if m[1] != "" {
			p.names = []string{m[1]}
		} else {
			for _, n := range strings.Split(m[2], ",") {
				p.names = append(p.names, strings.TrimSpace(n))
			}
		}
		parts = append(parts, p)
	}
	return parts
}

// usedNames returns the names code uses, its comments left out; field
// names (after a dot or colon) are not names.
func usedNames(code string) map[string]bool {
	used := map[string]bool{}
	for _, n := range luaName.FindAllString(luaComment.ReplaceAllString(code, ""), -1) {
		if n[0] != '.' && n[0] != ':' {
			used[n] = true
		}
	}
	return used
}

// trimLib returns the parts of lua/lib/ that body uses, directly or
// through other parts, in their order in libLua.
func trimLib(parts []libPart, body string) string {
	used := usedNames(body)
	in := make([]bool, len(parts))
	for changed := true; changed; {
		changed = false
		for i := len(parts) - 1; i >= 0; i-- {
			if in[i] {
				continue
			}
			for _, n := range parts[i].names {
				if used[n] {
					in[i], changed = true, true
					for u := range usedNames(parts[i].text) {
						used[u] = true
					}
					break
				}
			}
		}
	}
	var b strings.Builder
	for i, p := range parts {
		if in[i] {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// appendVoteRules appends the vote rules, at the time t, to the
// arguments of vote.lua: nothing for a store without them.
func (s *Store) appendVoteRules(args []interface{}, t time.Time) []interface{} {
	if s.rules.vote == nil {
		return args
	}
	args = append(args, t.UnixMilli())
	return append(args, s.rules.vote...)
}

// voteBatchRules returns vote_batch.lua's rule arguments at the time t:
// how many follow, then the rules as vote.lua takes them.
func (s *Store) voteBatchRules(t time.Time) []interface{} {
	if s.rules.vote == nil {
		return []interface{}{0}
	}
	return s.appendVoteRules([]interface{}{1 + len(s.rules.vote)}, t)
}

// appendPostRules appends to post.lua's arguments the rules record and
// the store's words, which the first post of an empty store records, and
// the rules of Post (lib/rules.lua postRules) at the time t: now and the
// poster's last-post key, for a store with one. A store with no rule
// sends none of them.
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

// editArgs lays out edit.lua's arguments: the edit window and the
// repost span are the store's rules, read from its record (the
// store's words: "" for none, off at any clock).
func (s *Store) editArgs(id, user, title, link string, t time.Time) []interface{} {
	k := s.keys
	return []interface{}{k.orderingKey("score"), id, user, title, link, t.UnixMilli(),
		flag(s.uniqueLinks), k.rules, s.rules.want, k.article, k.link}
}

// commentArgs lays out comment.lua's arguments: the comment, the store's
// window, weight and comment orderings, the key prefixes, and the
// comment interval (WithCommentInterval) at the time t: the poster's
// last-comment key, the rules record and the store's words.
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

// commentVoteArgs lays out comment_vote.lua's arguments before the vote
// rules (appendVoteRules).
func (s *Store) commentVoteArgs(user, id string, v VoteType, now int64) []interface{} {
	k := s.keys
	args := make([]interface{}, 0, 10+1+len(s.rules.vote))
	log := ""
	if s.voteLog {
		log = k.userVotes
	}
	return append(args, k.commentKey(id), id, user, voteArg(v), now, k.comment, k.cvoted, k.kids, log, s.events)
}

// threadArgs lays out thread.lua's arguments: the root, an article
// (kind "a") or a comment ("c"), and the ordering of order.
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
// its reply then carries after the rows (ThreadFor, RepliesFor); a plain
// read (user "") sends threadArgs's alone.
func (s *Store) threadForArgs(user, kind, id string, order Order, limit int) []interface{} {
	args := s.threadArgs(kind, id, order, limit)
	if user == "" {
		return args
	}
	return append(args, s.keys.cvoted, user)
}

func (s *Store) commentsArgs(ids []string) []interface{} {
	args := make([]interface{}, 0, 2+len(ids))
	return appendStrings(append(args, s.keys.cseq, s.keys.comment), ids)
}

func (s *Store) commentVotesArgs(user string, ids []string) []interface{} {
	args := make([]interface{}, 0, 4+len(ids))
	return appendStrings(append(args, s.keys.cseq, user, s.keys.comment, s.keys.cvoted), ids)
}

func (s *Store) commentEditArgs(id, user, body string, t time.Time) []interface{} {
	return []interface{}{s.keys.commentKey(id), id, user, body, t.UnixMilli(), s.keys.rules, s.rules.want, s.keys.comment}
}

// commentDeleteArgs: the commented pages' prefix is passed whether or not
// the store keeps pages, as lifecycleKeys passes the submitted pages'.
// An id of "" goes on with a removal left (comment_delete.lua).
func (s *Store) commentDeleteArgs(id string) []interface{} {
	k := s.keys
	key := k.removing
	if id != "" {
		key = k.commentKey(id)
	}
	return []interface{}{key, k.comments, id, k.comment, k.thread, k.kids, k.commented, k.removing, ancestorStep, ancestorWalk}
}

func (s *Store) userCommentsArgs(user string, start int) []interface{} {
	return []interface{}{s.keys.commentedKey(user), s.keys.comment, start, s.pageSize}
}
