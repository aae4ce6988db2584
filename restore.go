package voting

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/votekit/voting/internal/layout"
	"github.com/votekit/voting/internal/restore"
)

// The tools of this module (cmd/votectl) rebuild a store from its
// records through the store's own script, restore.lua, so that no tool
// keeps a copy of a record's layout or an ordering's formula for its
// writes: internal/restore.Put, set here; and the rules of the names
// the store takes (checkName), restore.CheckName, for the tools to check
// theirs with before they write.
func init() {
	restore.Put = func(ctx context.Context, store any, a restore.Article) (bool, error) {
		s, err := restoring(store)
		if err != nil {
			return false, err
		}
		return s.restoreArticle(ctx, a)
	}
	restore.PutComments = func(ctx context.Context, store any, cs []restore.Comment) error {
		return withRestoring(store, func(s *Store) error { return s.restoreComments(ctx, cs) })
	}
	restore.PutEntries = func(ctx context.Context, store any, es []restore.Entry) error {
		return withRestoring(store, func(s *Store) error { return s.restoreEntries(ctx, es) })
	}
	restore.Remove = func(ctx context.Context, store any, rs []restore.Removal) error {
		return withRestoring(store, func(s *Store) error { return s.restoreRemovals(ctx, rs) })
	}
	restore.CheckName = checkName
}

// restoring returns store, which internal/restore's functions take as
// any, as the *Store it must be.
func restoring(store any) (*Store, error) {
	s, ok := store.(*Store)
	if !ok {
		return nil, fmt.Errorf("%w: restore: %T is not a *voting.Store", ErrInvalidArgument, store)
	}
	return s, nil
}

// withRestoring calls do with store as a *Store (restoring).
func withRestoring(store any, do func(s *Store) error) error {
	s, err := restoring(store)
	if err != nil {
		return err
	}
	return do(s)
}

// restore_entries.lua writes the entries of a store beside its articles
// and comments (internal/restore.PutEntries).
var (
	//go:embed lua/restore_entries.lua
	restoreEntriesLua    string
	restoreEntriesScript = newScript("restore_entries", restoreEntriesLua)
)

// entryStep is the most entries one call of restore_entries.lua writes,
// and the most removals one of restore_removals.lua makes.
const entryStep = 200

// restoreEntries runs restore_entries.lua for es, entryStep entries a
// call, in their order.
func (s *Store) restoreEntries(ctx context.Context, es []restore.Entry) error {
	return s.restoreSteps(ctx, "restore entries", restoreEntriesScript, len(es), func(from, to int) ([]interface{}, error) {
		return s.restoreEntriesArgs(es[from:to])
	})
}

// restoreSteps runs sc, a restore script whose reply is {OK, a count},
// for n items, entryStep a call, in their order: args lays out the items
// from up to to as its arguments.
func (s *Store) restoreSteps(ctx context.Context, op string, sc script, n int, args func(from, to int) ([]interface{}, error)) error {
	for at := 0; at < n; at += entryStep {
		a, err := args(at, min(at+entryStep, n))
		if err != nil {
			return opErr(op, err)
		}
		var done int64
		late, err := s.evalScan(ctx, op, sc, a, &done)
		if err != nil {
			return err
		}
		if err := replicationErr(op, late); err != nil {
			return err
		}
	}
	return nil
}

// restoreEntriesArgs lays out es for restore_entries.lua: the keys and
// prefixes, then each entry's fields.
func (s *Store) restoreEntriesArgs(es []restore.Entry) ([]interface{}, error) {
	k := s.keys
	args := withRoom(17 + 9*len(es))
	args = append(args, k.seq, k.cseq, k.karma, k.userVotes, k.submitted, k.upvoted, k.commented, k.link,
		k.lastPost, k.lastComment, k.voteLog, k.comments, k.thread, k.group, k.voted, k.cvoted, k.comment)
	for _, e := range es {
		var ids []string // the fields of e that are ids
		switch e.Kind {
		case restore.VoteLog, restore.LogKill, restore.LogLink, restore.Page, restore.Link, restore.Count, restore.Group,
			restore.Voter, restore.CVoted:
			ids = []string{e.ID}
		case restore.CVoter:
			ids = []string{e.ID, e.Item}
		case restore.Thread:
			ids = []string{e.ID, e.Text, e.Item}
		}
		for _, id := range ids {
			if !canonicalID(id) {
				return nil, fmt.Errorf("%w: %s entry: id %q", ErrInvalidArgument, e.Kind, id)
			}
		}
		if e.Kind == restore.CVoted && e.ExpireAtMs <= 0 {
			return nil, fmt.Errorf("%w: cvoted entry of article %s: no expiry", ErrInvalidArgument, e.ID)
		}
		n, text := strconv.FormatFloat(e.N, 'f', -1, 64), e.Text
		switch e.Kind {
		case restore.VoteLog, restore.LogKill, restore.LogLink:
			line, err := logEntryArgs(e)
			if err != nil {
				return nil, err
			}
			n = strconv.FormatInt(e.Offset, 10)
			if e.Kind == restore.VoteLog {
				text = line
			}
		}
		args = append(args, e.Kind, e.User, e.ID, e.Item, strconv.Itoa(e.Vote), flag(e.Shadow),
			n, text, strconv.FormatInt(e.ExpireAtMs, 10))
	}
	return args, nil
}

// logEntryArgs checks a vote log's entry e (VoteLog, LogKill, LogLink)
// and returns its line, as the store's vote writes it
// (layout.LogEntry.Line), for a VoteLog entry to append: an error names
// the entry and what is wrong with it.
func logEntryArgs(e restore.Entry) (string, error) {
	bad := func(format string, args ...interface{}) (string, error) {
		return "", fmt.Errorf("%w: %s entry of user %q on %s %s: %s", ErrInvalidArgument, e.Kind, e.User, e.Item, e.ID,
			fmt.Sprintf(format, args...))
	}
	switch {
	case e.Item != "article" && e.Item != "comment":
		return bad("item %q is neither article nor comment", e.Item)
	case e.Vote != 1 && e.Vote != -1:
		return bad("vote %d is neither 1 nor -1", e.Vote)
	case e.Offset < 0 && !(e.Kind == restore.LogLink && e.Offset == -1):
		return bad("offset %d is no offset in a vote log", e.Offset)
	case e.Kind == restore.VoteLog && (e.N != math.Trunc(e.N) || math.Abs(e.N) > layout.MaxExact):
		return bad("time %v is no whole number of seconds up to %d", e.N, int64(layout.MaxExact))
	}
	return layout.LogEntry{Comment: e.Item == "comment", ID: e.ID, Vote: e.Vote, At: int64(e.N)}.Line(), nil
}

// restore_removals.lua removes what a repair found stray
// (internal/restore.Remove).
var (
	//go:embed lua/restore_removals.lua
	restoreRemovalsLua    string
	restoreRemovalsScript = newScript("restore_removals", restoreRemovalsLua)
)

// restoreRemovals runs restore_removals.lua for rs, entryStep removals a
// call, in their order.
func (s *Store) restoreRemovals(ctx context.Context, rs []restore.Removal) error {
	return s.restoreSteps(ctx, "restore removals", restoreRemovalsScript, len(rs), func(from, to int) ([]interface{}, error) {
		return s.restoreRemovalsArgs(rs[from:to]), nil
	})
}

// restoreRemovalsArgs lays out rs for restore_removals.lua: the live
// comment counts (its key) and the families' prefixes, then each
// removal's fields.
func (s *Store) restoreRemovalsArgs(rs []restore.Removal) []interface{} {
	k := s.keys
	args := withRoom(11 + 4*len(rs))
	args = append(args, k.comments, k.by, k.topBucket, k.submitted, k.upvoted, k.commented, k.kids, k.group, k.cache,
		k.body, k.thread)
	for _, r := range rs {
		args = append(args, r.Kind, r.Name, r.Member, flag(r.Whole))
	}
	return args
}

// restoreComments runs restore_comments.lua for cs.
func (s *Store) restoreComments(ctx context.Context, cs []restore.Comment) error {
	const op = "restore comments"
	if len(cs) == 0 {
		return nil
	}
	k := s.keys
	args := make([]interface{}, 0, 4+20*len(cs))
	args = append(args, k.cseq, k.comment, k.kids, k.removing)
	for _, c := range cs {
		if !canonicalID(c.ID) {
			return opErr(op, fmt.Errorf("%w: comment id %q", ErrInvalidArgument, c.ID))
		}
		args = append(args, c.ID, c.Up, c.Down, c.Replies, c.First, c.Last, c.Next, c.Prev, flag(c.Deleted),
			c.Article, c.Parent, c.Posted, c.Closes, c.Depth, c.Orders, c.Weight, c.Poster, c.Body, flag(c.Removing), placement(c))
	}
	var n int64
	late, err := s.evalScan(ctx, op, restoreCommentsScript, args, &n)
	if err != nil {
		return err
	}
	return replicationErr(op, late)
}

// placement is restore_comments.lua's argument of what it writes of c:
// '1' its places alone, '2' its record's head and its places, '0' its
// record whole and its places.
func placement(c restore.Comment) string {
	switch {
	case c.PlacesOnly:
		return "1"
	case c.KeepBody:
		return "2"
	}
	return "0"
}

// restoreArticle runs restore.lua for a.
func (s *Store) restoreArticle(ctx context.Context, a restore.Article) (bool, error) {
	const op = "restore"
	if !canonicalID(a.ID) {
		return false, opErr(op, fmt.Errorf("%w: article id %q", ErrInvalidArgument, a.ID))
	}
	var done int64
	late, err := s.evalScan(ctx, op, restoreScript, s.restoreArgs(a), &done)
	if err != nil {
		return false, err
	}
	return done == 1, replicationErr(op, late)
}

func (s *Store) restoreArgs(a restore.Article) []interface{} {
	k := s.keys
	closes, groups := "", strings.Join(a.Groups, "\n")
	if a.Closes > 0 {
		closes = strconv.FormatInt(a.Closes, 10)
	}
	if a.KeepGroups {
		groups = "\n-"
	}
	return []interface{}{k.orderingKey("score"), a.ID, a.Up, a.Down, a.Posted, a.Weight, a.Orders, a.Poster, a.Title, a.Link,
		flag(a.Whole), closes, a.ExpireAtMs, groups, k.article, k.voted, k.groupsOf, k.group, k.by, k.topBucket, k.cache}
}
