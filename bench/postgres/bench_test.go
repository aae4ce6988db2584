package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/votekit/voting"
	"github.com/votekit/voting/testkit/redistest"
)

// The data set both sides hold: nArticles articles, posted a second apart
// from epoch, each with its poster's upvote, and nVotes votes more by
// nUsers users, three in four up, the same on both sides.
const (
	nArticles = 100_000
	nUsers    = 10_000
	nVotes    = 200_000
	pageSize  = voting.DefaultPageSize
	conns     = 16 // each side's pool; the benchmarks run 8 callers per CPU
)

var epoch = time.Unix(1_900_000_000, 0)

func title(i int) string {
	return "Article " + strconv.Itoa(i) + ": a title of a usual length for a news site"
}
func link(i int) string   { return "https://example.com/news/" + strconv.Itoa(i) }
func poster(i int) string { return fmt.Sprintf("poster%04d", i%1000) }
func user(i int) string   { return fmt.Sprintf("user%05d", i) }

// ballot is one vote of the data set.
type ballot struct {
	article int
	user    string
	vote    voting.VoteType
}

// ballots are the data set's votes, in the order they are cast.
func ballots() []ballot {
	rng := rand.New(rand.NewSource(1))
	list := make([]ballot, nVotes)
	for i := range list {
		v := voting.Upvote
		if rng.Intn(4) == 0 {
			v = voting.Downvote
		}
		list[i] = ballot{1 + rng.Intn(nArticles), user(rng.Intn(nUsers)), v}
	}
	return list
}

// sides are the two servers with the data set, made once per test binary.
type sides struct {
	store *voting.Store
	pool  *redis.Pool
	db    *sql.DB
	pg    *Server
}

var (
	once     sync.Once
	shared   *sides
	setupErr error
	stops    []func()
)

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(stops) - 1; i >= 0; i-- {
		stops[i]()
	}
	os.Exit(code)
}

// data returns the two sides, loading them on first use; it skips tb
// where PostgreSQL or redis-server is not installed.
func data(tb testing.TB) *sides {
	tb.Helper()
	redistest.Require(tb)
	once.Do(func() { shared, setupErr = load() })
	if errors.Is(setupErr, ErrNotInstalled) {
		tb.Skip(setupErr)
	}
	if setupErr != nil {
		tb.Fatal(setupErr)
	}
	return shared
}

func load() (*sides, error) {
	start := time.Now()
	pg, err := Start("shared_buffers=256MB", "fsync=off", "synchronous_commit=off", "full_page_writes=off")
	if err != nil {
		return nil, err
	}
	stops = append(stops, func() { _ = pg.Stop() })
	dir, err := os.MkdirTemp("", "voting-redis-")
	if err != nil {
		return nil, err
	}
	rs, err := redistest.StartIn(dir, "--save", "", "--appendonly", "no")
	if err != nil {
		return nil, err
	}
	stops = append(stops, func() { rs.Stop(); os.RemoveAll(dir) })
	s := &sides{pg: pg, pool: &redis.Pool{
		MaxIdle: conns, MaxActive: conns, Wait: true,
		Dial: func() (redis.Conn, error) { return redis.Dial("tcp", rs.Addr) },
	}}
	stops = append(stops, func() { s.pool.Close() })
	if s.db, err = pg.Open(conns); err != nil {
		return nil, err
	}
	stops = append(stops, func() { s.db.Close() })
	list := ballots()
	if err := s.loadRedis(list); err != nil {
		return nil, err
	}
	if err := s.loadPostgres(list); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "data: %d articles, %d votes on each side, loaded in %v\n", nArticles, nVotes, time.Since(start).Round(time.Second))
	return s, nil
}

func (s *sides) loadRedis(list []ballot) error {
	ctx := context.Background()
	var now time.Time
	store, err := voting.New(s.pool, voting.WithClock(func() time.Time { return now }))
	if err != nil {
		return err
	}
	for i := 1; i <= nArticles; i++ {
		now = epoch.Add(time.Duration(i) * time.Second)
		a, err := store.Post(ctx, poster(i), title(i), link(i))
		if err != nil {
			return err
		}
		if a.ID != strconv.Itoa(i) {
			return fmt.Errorf("article %d posted as %s: the store is not empty", i, a.ID)
		}
	}
	now = epoch.Add((nArticles + 1) * time.Second) // every article open
	for len(list) > 0 {
		n := min(len(list), voting.MaxBatch)
		batch := make([]voting.Ballot, n)
		for i, v := range list[:n] {
			batch[i] = voting.Ballot{User: v.user, ID: strconv.Itoa(v.article), Vote: v.vote}
		}
		results, err := store.VoteBatch(ctx, batch)
		if err != nil {
			return err
		}
		for _, r := range results {
			if r.Err != nil {
				return r.Err
			}
		}
		list = list[n:]
	}
	s.store = store
	return nil
}

// schema is the PostgreSQL side: the score kept in the row, as the
// store keeps it, so that a page is an index scan; the votes keyed by
// article and user, as the store's voter records are.
var schema = []string{`CREATE TABLE articles (
	id bigint PRIMARY KEY,
	title text NOT NULL,
	link text NOT NULL,
	poster text NOT NULL,
	posted bigint NOT NULL,
	weight double precision NOT NULL,
	up bigint NOT NULL DEFAULT 1,
	down bigint NOT NULL DEFAULT 0,
	score double precision NOT NULL
)`, `CREATE TABLE votes (
	article bigint NOT NULL REFERENCES articles ON DELETE CASCADE,
	"user" text NOT NULL,
	vote smallint NOT NULL,
	PRIMARY KEY (article, "user")
)`}

// indexes are built once the data is in: the orderings of the store's
// Articles by score and by time, ties newest id first, as the store's.
var indexes = []string{
	`CREATE INDEX articles_score ON articles (score DESC, id DESC)`,
	`CREATE INDEX articles_time ON articles (posted DESC, id DESC)`,
	// The load's commits flushed first: with synchronous_commit off,
	// VACUUM cannot mark a page all-visible until they are, and the
	// page's index-only scan would fetch every row from the heap until
	// autovacuum came by, mid-run.
	`CHECKPOINT`,
	`VACUUM (FREEZE, ANALYZE) articles`, // the visibility map, for index-only scans
	`VACUUM (FREEZE, ANALYZE) votes`,
}

func (s *sides) loadPostgres(list []ballot) error {
	ctx := context.Background()
	exec := func(stmt string, args ...interface{}) error {
		if _, err := s.db.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("%.40s...: %w", stmt, err)
		}
		return nil
	}
	for _, stmt := range schema {
		if err := exec(stmt); err != nil {
			return err
		}
	}
	// The articles as the store posts them, each with its poster's upvote.
	if err := exec(`INSERT INTO articles (id, title, link, poster, posted, weight, score)
		SELECT i, 'Article ' || i || ': a title of a usual length for a news site',
			'https://example.com/news/' || i, 'poster' || lpad((i % 1000)::text, 4, '0'),
			$1::bigint + i, 432, $1::bigint + i + 432
		FROM generate_series(1, $2::bigint) AS i`, epoch.Unix(), nArticles); err != nil {
		return err
	}
	if err := exec(`INSERT INTO votes SELECT id, poster, 1 FROM articles`); err != nil {
		return err
	}
	// The votes, a user's last on an article winning, as on Redis.
	last := map[ballot]int{}
	for i, v := range list {
		last[ballot{v.article, v.user, 0}] = i
	}
	var ids []int64
	var users []string
	var votes []int16
	for i, v := range list {
		if last[ballot{v.article, v.user, 0}] == i {
			ids, users, votes = append(ids, int64(v.article)), append(users, v.user), append(votes, int16(v.vote))
		}
	}
	if err := exec(`INSERT INTO votes SELECT * FROM unnest($1::bigint[], $2::text[], $3::smallint[])`, ids, users, votes); err != nil {
		return err
	}
	if err := exec(`UPDATE articles a SET up = c.up, down = c.down, score = a.posted + a.weight * (c.up - c.down)
		FROM (SELECT article, count(*) FILTER (WHERE vote = 1) AS up, count(*) FILTER (WHERE vote = -1) AS down
			FROM votes GROUP BY article) c WHERE a.id = c.article`); err != nil {
		return err
	}
	for _, stmt := range indexes {
		if err := exec(stmt); err != nil {
			return err
		}
	}
	return nil
}

// pgArticles is the page query, a deferred join: the page's ids by an
// index-only scan of the score index, past the offset, then their rows.
const pgArticles = `SELECT a.id, a.title, a.link, a.poster, a.posted, a.score, a.up, a.down
FROM (SELECT id, score FROM articles ORDER BY score DESC, id DESC LIMIT $1 OFFSET $2) p
JOIN articles a ON a.id = p.id ORDER BY p.score DESC, p.id DESC`

// pgVotes is the viewer's votes on a page's ids: a probe of the votes'
// key per id.
const pgVotes = `SELECT article, vote FROM votes WHERE "user" = $1 AND article = ANY($2)`

// pgView is a page view in one statement, as Store.ArticlesFor reads
// it: the page query with the viewer's votes LEFT JOINed, a probe of the
// votes' key per row.
const pgView = `SELECT a.id, a.title, a.link, a.poster, a.posted, a.score, a.up, a.down, coalesce(v.vote, 0)
FROM (SELECT id, score FROM articles ORDER BY score DESC, id DESC LIMIT $1 OFFSET $2) p
JOIN articles a ON a.id = p.id
LEFT JOIN votes v ON v.article = p.id AND v."user" = $3
ORDER BY p.score DESC, p.id DESC`

// pgPageFor reads a page of articles and user's vote on each, as
// Store.ArticlesFor does, in one statement (pgView).
func pgPageFor(ctx context.Context, db *sql.DB, user string, page int) ([]voting.Article, []voting.VoteType, error) {
	rows, err := db.QueryContext(ctx, pgView, pageSize, (page-1)*pageSize, user)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	list := make([]voting.Article, 0, pageSize)
	votes := make([]voting.VoteType, 0, pageSize)
	for rows.Next() {
		var a voting.Article
		var id, posted int64
		var v int16
		if err := rows.Scan(&id, &a.Title, &a.Link, &a.Poster, &posted, &a.Score, &a.Upvotes, &a.Downvotes, &v); err != nil {
			return nil, nil, err
		}
		a.ID, a.Posted = strconv.FormatInt(id, 10), time.Unix(posted, 0).UTC()
		list, votes = append(list, a), append(votes, voting.VoteType(v))
	}
	return list, votes, rows.Err()
}

// pgPage reads a page of articles as Store.Articles does.
func pgPage(ctx context.Context, db *sql.DB, page int) ([]voting.Article, error) {
	rows, err := db.QueryContext(ctx, pgArticles, pageSize, (page-1)*pageSize)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := make([]voting.Article, 0, pageSize)
	for rows.Next() {
		var a voting.Article
		var id, posted int64
		if err := rows.Scan(&id, &a.Title, &a.Link, &a.Poster, &posted, &a.Score, &a.Upvotes, &a.Downvotes); err != nil {
			return nil, err
		}
		a.ID, a.Posted = strconv.FormatInt(id, 10), time.Unix(posted, 0).UTC()
		list = append(list, a)
	}
	return list, rows.Err()
}

// pgVotesOf reads user's votes on ids as Store.VotesOf does.
func pgVotesOf(ctx context.Context, db *sql.DB, user string, ids []int64) ([]voting.VoteType, error) {
	rows, err := db.QueryContext(ctx, pgVotes, user, pgtype.FlatArray[int64](ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	votes := make([]voting.VoteType, len(ids))
	for rows.Next() {
		var id int64
		var v int16
		if err := rows.Scan(&id, &v); err != nil {
			return nil, err
		}
		for i, x := range ids {
			if x == id {
				votes[i] = voting.VoteType(v)
			}
		}
	}
	return votes, rows.Err()
}

// TestSameData checks that both sides hold the same articles and votes:
// the pages the benchmarks read, and a user's votes on them.
func TestSameData(t *testing.T) {
	s := data(t)
	ctx := context.Background()
	for _, page := range []int{1, 40} {
		want, err := s.store.Articles(ctx, voting.ScoreDesc, page)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgPage(ctx, s.db, page)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("page %d:\nPostgreSQL %v\nRedis      %v", page, got, want)
		}
		ids, strs := pageIDs(want)
		for u := 0; u < 200; u++ {
			want, err := s.store.VotesOf(ctx, user(u), strs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pgVotesOf(ctx, s.db, user(u), ids)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("page %d, %s's votes: PostgreSQL %v, Redis %v", page, user(u), got, want)
			}
			list, votes, err := s.store.ArticlesFor(ctx, user(u), voting.ScoreDesc, page)
			if err != nil {
				t.Fatal(err)
			}
			pgList, pgVotes, err := pgPageFor(ctx, s.db, user(u), page)
			if err != nil {
				t.Fatal(err)
			}
			if r, p := fmt.Sprint(list, votes), fmt.Sprint(pgList, pgVotes); r != p || fmt.Sprint(votes) != fmt.Sprint(want) {
				t.Fatalf("page %d, %s's view in one call:\nPostgreSQL %v\nRedis      %v", page, user(u), p, r)
			}
		}
	}
}

func pageIDs(list []voting.Article) ([]int64, []string) {
	ids, strs := make([]int64, len(list)), make([]string, len(list))
	for i, a := range list {
		strs[i] = a.ID
		ids[i], _ = strconv.ParseInt(a.ID, 10, 64)
	}
	return ids, strs
}

// BenchmarkPageView reads a page view, a page of 25 articles by score and
// the viewer's votes on them, from 8 callers per CPU, on each side, on
// page 1 and page 40: as two reads, two round trips on each side
// ("view": Articles and VotesOf; the page query and the votes' = ANY
// lookup), as one ("view1": ArticlesFor; one statement, the page query
// with the viewer's votes LEFT JOINed, pgView), and each of the two
// reads alone. The viewers are random users. The two sides take
// turns, in rounds (pageViewRounds, 5 unless VOTING_PG_ROUNDS says),
// each round running every read of a page on both, so that each pair
// runs under the same load on a shared machine; after the rounds,
// <what>/page<n>/ratio reports x-postgres, PostgreSQL's time per op over
// the store's (the store's throughput over PostgreSQL's), the median
// over the rounds of the ratio within a round, and its lowest and
// highest, and the log (-v) prints each round's. best/page<n>/ratio
// compares the store's view in one call with PostgreSQL's faster view
// of the round, in two statements or in one.
func BenchmarkPageView(b *testing.B) {
	s := data(b)
	type side struct {
		name    string
		servers func() []int // the server's processes
		page    func(ctx context.Context, page int) ([]int64, []string, error)
		votes   func(ctx context.Context, user string, ids []int64, strs []string) error
		view    func(ctx context.Context, user string, page int) error // in one round trip
	}
	sides := []side{
		{"redis", s.redisPids,
			func(ctx context.Context, page int) ([]int64, []string, error) {
				list, err := s.store.Articles(ctx, voting.ScoreDesc, page)
				if err != nil {
					return nil, nil, err
				}
				return nil, ids(list), nil
			},
			func(ctx context.Context, user string, _ []int64, strs []string) error {
				_, err := s.store.VotesOf(ctx, user, strs)
				return err
			},
			func(ctx context.Context, user string, page int) error {
				_, _, err := s.store.ArticlesFor(ctx, user, voting.ScoreDesc, page)
				return err
			}},
		{"postgres", s.pg.pids,
			func(ctx context.Context, page int) ([]int64, []string, error) {
				list, err := pgPage(ctx, s.db, page)
				if err != nil {
					return nil, nil, err
				}
				ids, _ := pageIDs(list)
				return ids, nil, nil
			},
			func(ctx context.Context, user string, ids []int64, _ []string) error {
				_, err := pgVotesOf(ctx, s.db, user, ids)
				return err
			},
			func(ctx context.Context, user string, page int) error {
				_, _, err := pgPageFor(ctx, s.db, user, page)
				return err
			}},
	}
	ctx := context.Background()
	rounds := pageViewRounds()
	whats := []string{"view", "view1", "page", "votes"}
	for _, page := range []int{1, 40} {
		// Each what's time and CPU per op, round by round, redis then
		// postgres.
		nsPerOp, cpuPerOp := make([][][2]float64, len(whats)), make([][][2]float64, len(whats))
		for w := range whats {
			nsPerOp[w], cpuPerOp[w] = make([][2]float64, rounds), make([][2]float64, rounds)
		}
		for r := 0; r < rounds; r++ {
			for w, what := range whats {
				for k, sd := range sides {
					b.Run(fmt.Sprintf("%s/page%d/%s", what, page, sd.name), func(b *testing.B) {
						ids, strs, err := sd.page(ctx, page) // for the votes alone
						if err != nil {
							b.Fatal(err)
						}
						var seed int64
						var mu sync.Mutex
						b.SetParallelism(8)
						b.ReportAllocs()
						client, server := selfCPU(), processesCPU(sd.servers())
						b.ResetTimer()
						b.RunParallel(func(pb *testing.PB) {
							mu.Lock()
							seed++
							rng := rand.New(rand.NewSource(seed))
							mu.Unlock()
							for pb.Next() {
								var err error
								ids, strs := ids, strs
								switch what {
								case "view1":
									err = sd.view(ctx, user(rng.Intn(nUsers)), page)
								case "page":
									_, _, err = sd.page(ctx, page)
								case "votes":
									err = sd.votes(ctx, user(rng.Intn(nUsers)), ids, strs)
								default:
									ids, strs, err = sd.page(ctx, page)
									if err == nil {
										err = sd.votes(ctx, user(rng.Intn(nUsers)), ids, strs)
									}
								}
								if err != nil {
									b.Error(err)
									return
								}
							}
						})
						b.StopTimer()
						client, server = selfCPU()-client, processesCPU(sd.servers())-server
						n := float64(b.N)
						b.ReportMetric(float64(client.Microseconds())/n, "client-cpu-µs/op")
						b.ReportMetric(float64(server.Microseconds())/n, "server-cpu-µs/op")
						// The last run, of b.N ops, stays.
						nsPerOp[w][r][k] = float64(b.Elapsed().Nanoseconds()) / n
						cpuPerOp[w][r][k] = float64((client + server).Nanoseconds()) / n
					})
				}
			}
		}
		ratio := func(name string, ns, cpu func(r int) (redis, postgres float64)) {
			ratios, cpuRatios := make([]float64, rounds), make([]float64, rounds)
			for r := range ratios {
				rd, pg := ns(r)
				ratios[r] = pg / rd
				rd, pg = cpu(r)
				cpuRatios[r] = pg / rd
			}
			b.Logf("%s/page%d: PostgreSQL's time over the store's, round by round: %.2f; CPU: %.2f", name, page, ratios, cpuRatios)
			slices.Sort(ratios)
			slices.Sort(cpuRatios)
			b.Run(fmt.Sprintf("%s/page%d/ratio", name, page), func(b *testing.B) {
				b.ReportMetric(ratios[len(ratios)/2], "x-postgres")
				b.ReportMetric(ratios[0], "x-postgres-min")
				b.ReportMetric(ratios[len(ratios)-1], "x-postgres-max")
				b.ReportMetric(cpuRatios[len(cpuRatios)/2], "x-postgres-cpu")
			})
		}
		ran := func(w int) bool { return nsPerOp[w][0][0] != 0 && nsPerOp[w][0][1] != 0 } // -bench may leave some out
		for w, what := range whats {
			if ran(w) {
				ratio(what, func(r int) (float64, float64) { return nsPerOp[w][r][0], nsPerOp[w][r][1] },
					func(r int) (float64, float64) { return cpuPerOp[w][r][0], cpuPerOp[w][r][1] })
			}
		}
		// best: the store's page view in one call against PostgreSQL's
		// faster page view of the round, in two statements or in one.
		if ran(0) && ran(1) {
			ratio("best", func(r int) (float64, float64) { return nsPerOp[1][r][0], min(nsPerOp[0][r][1], nsPerOp[1][r][1]) },
				func(r int) (float64, float64) { return cpuPerOp[1][r][0], min(cpuPerOp[0][r][1], cpuPerOp[1][r][1]) })
		}
	}
}

// redisPids returns the redis-server's process, from INFO.
func (s *sides) redisPids() []int {
	c := s.pool.Get()
	defer c.Close()
	text, _ := redis.String(c.Do("INFO", "server"))
	for _, line := range strings.Split(text, "\r\n") {
		if v, ok := strings.CutPrefix(line, "process_id:"); ok {
			pid, _ := strconv.Atoi(v)
			return []int{pid}
		}
	}
	return nil
}

// pageViewRounds is the rounds of BenchmarkPageView: VOTING_PG_ROUNDS,
// or 5.
func pageViewRounds() int {
	if n, err := strconv.Atoi(os.Getenv("VOTING_PG_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
}

func ids(list []voting.Article) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.ID
	}
	return out
}
