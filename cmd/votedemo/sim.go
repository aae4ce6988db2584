package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/votekit/voting"
)

// The book's traffic model. One article in interestingShare is
// interesting: it collects interestingVotes to interestingVotes+
// interestingExtra upvotes, spread over its first interestingSpread. The
// others get 0 to maxDullVotes random votes over their first day, two in
// three of them up. The claim: an interesting article stays in the top
// of the score ordering for at least claimStay.
const (
	interestingShare  = 20
	interestingVotes  = 200
	interestingExtra  = 40
	interestingSpread = 20 * time.Hour
	maxDullVotes      = 6
	claimStay         = 24 * time.Hour

	// step is the simulation's tick: votes are cast in batches of one
	// step, and the top of the front page is sampled after each.
	step = 10 * time.Minute
	day  = 24 * time.Hour
	// users is the number of readers; an article's voters are distinct
	// readers, so the most votes an article may get must stay below it.
	users = 5000
)

// epoch is the simulated time at which day 1 begins.
var epoch = time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)

// config is one run of the simulation.
type config struct {
	Days    int    // simulated days of posting; at least 4
	PerDay  int    // articles posted a day; at least interestingShare
	Seed    uint64 // seeds the traffic: a seed replays the same run
	Top     int    // the claim is about the top Top of the score ordering
	Show    int    // rows in each daily table
	Group   string // the group whose table is printed
	Workers int    // votes cast at once; the Store is safe for concurrent use
	Backend string // where the store lives, for the header

	// Progress, if not nil, receives a progress report: a line per
	// simulated day, or with Live one line rewritten every simulated hour.
	Progress io.Writer
	Live     bool
	// Elapse, if not nil, is called as simulated time passes. With an
	// embedded miniredis it moves the server's clock, so keys expire in
	// simulated time.
	Elapse func(time.Duration)
}

func (c config) validate() error {
	switch {
	case c.Days < 4:
		return fmt.Errorf("days is %d; it must be at least 4: day 1 fills the front page, and the last two days watch the articles judged", c.Days)
	case c.PerDay < interestingShare:
		return fmt.Errorf("articles a day is %d; it must be at least %d, so that one a day is interesting", c.PerDay, interestingShare)
	case c.PerDay > int(day/time.Second):
		return fmt.Errorf("articles a day is %d; at most one a second (%d a day)", c.PerDay, int(day/time.Second))
	case c.Top < 1 || c.Top > voting.MaxPageSize:
		return fmt.Errorf("top is %d; it must be from 1 to %d", c.Top, voting.MaxPageSize)
	case c.Show < 1 || c.Show > c.Top:
		return fmt.Errorf("show is %d; it must be from 1 to top (%d)", c.Show, c.Top)
	case c.Workers < 1:
		return fmt.Errorf("workers is %d; it must be at least 1", c.Workers)
	}
	return nil
}

// result is the outcome of a run and of the check of the claim.
type result struct {
	Articles, Votes int
	// The judged articles are the interesting ones posted from day
	// FirstDay to day LastDay.
	FirstDay, LastDay int
	Judged, Passed    int
	Min, Median, Max  time.Duration // their times in the top
	Short             []stay        // those that left the top too soon
}

// OK reports whether every judged article stayed in the top long enough.
func (r result) OK() bool { return r.Judged > 0 && r.Passed == r.Judged }

// stay is how long an article spent in the top.
type stay struct {
	ID    string
	InTop time.Duration
}

// vote is one vote to cast.
type vote struct {
	user, id string
	v        voting.VoteType
}

// tracked is an interesting article whose stay in the top is measured.
type tracked struct {
	day   int
	inTop time.Duration
}

// sim is the state of one run.
type sim struct {
	cfg     config
	store   *voting.Store
	out     io.Writer
	rng     *rand.Rand
	now     atomic.Int64 // the simulated clock, Unix seconds
	pending [][]vote     // votes to cast, by the step they fall in
	tracked map[string]*tracked
	// trackedIDs are the keys of tracked in the order posted: the
	// verdict lists articles from it, never from the map, so that a
	// seed replays the same output.
	trackedIDs []string
	groups     map[string]int // articles posted to each group
	todays     map[int]bool   // which of today's articles are interesting
	posted     int
	votes      int
	started    time.Time // wall clock, for the progress report
	threads    *threads  // the day's comment threads (threads.go)
}

// simulate runs the scenario against pool under prefix, printing the
// daily tables and the verdict to out, and returns the result. An error
// means the run could not finish; a failed claim is a result that is
// not OK.
func simulate(ctx context.Context, pool voting.Pool, prefix string, out io.Writer, cfg config) (result, error) {
	if err := cfg.validate(); err != nil {
		return result{}, err
	}
	s := &sim{
		cfg:     cfg,
		out:     out,
		rng:     rand.New(rand.NewPCG(cfg.Seed, 0x766f7465)),
		tracked: make(map[string]*tracked),
		groups:  make(map[string]int),
		started: time.Now(),
		threads: newThreads(cfg.Seed),
	}
	s.now.Store(epoch.Unix())
	store, err := voting.New(pool,
		voting.WithKeyPrefix(prefix),
		voting.WithClock(func() time.Time { return time.Unix(s.now.Load(), 0) }),
		voting.WithPageSize(cfg.Top),
		// The group table is read once a simulated day: a cached order
		// would be a day old. One millisecond of the server's clock
		// (moved by Elapse on miniredis) expires it before the next read.
		voting.WithGroupCacheTTL(time.Millisecond),
	)
	if err != nil {
		return result{}, err
	}
	s.store = store
	if err := s.run(ctx); err != nil {
		return result{}, err
	}
	r := s.judge()
	s.printVerdict(r)
	return r, nil
}

// run moves the simulated clock a step at a time. Each step posts the
// articles due in it, each at its own second; casts the votes that fall
// in it, at its end; and samples the top of the score ordering, crediting
// every interesting article in it with the step's time.
func (s *sim) run(ctx context.Context) error {
	s.printHeader()
	stepsPerDay := int(day / step)
	steps := s.cfg.Days * stepsPerDay
	s.pending = make([][]vote, steps+1)
	total := s.cfg.Days * s.cfg.PerDay
	for k := 1; k <= steps; k++ {
		end := epoch.Add(time.Duration(k) * step)
		for s.posted < total && s.postTime(s.posted).Before(end) {
			if err := s.post(ctx); err != nil {
				return err
			}
		}
		s.now.Store(end.Unix())
		if err := s.cast(ctx, s.pending[k]); err != nil {
			return err
		}
		s.votes += len(s.pending[k])
		s.pending[k] = nil
		if s.cfg.Elapse != nil {
			s.cfg.Elapse(step)
		}
		top, err := s.store.Articles(ctx, voting.ScoreDesc, 1)
		if err != nil {
			return err
		}
		for _, a := range top {
			if t := s.tracked[a.ID]; t != nil {
				t.inTop += step
			}
		}
		if k%stepsPerDay == 0 {
			if err := s.printDay(ctx, k/stepsPerDay, top); err != nil {
				return err
			}
		} else if k%int(time.Hour/step) == 0 {
			s.progress(k/stepsPerDay+1, end, false)
		}
	}
	if s.cfg.Live && s.cfg.Progress != nil {
		fmt.Fprint(s.cfg.Progress, "\r\033[K")
	}
	return nil
}

// postTime returns when the n-th article (from 0) is posted: each day's
// articles are evenly spread over the day.
func (s *sim) postTime(n int) time.Time {
	d, i := n/s.cfg.PerDay, n%s.cfg.PerDay
	return epoch.Add(time.Duration(d)*day + time.Duration(i)*day/time.Duration(s.cfg.PerDay)).Truncate(time.Second)
}

// post posts the next article at its time, puts it in its groups and
// schedules its votes.
func (s *sim) post(ctx context.Context) error {
	at := s.postTime(s.posted)
	s.now.Store(at.Unix())
	d, i := s.posted/s.cfg.PerDay, s.posted%s.cfg.PerDay
	s.posted++
	interesting := s.interesting(d, i)
	groups, title := s.topic()
	a, err := s.store.Post(ctx, fmt.Sprintf("poster%d", s.rng.IntN(500)), title,
		fmt.Sprintf("https://news.example/%d/%d", d+1, i+1))
	if err != nil {
		return err
	}
	if err := s.store.AddToGroups(ctx, a.ID, groups...); err != nil {
		return err
	}
	for _, g := range groups {
		s.groups[g]++
	}
	n, spread := s.rng.IntN(maxDullVotes+1), day
	if interesting {
		s.tracked[a.ID] = &tracked{day: d + 1}
		s.trackedIDs = append(s.trackedIDs, a.ID)
		n, spread = interestingVotes+s.rng.IntN(interestingExtra+1), interestingSpread
	}
	// The article's voters are n distinct readers, from a random one on.
	first := s.rng.IntN(users)
	for j := 0; j < n; j++ {
		v := voting.Upvote
		if !interesting && s.rng.IntN(3) == 0 {
			v = voting.Downvote
		}
		when := at.Add(time.Duration(s.rng.Int64N(int64(spread))))
		k := int(when.Sub(epoch)/step) + 1
		if k < len(s.pending) {
			s.pending[k] = append(s.pending[k], vote{
				user: fmt.Sprintf("reader%d", (first+j)%users), id: a.ID, v: v})
		}
	}
	return nil
}

// interesting reports whether article i of day d (from 0) is interesting.
// The day's interesting articles are drawn when its first article is
// posted.
func (s *sim) interesting(d, i int) bool {
	if i == 0 {
		s.todays = make(map[int]bool)
		for _, j := range s.rng.Perm(s.cfg.PerDay)[:s.cfg.PerDay/interestingShare] {
			s.todays[j] = true
		}
	}
	return s.todays[i]
}

// cast casts votes from cfg.Workers goroutines and returns the first
// error.
func (s *sim) cast(ctx context.Context, votes []vote) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for w := 0; w < s.cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(votes)); i = next.Add(1) - 1 {
				v := votes[i]
				if _, err := s.store.Vote(ctx, v.user, v.id, v.v); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(len(votes))) // stop the others
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// judge checks the claim on the interesting articles posted after the
// first day, which fills the front page, and at least two days before the
// end, so that their whole stay in the top is seen.
func (s *sim) judge() result {
	r := result{Articles: s.posted, Votes: s.votes, FirstDay: 2, LastDay: s.cfg.Days - 2}
	var times []time.Duration
	for _, id := range s.trackedIDs {
		t := s.tracked[id]
		if t.day < r.FirstDay || t.day > r.LastDay {
			continue
		}
		r.Judged++
		times = append(times, t.inTop)
		if t.inTop >= claimStay {
			r.Passed++
		} else {
			r.Short = append(r.Short, stay{ID: id, InTop: t.inTop})
		}
	}
	if len(times) > 0 {
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		r.Min, r.Median, r.Max = times[0], times[len(times)/2], times[len(times)-1]
	}
	// A total order: many articles share a time in the top, a multiple
	// of step, and the output must not depend on how they were found.
	sort.Slice(r.Short, func(i, j int) bool {
		a, b := r.Short[i], r.Short[j]
		if a.InTop != b.InTop {
			return a.InTop < b.InTop
		}
		return idLess(a.ID, b.ID)
	})
	return r
}

// idLess orders article ids as numbers: they are decimal, without
// leading zeros, so a shorter id is a smaller one.
func idLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func (s *sim) printHeader() {
	c := s.cfg
	fmt.Fprintf(s.out, "Article voting as in \"Redis in Action\" 1.3, simulated over %d days on %s.\n", c.Days, c.Backend)
	fmt.Fprintf(s.out, "Every day %s articles are posted; %s of them are interesting and collect at least\n",
		commas(c.PerDay), commas(c.PerDay/interestingShare))
	fmt.Fprintf(s.out, "%d upvotes over their first %s, the rest up to %d random up and down votes.\n",
		interestingVotes, hours(interestingSpread), maxDullVotes)
	fmt.Fprintf(s.out, "Score = post time in Unix seconds + %g per net vote: %d votes are worth a day.\n",
		voting.DefaultVoteWeight, interestingVotes)
	fmt.Fprintf(s.out, "Seed %d. * marks an interesting article; age is the time since posting.\n", c.Seed)
	fmt.Fprintf(s.out, "Each day readers comment on the top %d articles; their threads read best first.\n", threadArticles)
}

// printDay prints the tables at the end of day d (from 1): the front page
// as last sampled, and the group's first page.
func (s *sim) printDay(ctx context.Context, d int, top []voting.Article) error {
	s.progress(d, epoch.Add(time.Duration(d)*day), true)
	group, err := s.store.GroupArticles(ctx, s.cfg.Group, voting.ScoreDesc, 1)
	if err != nil {
		return err
	}
	now := epoch.Add(time.Duration(d) * day)
	fmt.Fprintf(s.out, "\n== Day %d, %s: %s articles, %s votes so far ==\n",
		d, now.Add(-time.Second).Format("Mon 2 Jan 2006"), commas(s.posted), commas(s.votes))
	fmt.Fprintf(s.out, "Front page, by score (top %d of %s)\n", s.cfg.Show, commas(s.posted))
	s.printTable(top, now)
	fmt.Fprintf(s.out, "Group %q, by score (top %d of %s)\n", s.cfg.Group, s.cfg.Show, commas(s.groups[s.cfg.Group]))
	s.printTable(group, now)
	return s.printThreads(ctx, top)
}

func (s *sim) printTable(list []voting.Article, now time.Time) {
	if len(list) > s.cfg.Show {
		list = list[:s.cfg.Show]
	}
	rows := [][]string{{"rank", "id", "title", "score", "up", "down", "age"}}
	for i, a := range list {
		mark := "  "
		if s.tracked[a.ID] != nil {
			mark = "* "
		}
		rows = append(rows, []string{
			fmt.Sprint(i + 1), a.ID, mark + clip(a.Title, 44),
			fmt.Sprintf("%.0f", a.Score), fmt.Sprint(a.Upvotes), fmt.Sprint(a.Downvotes),
			age(now.Sub(a.Posted)),
		})
	}
	writeTable(s.out, rows, "rrlrrrr")
}

func (s *sim) printVerdict(r result) {
	days := fmt.Sprintf("days %d-%d", r.FirstDay, r.LastDay)
	if r.FirstDay == r.LastDay {
		days = fmt.Sprintf("day %d", r.FirstDay)
	}
	fmt.Fprintf(s.out, "\nThe claim: an article with %d upvotes a day stays in the top %d for a day.\n",
		interestingVotes, s.cfg.Top)
	fmt.Fprintf(s.out, "%d/%d interesting articles of %s stayed in the top %d for >= %s; min %s, median %s, max %s.\n",
		r.Passed, r.Judged, days, s.cfg.Top, hours(claimStay), hours(r.Min), hours(r.Median), hours(r.Max))
	if r.OK() {
		fmt.Fprintln(s.out, "PASS")
		return
	}
	var short []string
	for i, st := range r.Short {
		if i == 10 {
			short = append(short, "...")
			break
		}
		short = append(short, fmt.Sprintf("#%s %s", st.ID, hours(st.InTop)))
	}
	fmt.Fprintf(s.out, "FAIL: %d left the top %d too soon: %s\n", len(r.Short), s.cfg.Top, strings.Join(short, ", "))
}

// progress reports the run's progress at simulated time t of day d; a
// day's end gets a line of its own unless the report is live.
func (s *sim) progress(d int, t time.Time, dayEnd bool) {
	w := s.cfg.Progress
	if w == nil || (!s.cfg.Live && !dayEnd) {
		return
	}
	msg := fmt.Sprintf("votedemo: day %d/%d %s, %s articles, %s votes, %.1fs",
		d, s.cfg.Days, clockTime(t, dayEnd), commas(s.posted), commas(s.votes), time.Since(s.started).Seconds())
	if s.cfg.Live {
		// Rewrite the line in place; clear it before a table is printed.
		if dayEnd {
			fmt.Fprint(w, "\r\033[K")
			return
		}
		fmt.Fprint(w, "\r\033[K"+msg)
		return
	}
	fmt.Fprintln(w, msg)
}
