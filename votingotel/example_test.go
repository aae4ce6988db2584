package votingotel_test

import (
	"context"
	"fmt"
	"log"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/votekit/voting"
	"github.com/votekit/voting/votingotel"
)

// A store whose calls are traced and measured. A service passes its
// providers, or none for the global ones (otel.SetTracerProvider,
// otel.SetMeterProvider); the example records the spans in memory. The
// store's spans are children of the span in the call's context: here a
// request's.
func Example() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", mr.Addr()) }}
	defer pool.Close()

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	store, err := voting.New(pool,
		votingotel.Tracing(votingotel.WithTracerProvider(tp)),
		votingotel.Metrics())
	if err != nil {
		log.Fatal(err)
	}

	ctx, request := tp.Tracer("newsapi").Start(context.Background(), "request")
	a, err := store.Post(ctx, "alice", "Redis in Action", "https://redis.io")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := store.Vote(ctx, "bob", a.ID, voting.Upvote); err != nil {
		log.Fatal(err)
	}
	if _, err := store.Articles(ctx, voting.ScoreDesc, 1); err != nil {
		log.Fatal(err)
	}
	_, err = store.Vote(ctx, "bob", "999", voting.Upvote)
	fmt.Println(err)
	request.End()
	for _, s := range spans.Ended() {
		line := s.Name() + " " + s.SpanKind().String()
		if s.Status().Code == codes.Error {
			line += " error.type=" + s.Status().Description
		}
		if s.Parent().IsValid() {
			line += " (in the request)"
		}
		fmt.Println(line)
	}
	// Output:
	// voting: vote: article not found: "999"
	// voting.Post client (in the request)
	// voting.Vote client (in the request)
	// voting.Articles client (in the request)
	// voting.Vote client error.type=not_found (in the request)
	// request internal
}
