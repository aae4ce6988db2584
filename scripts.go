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
// pages, the rules, the vote, the delete, the walks), read as one text,
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
)

// script is one of the store's scripts: a function of the store's
// library, and an EVALSHA script for servers without Functions
// (functions.go).
type script struct {
	*redis.Script              // source
	name          string       // for errors and tests
	keyCount      int          // its own KEYS; the store declares the fence after them (fenced)
	source        string       // body after the helpers of lua/lib/ it uses, comment lines dropped
	body          string       // the identity check, then src: what the library wraps
	readOnly      bool         // writes nothing: flagged no-writes in the library
	once          bool         // must not run twice for one call: it makes a new id (eval)
	function      *interface{} // its name in the library (a string), set once the library is built, boxed once
}

func newScript(name string, keyCount int, src string) script {
	// Every script starts by checking the store's record (lib/base.lua
	// identity), which the store declares after the fence (fenced).
	src = identityPrologue(name) + src
	// Without comment lines: VoteBatch sends its script's source with
	// EVAL (batch.go), whose body Redis hashes on every call.
	source := compactLua(trimLib(libLuaParts, src) + src)
	sc := script{redis.NewScript(keyCount+1, source), name, keyCount, source, src, readOnlyScripts[name], onceScripts[name], new(interface{})}
	registry = append(registry, sc)
	return sc
}

// identityPrologue is the start of the script name: lib/base.lua checkStore,
// in its mode. Drop removes a store whatever its identity, and
// Reconfigure changes it; the reads, and the reads that write a little
// (a group cache, a user page's cleanup), pass where the layout is this
// one's; Vote checks inside lib/vote.lua vote, before its first write, so
// that a vote that changes nothing reads no record.
func identityPrologue(name string) string {
	mode := "w"
	switch {
	case name == "drop", name == "reconfigure", name == "vote", name == "comment_vote":
		mode = "n" // a vote checks where it knows it writes (lib/vote.lua vote, comment_vote.lua)
	case readOnlyScripts[name], name == "group_page", name == "group_renew", name == "user_page", name == "user_comments":
		mode = "r"
	}
	check := ""
	if mode != "n" {
		check = "storeUnrecorded = checkStore(storeKey, storeIdentity, '" + mode + "') "
	}
	return "local storeFence = fences[KEYS[#KEYS]] or fenceOf(KEYS[#KEYS]) " +
		"local storeKey, storeIdentity, storeUnrecorded = storeFence[1], storeFence[2], false " + check + "\n"
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
var libFiles = []string{"base", "record", "cache", "pages", "rules", "moderation", "vote", "comments", "delete", "walk", "reverse"}

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
	postScript        = newScript("post", 3, postLua)
	voteScript        = newScript("vote", 1, voteLua)
	voteBatchScript   = newScript("vote_batch", 1, voteBatchLua)
	articlesScript    = newScript("articles", 1, articlesLua)
	pageScript        = newScript("page", 1, pageLua)
	pageForScript     = newScript("page_for", 1, pageForLua)
	topSinceScript    = newScript("top_since", 2, topSinceLua)
	topSinceEdge      = newScript("top_since_edge", 2, topSinceEdgeLua)
	votesScript       = newScript("votes", 1, votesLua)
	countScript       = newScript("count", 1, countLua)
	groupAddScript    = newScript("group_add", 1, groupAddLua)
	groupRemoveScript = newScript("group_remove", 1, groupRemoveLua)
	groupsScript      = newScript("groups", 2, groupsLua)
	groupPageScript   = newScript("group_page", 3, groupPageLua)
	deleteScript      = newScript("delete", 1, deleteLua)
	pruneScript       = newScript("prune", 1, pruneLua)
	dropScript        = newScript("drop", 1, dropLua)
	userPageScript    = newScript("user_page", 2, userPageLua)
	karmaScript       = newScript("karma", 1, karmaLua)
	topUsersScript    = newScript("top_users", 1, topUsersLua)
	editScript        = newScript("edit", 1, editLua)
	reconfigureScript = newScript("reconfigure", 3, reconfigureLua)
)

// allScripts is every script of the store.
var allScripts = []script{
	postScript, voteScript, voteBatchScript, articlesScript, pageScript, pageForScript,
	topSinceScript, topSinceEdge, votesScript, countScript, groupAddScript,
	groupRemoveScript, groupsScript, groupPageScript, deleteScript,
	pruneScript, dropScript, userPageScript, groupReadScript, groupRenewScript,
	karmaScript, topUsersScript, editScript, reconfigureScript,
	commentScript, commentVoteScript, threadScript, commentsScript, commentVotesScript,
	commentEditScript, commentDeleteScript, userCommentsScript,
	votesByScript, votersScript, commentVotersScript, reverseScript, suspendScript, suspendedScript, eventsScript, // moderation.go
}

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

	commentScript       = newScript("comment", 2, commentLua)
	commentVoteScript   = newScript("comment_vote", 1, commentVoteLua)
	threadScript        = newScript("thread", 1, threadLua)
	commentsScript      = newScript("comments", 1, commentsLua)
	commentVotesScript  = newScript("comment_votes", 1, commentVotesLua)
	commentEditScript   = newScript("comment_edit", 1, commentEditLua)
	commentDeleteScript = newScript("comment_delete", 2, commentDeleteLua)
	userCommentsScript  = newScript("user_comments", 1, userCommentsLua)
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

	groupReadScript  = newScript("group_read", 2, groupReadLua)
	groupRenewScript = newScript("group_renew", 1, groupRenewLua)
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

// readOnlyScripts are the scripts that write nothing: their functions
// are flagged no-writes.
var readOnlyScripts = map[string]bool{
	"articles": true, "page": true, "page_for": true, "top_since": true, "top_since_edge": true, "votes": true, "count": true, "groups": true,
	"group_read": true, "karma": true, "top_users": true,
	"thread": true, "comments": true, "comment_votes": true,
	"votes_by": true, "voters": true, "comment_voters": true, "suspended": true, "events": true,
}

// onceScripts are the scripts that make a new id, Post's and Comment's:
// run twice, they post twice. Every other script, run again with the same
// arguments, leaves what it left (a vote sets the user's vote, an edit
// the text, a removal removes) and is sent again where its connection was
// dropped (eval).
var onceScripts = map[string]bool{"post": true, "comment": true}

// allowOOMScripts are the scripts that only remove (Delete, Prune, Drop,
// RemoveFromGroups, the pages' cleanup of gone articles) or renew a
// TTL, and the group page, whose warm read renews its cache's TTL: their
// functions are flagged allow-oom, and sent as scripts they are sent
// again so flagged where a full Redis refused them (runScript). Redis
// refuses a function without the flag or no-writes, whole, on a server
// at its maxmemory under noeviction, and a script without flags at its
// first command that may grow memory: without the flag Delete, Prune,
// Drop and DeleteComment, the calls that free memory, and the reads
// that write a little, would fail on a full Redis. A cold group page's
// step may so add up to about two thousand members past maxmemory.
var allowOOMScripts = map[string]bool{
	"delete": true, "prune": true, "drop": true, "group_remove": true,
	"user_page": true, "group_page": true, "group_renew": true,
	"comment_delete": true, "user_comments": true,
}

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

// appendPostRules appends the rules of Post (lib/rules.lua postRules) at the
// time t to post.lua's arguments: nothing for a store without them.
func (s *Store) appendPostRules(args []interface{}, poster string, t time.Time) []interface{} {
	r := s.rules
	if r.interval == 0 && r.repost == 0 {
		return args
	}
	return append(args, t.UnixMilli(), s.keys.lastPostKey(poster),
		ruleSpan(r.interval), ruleTTL(time.Duration(r.interval)*time.Millisecond),
		ruleSpan(r.repost), ruleTTL(time.Duration(r.repost)*time.Millisecond))
}

// ruleSpan is a rule's span in ms as a script's argument: "" for a rule
// that is off (0), which the script reads as off whatever the clocks say.
func ruleSpan(ms int64) interface{} {
	if ms == 0 {
		return ""
	}
	return ms
}

func (s *Store) editArgs(id, user, title, link string, t time.Time) []interface{} {
	repost := interface{}("")
	if s.rules.repost > 0 {
		repost = s.rules.repost
	}
	k := s.keys
	return []interface{}{k.orderingKey("score"), id, user, title, link, t.UnixMilli(), ruleSpan(s.rules.edit),
		flag(s.uniqueLinks), repost, ruleTTL(time.Duration(s.rules.repost) * time.Millisecond),
		k.article, k.link}
}

// commentArgs lays out comment.lua's arguments: the comment, the store's
// window, weight and comment orderings, the key prefixes, and the
// comment interval (WithCommentInterval) at the time t.
func (s *Store) commentArgs(aid, parent, poster, body string, t time.Time) []interface{} {
	k := s.keys
	commented, last, interval, ttl := "", "", interface{}(""), interface{}("")
	if s.userPages {
		commented = k.commented
	}
	if s.rules.commentInterval > 0 {
		last, interval = k.lastCommentKey(poster), s.rules.commentInterval
		ttl = ruleTTL(time.Duration(s.rules.commentInterval) * time.Millisecond)
	}
	return []interface{}{k.cseq, k.comments,
		aid, parent, poster, body, t.Unix(), s.window, s.weight, s.commentOrderings, MaxCommentDepth,
		k.article, k.voted, k.comment, k.thread, k.kids, k.cvoted, commented,
		t.UnixMilli(), last, interval, ttl}
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
	return []interface{}{s.keys.commentKey(id), id, user, body, t.UnixMilli(), ruleSpan(s.rules.edit), s.keys.comment}
}

// commentDeleteArgs: the commented pages' prefix is passed whether or not
// the store keeps pages, as lifecycleKeys passes the submitted pages'.
func (s *Store) commentDeleteArgs(id string) []interface{} {
	k := s.keys
	return []interface{}{k.commentKey(id), k.comments, id, k.comment, k.thread, k.kids, k.commented}
}

func (s *Store) userCommentsArgs(user string, start int) []interface{} {
	return []interface{}{s.keys.commentedKey(user), s.keys.comment, start, s.pageSize}
}
