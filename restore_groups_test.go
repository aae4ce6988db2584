package voting

import (
	"testing"

	"github.com/votekit/voting/internal/restore"
)

// TestRestoreJoinsWarmGroupCache: restore.Put (votectl import, check
// -repair) of an article into a group whose cache is complete leaves
// the group's pages exact (internal/restore Put's doc: "the article's values
// in the caches of its groups"; GroupArticles' doc: a warm page is exactly
// Articles restricted to the group's members): restore.lua adds it to
// the caches of the groups it joins, as group_add.lua does.
func TestRestoreJoinsWarmGroupCache(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		a := mustPost(t, s, "p", "a")
		if err := s.AddToGroups(ctx, a.ID, "go"); err != nil {
			t.Fatal(err)
		}
		if got := idsOf(mustGroupPage(t, s, "go", ScoreDesc, 1)); len(got) != 1 {
			t.Fatalf("warm-up page %v", got)
		}
		c := mustPost(t, s, "p", "c")
		// Rewrite c whole, as an import does, naming its group.
		ok, err := s.restoreArticle(ctx, restore.Article{ID: c.ID, Up: 5, Down: 0, Posted: c.Posted.Unix(), Weight: "432",
			Poster: "p", Title: "c", Link: c.Link, Whole: true, Groups: []string{"go"}})
		if err != nil || !ok {
			t.Fatalf("restore: %v, %v", ok, err)
		}
		if n, _ := s.GroupCount(ctx, "go"); n != 2 {
			t.Fatalf("GroupCount = %d, want 2", n)
		}
		for _, o := range []Order{ScoreDesc, ScoreAsc, TimeDesc, TimeAsc} {
			if got := idsOf(mustGroupPage(t, s, "go", o, 1)); len(got) != 2 {
				t.Errorf("%v: group page %v after the restore put %s in the group; want both %s and %s", o, got, c.ID, a.ID, c.ID)
			}
		}
	})
}
