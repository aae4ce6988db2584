package voting

import (
	"embed"
	"fmt"
	"regexp"
	"strings"

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
// The argument list of each script is built beside the method that runs
// it (Store.voteArgs beside Store.Vote, vote.go), in one function used by
// the store's method and by the benchmarks alike, whose comment names
// the script's KEYS and ARGV; the helpers they share are here (flag,
// appendStrings, withViewer).
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

	// The scripts of comments (comments.go).
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

	// The scripts of a store with a read pool (WithReadPool, replica.go).
	//go:embed lua/group_read.lua
	groupReadLua string
	//go:embed lua/group_renew.lua
	groupRenewLua string
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
// of layout 4, and those about the vote logs (modeWriteLogs,
// modeReadLogs: ReverseVotes, VotesBy) while it moves the logs of
// layout 6; none checks nothing (a vote checks where it knows it
// writes, Drop removes a store whatever its identity, Reconfigure
// changes it, and the restores of votectl write before it is recorded).
// The removals of votectl's repairs (restore_removals) check as a read
// does: they remove what this layout makes stray, whatever the options.
const (
	modeWrite         = "w"
	modeRead          = "r"
	modeWriteComments = "wc"
	modeReadComments  = "rc"
	modeWriteLogs     = "wl"
	modeReadLogs      = "rl"
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
	"restore_removals": {1, modeRead, false, true, true, false},
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
	"reverse":        {1, modeWriteLogs, false, false, true, false},
	"suspend":        {1, modeWrite, false, false, true, false},
	"votes_by":       {1, modeReadLogs, true, false, false, false},
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

// flag is b as a script's argument: "1" or "0".
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// flagArg is flag(b) boxed without an allocation.
func flagArg(b bool) interface{} {
	if b {
		return "1"
	}
	return "0"
}

// appendStrings appends list to a script's arguments.
func appendStrings(args []interface{}, list []string) []interface{} {
	for _, s := range list {
		args = append(args, s)
	}
	return args
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

// The store's scripts, in the order of the library (registry), after
// those of moderation.go, which keeps its own beside its methods.
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
	commentScript         = newScript("comment", commentLua)
	commentVoteScript     = newScript("comment_vote", commentVoteLua)
	threadScript          = newScript("thread", threadLua)
	commentsScript        = newScript("comments", commentsLua)
	commentVotesScript    = newScript("comment_votes", commentVotesLua)
	commentEditScript     = newScript("comment_edit", commentEditLua)
	commentDeleteScript   = newScript("comment_delete", commentDeleteLua)
	userCommentsScript    = newScript("user_comments", userCommentsLua)
	groupReadScript       = newScript("group_read", groupReadLua)
	groupRenewScript      = newScript("group_renew", groupRenewLua)
)

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
