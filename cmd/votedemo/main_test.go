package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting/testkit/redistest"
)

// The book's scenario scaled down: 60 articles a day, 3 of them
// interesting, judged against the top 6 instead of 1,000, 50 and 100.
// The competition for a place in the top scales with it, so the claim
// must hold as in the full run.
func smallConfig() config {
	return config{Days: 4, PerDay: 60, Seed: 7, Top: 6, Show: 3, Group: defaultGroup, Workers: 4}
}

func TestSimulateClaimHolds(t *testing.T) {
	mr := miniredis.RunT(t)
	cfg := smallConfig()
	cfg.Elapse = mr.FastForward
	var out bytes.Buffer
	r, err := simulate(context.Background(), miniPool(t, mr), "demo", &out, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Judged != 3 || r.Min < claimStay {
		t.Errorf("claim failed: %+v\n%s", r, out.String())
	}
	if r.Articles != 240 || r.Votes < 3*3*interestingVotes {
		t.Errorf("ran %d articles and %d votes, want 240 and at least %d", r.Articles, r.Votes, 3*3*interestingVotes)
	}
	for _, want := range []string{
		"== Day 1, Mon 1 Jan 2024: 60 articles",
		"== Day 4, Thu 4 Jan 2024: 240 articles",
		"Front page, by score (top 3 of 240)",
		`Group "redis", by score (top 3 of `,
		"rank  id  title",
		"Comments on #",
		", best first (",
		"3/3 interesting articles of day 2 stayed in the top 6 for >= 24h; min ",
		"\nPASS\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// With 2 interesting articles a day and a top of 1, they cannot all stay
// a day: the check must see it.
func TestSimulateClaimFails(t *testing.T) {
	mr := miniredis.RunT(t)
	cfg := config{Days: 4, PerDay: 40, Seed: 1, Top: 1, Show: 1, Group: defaultGroup, Workers: 2, Elapse: mr.FastForward}
	var out bytes.Buffer
	r, err := simulate(context.Background(), miniPool(t, mr), "demo", &out, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK() || len(r.Short) == 0 || r.Passed+len(r.Short) != r.Judged || r.Judged != 2 {
		t.Errorf("claim held in the top 1: %+v", r)
	}
	if !strings.Contains(out.String(), "\nFAIL: ") {
		t.Errorf("output lacks FAIL:\n%s", out.String())
	}
}

// The same seed replays the same run byte for byte, whatever the number
// of workers. The run fails, and two of the articles it lists as too
// short stayed in the top for the same time: the FAIL line must list
// them in one order, by id.
func TestSimulateRepeats(t *testing.T) {
	cfg := config{Days: 4, PerDay: 100, Seed: 3, Top: 1, Show: 1, Group: defaultGroup}
	var outs [2]string
	for i, workers := range []int{1, 3} {
		mr := miniredis.RunT(t)
		cfg.Workers, cfg.Elapse = workers, mr.FastForward
		var out bytes.Buffer
		if _, err := simulate(context.Background(), miniPool(t, mr), "demo", &out, cfg); err != nil {
			t.Fatal(err)
		}
		outs[i] = out.String()
	}
	if outs[0] != outs[1] {
		t.Errorf("two runs of seed 3 differ:\n%s\n---\n%s", outs[0], outs[1])
	}
	if want := "\nFAIL: 5 left the top 1 too soon: #162 0h, #175 0h, #184 4h, #166 5.3h, #148 14.3h\n"; !strings.HasSuffix(outs[0], want) {
		t.Errorf("output does not end in%s:\n%s", want, outs[0])
	}
}

// judge lists the articles that left the top too soon by time in the
// top, then by id as a number, whatever the order they were tracked in.
func TestJudgeOrder(t *testing.T) {
	s := &sim{cfg: config{Days: 4}, tracked: make(map[string]*tracked)}
	for _, id := range []string{"30", "9", "100", "12", "7", "25"} {
		inTop := 3 * time.Hour
		if id == "25" {
			inTop = time.Hour
		}
		s.tracked[id] = &tracked{day: 2, inTop: inTop}
		s.trackedIDs = append(s.trackedIDs, id)
	}
	var got []string
	for _, st := range s.judge().Short {
		got = append(got, st.ID)
	}
	if want := "25 7 9 12 30 100"; strings.Join(got, " ") != want {
		t.Errorf("short articles in order %q, want %q", got, want)
	}
}

// On a real server, the run keeps to a fresh prefix and deletes its keys
// at the end, and prints what it prints on miniredis: the two backends
// agree, and the group table is current without Elapse.
func TestRunOnRedis(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do("SET", "other", "data")
	// Scaled down fiftyfold: 20 articles a day, one interesting, a top of 2.
	cfg := config{Days: 4, PerDay: 20, Seed: 1, Top: 2, Show: 2, Group: defaultGroup, Workers: 4}
	var mini bytes.Buffer
	if ok, err := run(context.Background(), &mini, cfg, "", false); err != nil || !ok {
		t.Fatalf("run on miniredis: ok %v, err %v\n%s", ok, err, mini.String())
	}
	_, wantBody, _ := strings.Cut(mini.String(), "\n")
	for _, addr := range []string{srv.Addr, "redis://" + srv.Addr + "/0"} {
		var out bytes.Buffer
		ok, err := run(context.Background(), &out, cfg, addr, false)
		if err != nil || !ok {
			t.Fatalf("run on %s: ok %v, err %v\n%s", addr, ok, err, out.String())
		}
		if !strings.Contains(out.String(), `on Redis at `+addr+` (key prefix "votedemo-`) {
			t.Errorf("header does not name the server and prefix:\n%s", out.String())
		}
		if _, body, _ := strings.Cut(out.String(), "\n"); body != wantBody {
			t.Errorf("on %s the run printed:\n%s\non miniredis:\n%s", addr, body, wantBody)
		}
		keys, err := redis.Strings(srv.Do("KEYS", "*"))
		if err != nil || len(keys) != 1 || keys[0] != "other" {
			t.Errorf("keys after the run: %q, %v; want only \"other\"", keys, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*config)
	}{
		{"days", func(c *config) { c.Days = 3 }},
		{"per day", func(c *config) { c.PerDay = 19 }},
		{"per day too many", func(c *config) { c.PerDay = 86401 }},
		{"top", func(c *config) { c.Top = 0 }},
		{"top too big", func(c *config) { c.Top = 1001 }},
		{"show", func(c *config) { c.Show = 11 }},
		{"workers", func(c *config) { c.Workers = 0 }},
	} {
		cfg := smallConfig()
		tc.edit(&cfg)
		if err := cfg.validate(); err == nil {
			t.Errorf("%s: %+v accepted", tc.name, cfg)
		}
	}
	if err := smallConfig().validate(); err != nil {
		t.Error(err)
	}
}

// TestMain runs main itself when the test binary is started by
// TestExitStatus.
func TestMain(m *testing.M) {
	if os.Getenv("VOTEDEMO_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
		out  string
	}{
		{[]string{"-days", "4", "-per-day", "40", "-top", "1", "-show", "1", "-quiet"}, 1, "FAIL: "},
		{[]string{"-days", "2"}, 2, ""},
		{[]string{"extra"}, 2, ""},
		{[]string{"-redis", "127.0.0.1:1"}, 2, ""},
	} {
		cmd := exec.Command(os.Args[0], tc.args...)
		cmd.Env = append(os.Environ(), "VOTEDEMO_RUN_MAIN=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != tc.want {
			t.Errorf("votedemo %q: %v, want exit status %d\n%s", tc.args, err, tc.want, stderr.String())
		}
		if !strings.Contains(stdout.String(), tc.out) {
			t.Errorf("votedemo %q: stdout lacks %q:\n%s", tc.args, tc.out, stdout.String())
		}
		if tc.want == 1 && stderr.Len() > 0 {
			t.Errorf("votedemo %q -quiet wrote to stderr: %s", tc.args, stderr.String())
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{commas(0), "0"},
		{commas(999), "999"},
		{commas(1000), "1,000"},
		{commas(98765), "98,765"},
		{commas(1234567), "1,234,567"},
		{commas(-1234), "-1,234"},
		{hours(24 * time.Hour), "24h"},
		{hours(25*time.Hour + 20*time.Minute), "25.3h"},
		{age(26*time.Hour + 40*time.Minute + 59*time.Second), "26h40m"},
		{age(5 * time.Minute), "0h05m"},
		{clip("short", 10), "short"},
		{clip("a longer title", 10), "a longe..."},
		{upperFirst("sorted sets, explained"), "Sorted sets, explained"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	var b bytes.Buffer
	writeTable(&b, [][]string{{"rank", "title"}, {"1", "a"}, {"10", "bb"}}, "rl")
	if want := "rank  title\n   1  a\n  10  bb\n"; b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func miniPool(t *testing.T, mr *miniredis.Miniredis) *redis.Pool {
	pool := &redis.Pool{MaxIdle: 8, DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", mr.Addr())
	}}
	t.Cleanup(func() { pool.Close() })
	return pool
}
