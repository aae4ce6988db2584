package voting

// Work per step of the calls whose work grows with the data: each step
// is one script that stays well under 10 ms on redis-server.
const (
	buildStep   = 500  // group members copied per step of a cache build (SSCAN COUNT)
	pruneStep   = 50   // articles deleted per step of Prune
	pruneWork   = 100  // group memberships of the articles deleted per step of Prune, but for its first
	dropStep    = 500  // keys scanned per step of Drop (SCAN COUNT)
	batchStep   = 25   // ballots per script of VoteBatch, divided by 1 + the optional orders enabled (Store.ballotsPerScript)
	edgeStep    = 2000 // members of TopSince's edge bucket read per call (top_since.lua, top_since_edge.lua)
	purgeStep   = 200  // comments removed per step of Delete or Prune of an article with comments
	reverseStep = 100  // logged votes taken back per step of ReverseVotes, at most
	reverseWork = 600  // the work a step of ReverseVotes starts on: about the commands of its votes (lib/reversal.lua reverseWork)

	// ancestorStep: comments a step of DeleteComment removes, the deleted
	// one and the deleted ancestors its removal leaves without replies
	// (lib/removal.lua), about 1 ms on redis-server. The first step also
	// walks up every ancestor to keep their live counts, as a Comment
	// does (about 3.5 ms at MaxCommentDepth), and removes one comment
	// fewer for every ancestorWalk ancestors, but always the comment
	// itself (comment_delete.lua).
	ancestorStep = 50
	ancestorWalk = 5

	backfillStep = 200 // articles whose links a step of Reconfigure's backfill indexes
	moveStep     = 100 // comments of layout 4 a step of Reconfigure moves (reconfigure.lua; an id without one costs an eighth)
	logMoveStep  = 128 // entries of layout 6's vote logs a step of Reconfigure moves into journals, and logs it opens (reconfigure.lua 'movelogs'): ~1 ms
)

// walkStep bounds the work of one call of a cold group page's walk of
// the store's ordering (group_page.lua): a member examined counts 1, one
// copied into the cache 1 more. A call that served its page or walked
// spends what is left, a tenth to a half of walkStep, on more of the
// walk or of the build. About 2.5 ms at most on redis-server with a
// million articles (BENCHMARKS.md, "How cost grows with the data").
const walkStep = 3000
