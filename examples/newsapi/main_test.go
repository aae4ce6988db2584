package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/votekit/voting"
	"github.com/votekit/voting/testkit/redistest"
	"github.com/votekit/voting/testkit/testclock"
)

// TestServe runs the service as main does, on the embedded miniredis and
// on a real server, over a real HTTP connection, and shuts it down.
func TestServe(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) { testServe(t, "") })
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		testServe(t, "redis://"+srv.Addr)
	})
}

func testServe(t *testing.T, redisAddr string) {
	base, shutdown := startServe(t, testConfig(redisAddr, voting.DefaultVoteWindow))
	location := requestAs(t, "alice", "POST", base+"/articles", `{"title":"served","link":"https://example.com/served"}`, http.StatusCreated)
	if body := request(t, "GET", base+location, "", http.StatusOK); !strings.Contains(body, `"title":"served"`) {
		t.Errorf("GET %s: %s", location, body)
	}
	// The store has every order, and Top for /top.
	for _, order := range []string{"top", "hot", "best", "controversial"} {
		if body := request(t, "GET", base+"/articles?order="+order, "", http.StatusOK); !strings.Contains(body, `"total":1`) {
			t.Errorf("GET /articles?order=%s: %s", order, body)
		}
	}
	if body := request(t, "GET", base+"/top?since=1h", "", http.StatusOK); !strings.Contains(body, `"title":"served"`) {
		t.Errorf("GET /top?since=1h: %s", body)
	}
	// Without -unique-links, a link may be posted twice.
	requestAs(t, "bob", "POST", base+"/articles", `{"title":"again","link":"https://example.com/served"}`, http.StatusCreated)
	if err := shutdown(); err != nil {
		t.Errorf("serve after shutdown: %v", err)
	}
}

// With -window 1s, voting on an article closes a second after it is
// posted: a vote then gets the 409.
func TestServeWindow(t *testing.T) {
	base, shutdown := startServe(t, testConfig("", time.Second))
	defer shutdown()
	vote := requestAs(t, "alice", "POST", base+"/articles", `{"title":"soon closed"}`, http.StatusCreated) + "/vote"
	requestAs(t, "bob", "PUT", base+vote, `{"vote":"up"}`, http.StatusOK)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		req, _ := http.NewRequest("PUT", base+vote, strings.NewReader(`{"vote":"up"}`))
		req.Header.Set("Authorization", "Bearer "+mustToken(t, "carol", roleUser, time.Now().Add(time.Hour)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusConflict && strings.Contains(string(body), "voting closed") {
			break
		}
		if resp.StatusCode != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("PUT %s more than a second after posting: %s %s, want 409", vote, resp.Status, body)
		}
	}
}

// With -unique-links, a link posted twice gets the 409 and the article
// that has it.
func TestServeUniqueLinks(t *testing.T) {
	cfg := testConfig("", voting.DefaultVoteWindow)
	cfg.uniqueLinks = true
	base, shutdown := startServe(t, cfg)
	defer shutdown()
	const post = `{"title":"first","link":"https://example.com/once"}`
	location := requestAs(t, "alice", "POST", base+"/articles", post, http.StatusCreated)
	if got := requestAs(t, "alice", "POST", base+"/articles", post, http.StatusConflict); got != location {
		t.Errorf("POST of a duplicate link: Location %q, want %q", got, location)
	}
}

func TestServeBadWindow(t *testing.T) {
	err := serve(context.Background(), log.New(io.Discard, "", 0), testConfig("", 500*time.Millisecond),
		func(string) { t.Error("served with a window under a second") })
	if err == nil || !strings.Contains(err.Error(), "window") {
		t.Errorf("serve with -window 500ms: %v", err)
	}
}

func TestServeBadRedis(t *testing.T) {
	err := serve(context.Background(), log.New(io.Discard, "", 0),
		testConfig("redis://user:secret@127.0.0.1:1", voting.DefaultVoteWindow), func(string) { t.Error("served without Redis") })
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("serve on a closed port: %v", err)
	}
}

// A store that records other shared options than the flags give keeps
// the service from starting, with the difference and the votectl
// command that records the flags' options; the same options start.
func TestServeRefusesOtherOptions(t *testing.T) {
	for _, backend := range []string{"miniredis", "redis"} {
		t.Run(backend, func(t *testing.T) {
			var addr string
			if backend == "miniredis" {
				addr = miniredis.RunT(t).Addr()
			} else {
				addr = redistest.Start(t).Addr
			}
			cfg := testConfig(addr, voting.DefaultVoteWindow)
			cfg.rules.karma = &[2]int64{1, -1}
			base, shutdown := startServe(t, cfg)
			requestAs(t, "alice", "POST", base+"/articles", `{"title":"recorded"}`, http.StatusCreated)
			if err := shutdown(); err != nil {
				t.Fatal(err)
			}

			cfg.rules.karma = nil
			cfg.rules.voteLimit, cfg.rules.votePer = 5, time.Minute
			var logged bytes.Buffer
			err := serve(context.Background(), log.New(&logged, "", 0), cfg, func(string) { t.Error("served") })
			for _, want := range []string{"not starting", "incompatible store", "karma off here, 1,-1 in the store",
				"votelimit 5,60000 here, off in the store", `"votectl -prefix newsapi-test options -vote-limit 5/1m -karma off"`,
				"start the process with the store's: no -vote-limit, -karma 1,-1"} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("serve with other options: %v, want %q", err, want)
				}
			}

			cfg.rules.karma = &[2]int64{1, -1}
			cfg.rules.voteLimit, cfg.rules.votePer = 0, 0
			_, shutdown = startServe(t, cfg)
			if err := shutdown(); err != nil {
				t.Error(err)
			}
		})
	}
}

// followClock moves the embedded server's clock as its own clock moves,
// so keys expire; once stopped, it moves it no more.
func TestFollowClock(t *testing.T) {
	mr := miniredis.RunT(t)
	clock := testclock.New(time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC))
	stop := followClock(mr, time.Millisecond, clock.Now)
	mr.Set("short", "x")
	mr.SetTTL("short", time.Second)
	mr.Set("long", "x")
	mr.SetTTL("long", time.Hour)
	time.Sleep(20 * time.Millisecond) // ticks, with no time passed
	if !mr.Exists("short") || mr.TTL("short") != time.Second {
		t.Fatalf("the clock stood still, and the key's TTL is %v", mr.TTL("short"))
	}
	clock.Add(time.Second)
	waitFor(t, "the key with a 1s TTL to expire", func() bool { return !mr.Exists("short") })
	if got := mr.TTL("long"); got != time.Hour-time.Second {
		t.Errorf("TTL of the other key %v, want %v", got, time.Hour-time.Second)
	}
	stop()
	clock.Add(time.Hour)
	time.Sleep(20 * time.Millisecond)
	if !mr.Exists("long") {
		t.Error("the server's clock moved after stop")
	}
}

// waitFor waits up to 5s for cond to hold.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// testConfig is the service's config on a free port, on the Redis at
// redisAddr (empty for an embedded miniredis), with testKey as its
// secret, given as NEWSAPI_SECRET.
func testConfig(redisAddr string, window time.Duration) config {
	return config{addr: "127.0.0.1:0", redis: redisAddr, prefix: "newsapi-test", window: window, timeout: defaultTimeout,
		secret: secretFlags{env: testKey}}
}

// startServe starts the service as main does, with cfg, and returns its
// URL and a function that shuts it down and returns serve's error.
func startServe(t *testing.T, cfg config) (base string, shutdown func() error) {
	t.Helper()
	return startServeLog(t, cfg, io.Discard)
}

// startServeLog is startServe with the service's log written to logw.
func startServeLog(t *testing.T, cfg config, logw io.Writer) (base string, shutdown func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, log.New(logw, "", 0), cfg, func(url string) {
			urls <- strings.Fields(url)[0]
		})
	}()
	select {
	case base = <-urls:
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	}
	return base, func() error {
		cancel()
		return <-done
	}
}

// request sends a request without a token that must get status want,
// and returns the reply's Location header if it has one, else its body.
func request(t *testing.T, method, url, body string, want int) string {
	t.Helper()
	return requestAs(t, "", method, url, body, want)
}

// requestAs is request with a token of user, signed with testKey, or
// without a token if user is empty.
func requestAs(t *testing.T, user, method, url, body string, want int) string {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.Header.Set("Authorization", "Bearer "+mustToken(t, user, roleUser, time.Now().Add(time.Hour)))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != want {
		t.Fatalf("%s %s: %s %s %v, want %d", method, url, resp.Status, b, err, want)
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		return loc
	}
	return string(b)
}

// GET /metrics gives the store's metrics and the requests' durations in
// Prometheus's text format.
func TestServeMetrics(t *testing.T) {
	base, shutdown := startServe(t, testConfig("", voting.DefaultVoteWindow))
	defer shutdown()
	location := requestAs(t, "alice", "POST", base+"/articles", `{"title":"measured"}`, http.StatusCreated)
	requestAs(t, "bob", "PUT", base+location+"/vote", `{"vote":"up"}`, http.StatusOK)
	request(t, "GET", base+"/articles/999", "", http.StatusNotFound)
	body := request(t, "GET", base+"/metrics", "", http.StatusOK)
	for _, want := range []string{
		`voting_call_duration_seconds_bucket{`,
		`voting_operation="Post"`,
		`voting_operation="Vote"`,
		`error_type="not_found"`,
		`voting_call_round_trips_total{`,
		`http_server_request_duration_seconds_bucket{`,
		`http_route="POST /articles"`,
		`http_response_status_code="404"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /metrics lacks %s:\n%s", want, body)
		}
	}
	for _, user := range []string{"alice", "bob", "measured"} {
		if strings.Contains(body, user) {
			t.Errorf("GET /metrics shows %q", user)
		}
	}
}

// A Redis that stops answering (CLIENT PAUSE) gets a request a JSON 503
// once its -timeout passes, not a connection that hangs, and the log
// says so; once the pause ends, the service answers again.
func TestServeStalledRedis(t *testing.T) {
	srv := redistest.Start(t)
	var logged syncBuffer
	cfg := testConfig("redis://"+srv.Addr, voting.DefaultVoteWindow)
	cfg.timeout = 300 * time.Millisecond
	base, shutdown := startServeLog(t, cfg, &logged)
	location := requestAs(t, "alice", "POST", base+"/articles", `{"title":"paused"}`, http.StatusCreated)
	if _, err := srv.Do("CLIENT", "PAUSE", 1000, "ALL"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	body := request(t, "GET", base+location, "", http.StatusServiceUnavailable)
	if took := time.Since(start); took < cfg.timeout || took > cfg.timeout+time.Second {
		t.Errorf("GET %s on a paused Redis took %v, want about %v", location, took, cfg.timeout)
	}
	if !strings.HasPrefix(body, `{"code":"timeout","error":`) {
		t.Errorf("GET %s on a paused Redis: %s", location, body)
	}
	if want := "GET " + location + ": timeout: Redis did not answer within 300ms"; !strings.Contains(logged.String(), want) {
		t.Errorf("logged %q, want %q", logged.String(), want)
	}
	// The pause ends (CLIENT UNPAUSE would wait for it too).
	time.Sleep(time.Until(start.Add(time.Second)))
	request(t, "GET", base+location, "", http.StatusOK)
	if err := shutdown(); err != nil {
		t.Errorf("serve after shutdown: %v", err)
	}
}

// The served handler, GET /metrics in front, answers a path that is not
// clean with a JSON 404, not a redirect.
func TestServeUncleanPath(t *testing.T) {
	base, shutdown := startServe(t, testConfig("", voting.DefaultVoteWindow))
	defer shutdown()
	requestAs(t, "alice", "POST", base+"/articles", `{"title":"A"}`, http.StatusCreated)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"//articles", "//metrics", "/articles/../metrics"} {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/json" || !strings.HasPrefix(string(b), `{"code":"not_found"`) {
			t.Errorf("GET %s: %s %q %s", path, resp.Status, resp.Header.Get("Content-Type"), b)
		}
	}
	request(t, "GET", base+"/metrics", "", http.StatusOK)
}

// The server limits every phase of a connection, and a reply's write
// outlasts the request's -timeout; a -timeout under 1ms is refused.
func TestServerTimeouts(t *testing.T) {
	cfg := testConfig("", voting.DefaultVoteWindow)
	cfg.timeout = 20 * time.Second
	srv := newServer(cfg, http.NotFoundHandler(), log.New(io.Discard, "", 0))
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.IdleTimeout <= 0 || srv.WriteTimeout <= cfg.timeout {
		t.Errorf("server timeouts: read header %v, read %v, write %v, idle %v; want all set, write over %v",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout, cfg.timeout)
	}
	for _, timeout := range []time.Duration{0, -time.Second, time.Microsecond} {
		cfg.timeout = timeout
		err := serve(context.Background(), log.New(io.Discard, "", 0), cfg, func(string) { t.Errorf("-timeout %v: served", timeout) })
		if err == nil || !strings.Contains(err.Error(), "-timeout") {
			t.Errorf("serve with -timeout %v: %v", timeout, err)
		}
	}
}

// Without a secret, or with one too short, the service does not start:
// the error says how to give one, and never holds the secret.
func TestServeRefusesWithoutSecret(t *testing.T) {
	short := "short-secret-" + strings.Repeat("x", 10)
	for _, tc := range []struct {
		name   string
		secret secretFlags
		want   []string
	}{
		{"none", secretFlags{}, []string{"-secret-file", "NEWSAPI_SECRET", "-insecure-dev", "at least 32 bytes"}},
		{"short env", secretFlags{env: secret(short)}, []string{"NEWSAPI_SECRET", "23 bytes", "at least 32"}},
		{"short file", secretFlags{file: writeSecret(t, short)}, []string{"-secret-file", "23 bytes", "at least 32"}},
		{"two ways", secretFlags{env: testKey, insecureDev: true}, []string{"one way only"}},
	} {
		var logged bytes.Buffer
		cfg := testConfig("", voting.DefaultVoteWindow)
		cfg.secret = tc.secret
		err := serve(context.Background(), log.New(&logged, "", 0), cfg, func(string) { t.Errorf("%s: served", tc.name) })
		if err == nil {
			t.Errorf("%s: serve = nil", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: serve = %q, want it to say %q", tc.name, err, w)
			}
		}
		if strings.Contains(err.Error(), short) || strings.Contains(logged.String(), short) {
			t.Errorf("%s: the secret is in the error %q or the log %q", tc.name, err, logged.String())
		}
	}
}

// With -insecure-dev the service starts, says loudly that anyone can
// act as anyone, and takes tokens of the public development secret.
func TestServeInsecureDev(t *testing.T) {
	var logged syncBuffer
	cfg := testConfig("", voting.DefaultVoteWindow)
	cfg.secret = secretFlags{insecureDev: true}
	base, shutdown := startServeLog(t, cfg, &logged)
	defer shutdown()
	if !strings.Contains(logged.String(), "WARNING: -insecure-dev") || !strings.Contains(logged.String(), "Never use it in production") {
		t.Errorf("the log does not warn of -insecure-dev: %q", logged.String())
	}
	exp := time.Now().Add(time.Hour).Unix()
	token, err := sign(secret(devSecret), claims{Sub: "alice", Role: roleUser, Exp: &exp})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", base+"/articles", strings.NewReader(`{"title":"dev"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("POST with a -insecure-dev token: %s", resp.Status)
	}
	// A token of testKey is not one of the development secret.
	requestAs(t, "alice", "POST", base+"/articles", `{"title":"dev"}`, http.StatusUnauthorized)
}

// The secret appears nowhere a person or a client reads: not in the
// log, not in a reply's body or headers, whatever the requests.
func TestSecretNotLeaked(t *testing.T) {
	key := "s3cr3t-" + strings.Repeat("k", 40)
	var logged syncBuffer
	cfg := testConfig("", voting.DefaultVoteWindow)
	cfg.secret = secretFlags{file: writeSecret(t, key+"\n")}
	base, shutdown := startServeLog(t, cfg, &logged)
	exp := time.Now().Add(time.Hour).Unix()
	good, err := sign(secret(key), claims{Sub: "alice", Role: roleUser, Exp: &exp})
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour).Unix()
	expired, _ := sign(secret(key), claims{Sub: "alice", Role: roleUser, Exp: &past})
	var seen strings.Builder
	for _, r := range []struct{ method, path, auth, body string }{
		{"POST", "/articles", good, `{"title":"kept"}`},
		{"POST", "/articles", good, `{"poster":"bob","title":"as bob"}`},
		{"POST", "/articles", expired, `{"title":"late"}`},
		{"POST", "/articles", key, `{"title":"the secret as a token"}`},
		{"POST", "/articles", good + "x", `{"title":"bad signature"}`},
		{"POST", "/articles", "", `{"title":"none"}`},
		{"PUT", "/articles/1/vote", good, `{"vote":"sideways"}`},
		{"DELETE", "/articles/9", good, ""},
		{"GET", "/articles/1", "", ""},
		{"GET", "/healthz", "", ""},
		{"GET", "/metrics", "", ""},
	} {
		req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
		if r.auth != "" {
			req.Header.Set("Authorization", "Bearer "+r.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Fprintf(&seen, "%s %s: %s %v %s\n", r.method, r.path, resp.Status, resp.Header, b)
	}
	if err := shutdown(); err != nil {
		t.Errorf("serve after shutdown: %v", err)
	}
	if !strings.Contains(seen.String(), "201 Created") || !strings.Contains(seen.String(), "401 Unauthorized") {
		t.Errorf("the requests did not run as expected:\n%s", seen.String())
	}
	for what, text := range map[string]string{"the log": logged.String(), "the replies": seen.String()} {
		if strings.Contains(text, key) || strings.Contains(text, "kkkkkkkk") {
			t.Errorf("%s hold the secret:\n%s", what, text)
		}
	}
}

// noEnv is an environment without variables.
func noEnv(string) string { return "" }

// env returns an environment with NEWSAPI_SECRET set to value.
func env(value string) func(string) string {
	return func(name string) string {
		if name == secretEnv {
			return value
		}
		return ""
	}
}

// "newsapi token" prints a token of the secret the service would read,
// for the user, role and time to live asked; it refuses bad arguments
// and a missing secret, and never prints the secret.
func TestTokenCommand(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	key := string(testKey)
	for _, tc := range []struct {
		name     string
		args     []string
		getenv   func(string) string
		key      string // the key the token verifies with
		sub      string
		role     role
		ttl      time.Duration
		status   int
		stderr   string // what stderr says
		noStderr bool   // stderr must be empty
	}{
		{"env", []string{"-user", "alice"}, env(key), key, "alice", roleUser, defaultTTL, 0, "", true},
		{"moderator", []string{"-user", "mod", "-role", "moderator", "-ttl", "1h"}, env(key), key, "mod", roleModerator, time.Hour, 0, "", true},
		{"file", []string{"-user", "bob", "-secret-file", writeSecret(t, key+"\n")}, noEnv, key, "bob", roleUser, defaultTTL, 0, "", true},
		{"a name with spaces", []string{"-user", "Zoë Ørsted"}, env(key), key, "Zoë Ørsted", roleUser, defaultTTL, 0, "", true},
		{"insecure dev", []string{"-insecure-dev", "-user", "alice"}, noEnv, devSecret, "alice", roleUser, defaultTTL, 0, "WARNING: -insecure-dev", false},
		{"no secret", []string{"-user", "alice"}, noEnv, "", "", "", 0, 1, "-secret-file PATH or set NEWSAPI_SECRET", false},
		{"short secret", []string{"-user", "alice"}, env("too short"), "", "", "", 0, 1, "the secret is 9 bytes; it must have at least 32", false},
		{"two secrets", []string{"-user", "alice", "-insecure-dev"}, env(key), "", "", "", 0, 1, "one way only", false},
		{"no user", []string{}, env(key), "", "", "", 0, 2, "-user is required", false},
		{"blank user", []string{"-user", "  "}, env(key), "", "", "", 0, 2, "user is blank", false},
		{"spaced user", []string{"-user", "alice "}, env(key), "", "", "", 0, 2, `user "alice ": ends with white space`, false},
		{"long user", []string{"-user", strings.Repeat("u", voting.MaxNameLen+1)}, env(key), "", "", "", 0, 2, "longer than 256 bytes", false},
		{"bad role", []string{"-user", "alice", "-role", "admin"}, env(key), "", "", "", 0, 2, `role "admin" is not user or moderator`, false},
		{"zero ttl", []string{"-user", "alice", "-ttl", "0s"}, env(key), "", "", "", 0, 2, "-ttl 0s is not positive", false},
		{"bad flag", []string{"-user", "alice", "-admin"}, env(key), "", "", "", 0, 2, "flag provided but not defined: -admin", false},
		{"help", []string{"-h"}, noEnv, "", "", "", 0, 0, "usage: newsapi token -user NAME", false},
		{"argument", []string{"-user", "alice", "extra"}, env(key), "", "", "", 0, 2, `unexpected argument "extra"`, false},
	} {
		var stdout, stderr bytes.Buffer
		status := tokenCommand(tc.args, tc.getenv, now, &stdout, &stderr)
		if status != tc.status || !strings.Contains(stderr.String(), tc.stderr) || tc.noStderr && stderr.Len() > 0 {
			t.Errorf("%s: exit %d, stderr %q; want %d, %q", tc.name, status, stderr.String(), tc.status, tc.stderr)
		}
		for _, out := range []string{stdout.String(), stderr.String()} {
			if strings.Contains(out, key) {
				t.Errorf("%s: the output holds the secret: %q", tc.name, out)
			}
		}
		if tc.status != 0 || tc.key == "" {
			if stdout.Len() > 0 {
				t.Errorf("%s: printed %q", tc.name, stdout.String())
			}
			continue
		}
		token, ok := strings.CutSuffix(stdout.String(), "\n")
		c, err := verify(secret(tc.key), token, now)
		if !ok || err != nil || c.Sub != tc.sub || c.Role != tc.role || *c.Exp != now.Add(tc.ttl).Unix() {
			t.Errorf("%s: printed %q: %+v, %v", tc.name, stdout.String(), c, err)
		}
	}
}

// TestServeRedisRestart restarts the Redis the service runs on, which
// closes every connection its pool holds: the next requests, a read, a
// vote and a post, succeed.
func TestServeRedisRestart(t *testing.T) {
	mr := miniredis.RunT(t)
	base, shutdown := startServe(t, testConfig(mr.Addr(), voting.DefaultVoteWindow))
	defer shutdown()
	location := requestAs(t, "alice", "POST", base+"/articles", `{"title":"before"}`, http.StatusCreated)
	request(t, "GET", base+"/articles", "", http.StatusOK)
	for _, step := range []struct{ user, method, target, body string }{
		{"", "GET", "/articles", ""},
		{"bob", "PUT", location + "/vote", `{"vote":"up"}`},
		{"alice", "POST", "/articles", `{"title":"after"}`},
	} {
		mr.Close()
		if err := mr.Restart(); err != nil {
			t.Fatal(err)
		}
		want := http.StatusOK
		if step.method == "POST" {
			want = http.StatusCreated
		}
		requestAs(t, step.user, step.method, base+step.target, step.body, want)
	}
}
