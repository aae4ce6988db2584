// Package restore is how the package's own tools (cmd/votectl) write a
// store from its records through the store's scripts: an import, a
// repair. The package voting sets its functions when it is loaded
// (voting's restore.go); this package, which voting imports, cannot
// import voting, so the store is passed as an any, a *voting.Store.
package restore

import "context"

// Article is one article as a tool restores it: its record's fields,
// and what derives from them the store works out itself.
type Article struct {
	ID         string
	Up, Down   int64
	Posted     int64
	Weight     string // as the record keeps it
	Orders     string // comma-separated, as the record keeps them
	Poster     string
	Title      string
	Link       string
	Whole      bool     // write the record of these fields; else keep the record there and set its counts
	Closes     int64    // while voting is open, the time it closes (Unix seconds); 0 to leave the voter record's times
	ExpireAtMs int64    // while voting is open, when the voter record expires (Unix ms)
	Groups     []string // its groups; nil with KeepGroups
	KeepGroups bool     // leave the groups as they are
}

// Put writes a in store (a *voting.Store) with the store's restore
// script, in one round trip: the record, the orderings and TopSince
// buckets with the values the store's formulas give, the groups, the
// article's values in the caches of its groups (as a vote moves them)
// and, while voting is open, the voter record's meta. It reports false for a
// repair (Whole false) of a record that is gone. Voters are the caller's
// to write first.
var Put func(ctx context.Context, store any, a Article) (bool, error)

// Comment is one comment as a tool restores it: its record's fields,
// links and live counts included, which the tool works out from the
// comments it restores.
type Comment struct {
	ID                      string
	Up, Down, Replies       int64
	First, Last, Next, Prev string // its replies' ends and its siblings; "" for none
	Deleted                 bool
	Article, Parent         string // Parent "" for a reply to the article
	Posted, Closes          int64
	Depth                   int
	Orders, Weight          string // as the record keeps them
	Poster, Body            string
	// Removing is set for a deleted comment without replies whose
	// removal a DeleteComment left to its next steps.
	Removing bool
	// PlacesOnly writes its places in its parent's orderings alone, and
	// keeps its record as it is: a repair, which read its head alone.
	PlacesOnly bool
	// KeepBody writes its record's head of these fields and its places,
	// and keeps the body its record has (Body unread): a repair, which
	// read its head alone. A record gone meanwhile is left gone.
	KeepBody bool
}

// PutComments writes cs in store (a *voting.Store) with the store's
// restore script, in one round trip: each comment's record and its
// places in its parent's orderings, with the values the store's formulas
// give. The articles' live counts, threads and comment voter records
// are the caller's.
var PutComments func(ctx context.Context, store any, cs []Comment) error

// Entry is one entry of the store beside its articles and comments, as a
// tool restores it: a user's entry (karma, vote log, page, last post or
// comment, the vote limit's log), a link, a counter, an article's thread
// head or live comment count, a group's member, or a vote of a voter
// record. Kind says which, and which fields it reads:
//
//	Karma        User, N: the user's karma
//	VoteLog      User, Item ("article" or "comment"), ID, Vote (1 or -1),
//	             N: the time of the vote (Unix s), Offset: where its line
//	             goes in the user's vote log, a journal (the lengths of
//	             the user's lines before it): the line is appended where
//	             the log ends there (and found there when written again),
//	             and the item's voter record's plain vote of the user
//	             equal to Vote linked to it (a comment poster's implied
//	             upvote too); write the voter records first
//	LogKill      User, Item, ID, Vote, Offset: the line of this vote at
//	             Offset of the user's vote log, taken back, where it is
//	             still there and the item's voter record links no vote
//	             to it (a repair's)
//	LogLink      User, Item, ID, Vote, Text: the user's value in the
//	             item's voter record, as a check read it ("" for none: a
//	             comment poster's implied upvote), Offset: the line of
//	             this vote to link it to, -1 to unlink it (the plain
//	             vote); where the record still holds Text (a repair's)
//	Page         Item ("submitted", "upvoted" or "commented"), User, ID,
//	             N: the entry's score
//	Link         Text: the link, ID: its article; ExpireAtMs
//	LastPost     User, N: the time (Unix ms); ExpireAtMs
//	LastComment  User, N: the time (Unix ms); ExpireAtMs
//	RateLog      User, Text: the member, N: its time (Unix ms); ExpireAtMs
//	Seq, CSeq    ID: the article or comment id counter's value
//	Count        ID: an article, N: its live comments
//	Thread       ID: an article, Text and Item: its newest and oldest
//	             top-level comments
//	Group        Text: a group, ID: an article in it
//	Voter        ID: an article, User, Vote (1, -1 or 0), Shadow;
//	             ExpireAtMs: the voter record's, 0 to leave it
//	CVoter       ID: an article, Item: its comment, User, Vote, Shadow;
//	             ExpireAtMs: the comment voter record's, 0 to leave it
//	CVoted       ID: an article, Text: the marker of its comment voter
//	             record, ExpireAtMs
//
// ExpireAtMs is when the key expires (Unix ms), 0 for never.
type Entry struct {
	Kind       string
	User       string
	ID         string
	Item       string
	Vote       int
	Shadow     bool
	N          float64
	Text       string
	Offset     int64 // a vote log's entry's: its line's offset in the log
	ExpireAtMs int64
}

// The kinds of an Entry, and of a Removal.
const (
	Karma       = "karma"
	VoteLog     = "uvote"
	LogKill     = "ukill"
	LogLink     = "ulink"
	Page        = "page"
	Link        = "link"
	LastPost    = "lastpost"
	LastComment = "lastcomment"
	RateLog     = "votelog"
	Seq         = "seq"
	CSeq        = "cseq"
	Count       = "count"
	Thread      = "thread"
	Group       = "group"
	Voter       = "voter"
	CVoter      = "cvoter"
	CVoted      = "cvoted"

	// A Removal's kinds beside Count, Thread and Group.
	Ordering  = "ordering"
	Bucket    = "bucket"
	Submitted = "submitted"
	Upvoted   = "upvoted"
	Commented = "commented"
	Kids      = "kids"
	Cache     = "cache"
	CBody     = "cbody"
)

// PutEntries writes es in store (a *voting.Store) with the store's
// restore script, a bounded number of entries a round trip, in their
// order: each key, its name and its value as the store's own scripts
// write them (a vote log's line and the voter record's value linked to
// it, a karma's sign, a voter record's shadow value). Each write sets a
// value, so that writing the same entries again changes nothing: a
// vote log's line goes at its offset, where the log ends or holds it
// already, and anything else there fails the call. The store checks every key of a
// round trip before it writes one.
var PutEntries func(ctx context.Context, store any, es []Entry) error

// Removal is one thing of the store that a tool found stray and a
// repair removes: a member of a sorted set or a set, an article's live
// comment count, or a key whole. Kind says which family its key is of,
// Name names the key in its family (what follows the family's prefix),
// and Member is the member; Whole removes the key whole, Member unread:
//
//	Ordering   Name: an ordering ("hot"), Member
//	Bucket     Name: a TopSince bucket ("600:2833333"), Member
//	Submitted, Upvoted, Commented
//	           Name: a user, Member: of the user's page
//	Kids       Name: a parent's replies ("a7", "hot:c12"), Member; or Whole
//	Group      Name: a group, Member
//	Count      Member: an article, whose live comment count goes
//	Cache      Name: a group's cached page ("score:redis"), Whole
//	CBody      Name: a comment id, whose body of layout 4 goes, Whole
//	Thread     Name: an article, whose thread's ends go, Whole
type Removal struct {
	Kind   string
	Name   string
	Member string
	Whole  bool
}

// Remove removes rs from store (a *voting.Store) with the store's
// removal script, a bounded number of removals a round trip, in their
// order. The store checks the type of every key of a round trip that it
// removes members from before it removes anything (a key removed whole
// goes whatever it holds), and refuses, having removed nothing, a store
// recorded with another layout or with data and no record. What is gone
// already is no error, so that removing the same again changes nothing.
var Remove func(ctx context.Context, store any, rs []Removal) error

// CheckName returns nil for a user's, poster's or group's name that the
// store takes, else an error that names what and says why: the rules
// the store applies to every name it looks up or writes (voting's
// checkName in validate.go: 1 to voting.MaxNameLen bytes of printable
// UTF-8, not blank), so that a tool refuses, before its first write, a
// name the store's scripts would take but its calls refuse.
var CheckName func(what, name string) error
