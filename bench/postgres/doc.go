// Package postgres is a benchmark, not a library: a page view (a page of
// 25 articles and the viewer's votes on them) on this module's store and
// on PostgreSQL, side by side, on the same data, on the same machine.
//
// The PostgreSQL side is the same feature done well: an articles table
// whose score is kept in the row and indexed, a votes table keyed by
// (article, user), a page read with a deferred join (the page's ids by an
// index-only scan of the score index, then their rows), and the viewer's
// votes in one lookup with = ANY($2), through database/sql and pgx's
// stdlib driver, statements prepared once per connection. A page view in
// one round trip is one statement on each side: Store.ArticlesFor, and
// the page query with the viewer's votes LEFT JOINed (pgView).
//
// It is a module of its own so that the store's module gains no
// dependency. Run it with
//
//	cd bench/postgres && go test -run '^$' -bench PageView -benchtime 1s
//
// The two sides take turns in rounds, and each ratio sub-benchmark gives
// the median of the rounds' ratios (BenchmarkPageView).
//
// Each side runs on a private server started for the run: redis-server
// (testkit/redistest) and a PostgreSQL cluster made by initdb in a
// temporary directory, on a free port, stopped afterwards (Start). Where
// PostgreSQL is not installed (Debian: apt-get install postgresql) the
// benchmarks skip.
package postgres
