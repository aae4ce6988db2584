package main

import (
	"context"
	"io"
	"log"
	"net/http"
	"strings"
	"testing"

	"github.com/votekit/voting/internal/redistest"
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, log.New(io.Discard, "", 0), "127.0.0.1:0", redisAddr, "newsapi-test", func(url string) {
			urls <- strings.Fields(url)[0]
		})
	}()
	var base string
	select {
	case base = <-urls:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	resp, err := http.Post(base+"/articles", "application/json",
		strings.NewReader(`{"poster":"alice","title":"served"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /articles: %s", resp.Status)
	}
	resp, err = http.Get(base + resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"title":"served"`) {
		t.Fatalf("GET the article: %s %s %v", resp.Status, body, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve after shutdown: %v", err)
	}
}

func TestServeBadRedis(t *testing.T) {
	err := serve(context.Background(), log.New(io.Discard, "", 0), "127.0.0.1:0",
		"redis://user:secret@127.0.0.1:1", "newsapi", func(string) { t.Error("served without Redis") })
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("serve on a closed port: %v", err)
	}
}
