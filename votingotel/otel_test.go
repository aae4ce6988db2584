package votingotel_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/votekit/voting"
	"github.com/votekit/voting/votingotel"
)

var epoch = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// instrumented returns a store on a fresh miniredis with every option
// the calls below need, traced and measured into the recorder and the
// reader returned.
func instrumented(t *testing.T, opts ...voting.Option) (*voting.Store, *tracetest.SpanRecorder, *sdkmetric.ManualReader) {
	t.Helper()
	mr := miniredis.RunT(t)
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", mr.Addr()) }}
	t.Cleanup(func() { pool.Close() })
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	opts = append([]voting.Option{
		voting.WithClock(func() time.Time { return epoch }),
		voting.WithOrders(voting.Top, voting.Hot, voting.Best, voting.Controversial),
		voting.WithUserPages(), voting.WithUniqueLinks(), voting.WithKarma(1, -1), voting.WithEditWindow(time.Hour),
		voting.WithVoteLog(), voting.WithVoteEvents(100),
		votingotel.Tracing(votingotel.WithTracerProvider(tp)),
		votingotel.Metrics(votingotel.WithMeterProvider(mp)),
	}, opts...)
	s, err := voting.New(pool, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s, spans, reader
}

// call is a call of a public method of the store, and what its span
// should say beyond the operation and the round trips.
type call struct {
	op      string
	attrs   map[string]string // voting.order, voting.page, voting.batch.size, error.type
	errType string
	run     func(s *voting.Store) error
}

// calls returns a call of each public method of the store, and some
// errors, on a store whose article "1" exists and is in group "g".
func calls() []call {
	ctx := context.Background()
	e := func(_ interface{}, err error) error { return err }
	page := func(order string, page int) map[string]string {
		m := map[string]string{"voting.page": strconv.Itoa(page)}
		if order != "" {
			m["voting.order"] = order
		}
		return m
	}
	batch := func(n int) map[string]string { return map[string]string{"voting.batch.size": strconv.Itoa(n)} }
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	return []call{
		{"Post", nil, "", func(s *voting.Store) error { return e(s.Post(ctx, "alice", "a title", "https://example.com/2")) }},
		{"Post", nil, "duplicate", func(s *voting.Store) error { return e(s.Post(ctx, "alice", "a title", "https://example.com/2")) }},
		{"Article", nil, "", func(s *voting.Store) error { return e(s.Article(ctx, "1")) }},
		{"Article", nil, "not_found", func(s *voting.Store) error { return e(s.Article(ctx, "999")) }},
		{"ArticlesByID", batch(3), "", func(s *voting.Store) error { return e(s.ArticlesByID(ctx, []string{"1", "2", "x"})) }},
		{"Articles", page("hot", 1), "", func(s *voting.Store) error { return e(s.Articles(ctx, voting.Hot, 1)) }},
		{"Articles", page("time-asc", 0), "invalid_argument", func(s *voting.Store) error { return e(s.Articles(ctx, voting.TimeAsc, 0)) }},
		{"ArticlesFor", page("hot", 1), "", func(s *voting.Store) error {
			_, _, err := s.ArticlesFor(ctx, "bob", voting.Hot, 1)
			return err
		}},
		{"TopSince", page("", 2), "", func(s *voting.Store) error { return e(s.TopSince(ctx, time.Hour, 2)) }},
		{"TopSinceFor", page("", 2), "", func(s *voting.Store) error {
			_, _, err := s.TopSinceFor(ctx, "bob", time.Hour, 2)
			return err
		}},
		{"Count", nil, "", func(s *voting.Store) error { return e(s.Count(ctx)) }},
		{"Count", nil, "context", func(s *voting.Store) error { return e(s.Count(canceled)) }},
		{"Vote", nil, "", func(s *voting.Store) error { return e(s.Vote(ctx, "bob", "1", voting.Downvote)) }},
		{"Vote", nil, "invalid_vote", func(s *voting.Store) error { return e(s.Vote(ctx, "bob", "1", 7)) }},
		{"VoteOf", nil, "", func(s *voting.Store) error { return e(s.VoteOf(ctx, "bob", "1")) }},
		{"VotesOf", batch(2), "", func(s *voting.Store) error { return e(s.VotesOf(ctx, "bob", []string{"1", "2"})) }},
		{"VoteBatch", batch(30), "", func(s *voting.Store) error {
			ballots := make([]voting.Ballot, 30)
			for i := range ballots {
				ballots[i] = voting.Ballot{User: "u" + strconv.Itoa(i), ID: "1", Vote: voting.Upvote}
			}
			return e(s.VoteBatch(ctx, ballots))
		}},
		{"AddToGroups", nil, "", func(s *voting.Store) error { return s.AddToGroups(ctx, "2", "g", "h") }},
		{"RemoveFromGroups", nil, "", func(s *voting.Store) error { return s.RemoveFromGroups(ctx, "2", "h") }},
		{"Groups", nil, "", func(s *voting.Store) error { return e(s.Groups(ctx, "1")) }},
		{"GroupArticles", page("score-desc", 1), "", func(s *voting.Store) error { return e(s.GroupArticles(ctx, "g", voting.ScoreDesc, 1)) }},
		{"GroupArticlesFor", page("score-desc", 1), "", func(s *voting.Store) error {
			_, _, err := s.GroupArticlesFor(ctx, "bob", "g", voting.ScoreDesc, 1)
			return err
		}},
		{"GroupCount", nil, "", func(s *voting.Store) error { return e(s.GroupCount(ctx, "g")) }},
		{"Karma", nil, "", func(s *voting.Store) error { return e(s.Karma(ctx, "alice")) }},
		{"TopUsers", page("", 1), "", func(s *voting.Store) error { return e(s.TopUsers(ctx, 1)) }},
		{"Rules", nil, "", func(s *voting.Store) error { return e(s.Rules(ctx)) }},
		{"SetRules", nil, "", func(s *voting.Store) error { return e(s.SetRules(ctx, voting.WithKarma(2, -1))) }},
		{"Edit", nil, "", func(s *voting.Store) error {
			return e(s.Edit(ctx, "2", "alice", "a new title", "https://example.com/2"))
		}},
		{"Edit", nil, "not_allowed", func(s *voting.Store) error { return e(s.Edit(ctx, "2", "bob", "a new title", "")) }},
		{"Submitted", page("", 1), "", func(s *voting.Store) error { return e(s.Submitted(ctx, "alice", 1)) }},
		{"Upvoted", page("", 1), "", func(s *voting.Store) error { return e(s.Upvoted(ctx, "alice", 1)) }},
		{"SubmittedFor", page("", 1), "", func(s *voting.Store) error {
			_, _, err := s.SubmittedFor(ctx, "bob", "alice", 1)
			return err
		}},
		{"UpvotedFor", page("", 1), "invalid_argument", func(s *voting.Store) error {
			_, _, err := s.UpvotedFor(ctx, "", "alice", 1)
			return err
		}},
		{"Comment", nil, "", func(s *voting.Store) error { return e(s.Comment(ctx, "1", "", "bob", "a comment")) }},
		{"Comment", nil, "not_found", func(s *voting.Store) error { return e(s.Comment(ctx, "999", "", "bob", "a comment")) }},
		{"VoteComment", nil, "", func(s *voting.Store) error { return e(s.VoteComment(ctx, "carol", "1", voting.Downvote)) }},
		{"Thread", map[string]string{"voting.order": "best"}, "", func(s *voting.Store) error { return e(s.Thread(ctx, "1", voting.Best, 10)) }},
		{"Thread", map[string]string{"voting.order": "best"}, "invalid_argument", func(s *voting.Store) error { return e(s.Thread(ctx, "1", voting.Best, 0)) }},
		{"Replies", map[string]string{"voting.order": "time-asc"}, "", func(s *voting.Store) error { return e(s.Replies(ctx, "1", voting.TimeAsc, 10)) }},
		{"ThreadFor", map[string]string{"voting.order": "best"}, "", func(s *voting.Store) error {
			_, _, err := s.ThreadFor(ctx, "carol", "1", voting.Best, 10)
			return err
		}},
		{"RepliesFor", map[string]string{"voting.order": "time-asc"}, "", func(s *voting.Store) error {
			_, _, err := s.RepliesFor(ctx, "carol", "1", voting.TimeAsc, 10)
			return err
		}},
		{"CommentsByID", batch(2), "", func(s *voting.Store) error { return e(s.CommentsByID(ctx, []string{"1", "x"})) }},
		{"CommentVotesOf", batch(2), "", func(s *voting.Store) error { return e(s.CommentVotesOf(ctx, "carol", []string{"1", "2"})) }},
		{"EditComment", nil, "", func(s *voting.Store) error { return e(s.EditComment(ctx, "1", "bob", "edited")) }},
		{"UserComments", page("", 1), "", func(s *voting.Store) error { return e(s.UserComments(ctx, "bob", 1)) }},
		{"CommentVoters", nil, "", func(s *voting.Store) error { _, _, err := s.CommentVoters(ctx, "1", "", 10); return err }},
		{"VotesBy", nil, "", func(s *voting.Store) error { _, _, err := s.VotesBy(ctx, "carol", "", 10); return err }},
		{"Voters", nil, "", func(s *voting.Store) error { _, _, err := s.Voters(ctx, "1", "", 10); return err }},
		{"Voters", nil, "not_found", func(s *voting.Store) error { _, _, err := s.Voters(ctx, "999", "", 10); return err }},
		{"ReverseVotes", nil, "", func(s *voting.Store) error { return e(s.ReverseVotes(ctx, "carol")) }},
		{"Suspend", nil, "", func(s *voting.Store) error { return s.Suspend(ctx, "eve", voting.Shadow, epoch.Add(time.Hour)) }},
		{"Suspended", nil, "", func(s *voting.Store) error { _, _, err := s.Suspended(ctx, "eve"); return err }},
		{"Unsuspend", nil, "", func(s *voting.Store) error { return s.Unsuspend(ctx, "eve") }},
		{"VoteEvents", nil, "", func(s *voting.Store) error { _, _, err := s.VoteEvents(ctx, "", 10); return err }},
		{"DeleteComment", nil, "", func(s *voting.Store) error { return s.DeleteComment(ctx, "1") }},
		{"DeleteComment", nil, "not_found", func(s *voting.Store) error { return s.DeleteComment(ctx, "1") }},
		{"Delete", nil, "", func(s *voting.Store) error { return s.Delete(ctx, "2") }},
		{"Delete", nil, "not_found", func(s *voting.Store) error { return s.Delete(ctx, "2") }},
		{"Prune", nil, "", func(s *voting.Store) error { return e(s.Prune(ctx, epoch.Add(-time.Hour))) }},
		{"Recorded", nil, "", func(s *voting.Store) error { _, _, err := s.Recorded(ctx); return err }},
		{"CheckIdentity", nil, "", func(s *voting.Store) error { return s.CheckIdentity(ctx) }},
		{"Reconfigure", nil, "", func(s *voting.Store) error { return e(s.Reconfigure(ctx)) }},
		{"Check", nil, "", func(s *voting.Store) error { return e(s.Check(ctx)) }},
		{"Drop", nil, "", func(s *voting.Store) error { return s.Drop(ctx) }},
	}
}

// unhooked are the methods of Store that talk to no Redis, so no hook
// sees them.
var unhooked = map[string]bool{"Identity": true}

// TestEveryMethod calls each public method of the store: each call gives
// one span, of the method's name, kind and attributes, with no user
// data, and its metric points.
func TestEveryMethod(t *testing.T) {
	calls := calls()
	covered := map[string]bool{}
	for _, c := range calls {
		covered[c.op] = true
	}
	st := reflect.TypeOf(&voting.Store{})
	for i := 0; i < st.NumMethod(); i++ {
		if name := st.Method(i).Name; !covered[name] && !unhooked[name] {
			t.Errorf("Store.%s: no call in calls", name)
		}
	}
	s, spans, reader := instrumented(t)
	ctx := context.Background()
	if _, err := s.Post(ctx, "alice", "first", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.AddToGroups(ctx, "1", "g"); err != nil {
		t.Fatal(err)
	}
	// The metrics are cumulative: the calls below add to these.
	wantTrips, wantCalls, wantErrs := points(t, collect(t, reader))
	before := len(spans.Ended())
	for _, c := range calls {
		err := c.run(s)
		if got := votingotel.ErrorType(err); got != c.errType {
			t.Errorf("%s: error %v of type %q, want %q", c.op, err, got, c.errType)
		}
		ended := spans.Ended()[before:]
		before += len(ended)
		if len(ended) != 1 {
			t.Errorf("%s: %d spans, want 1", c.op, len(ended))
			continue
		}
		sp := ended[0]
		if sp.Name() != "voting."+c.op || sp.SpanKind() != trace.SpanKindClient {
			t.Errorf("%s: span %q of kind %v", c.op, sp.Name(), sp.SpanKind())
		}
		attrs := map[string]string{}
		for _, kv := range sp.Attributes() {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		want := map[string]string{"db.system.name": "redis", "voting.operation": c.op, "voting.round_trips": attrs["voting.round_trips"]}
		for k, v := range c.attrs {
			want[k] = v
		}
		if c.errType != "" {
			want["error.type"] = c.errType
		}
		if fmt.Sprint(attrs) != fmt.Sprint(want) {
			t.Errorf("%s: attributes %v, want %v", c.op, attrs, want)
		}
		trips, _ := strconv.ParseInt(attrs["voting.round_trips"], 10, 64)
		// Bad input and a done context reach no server.
		if refused := c.errType == "invalid_vote" || c.errType == "invalid_argument" || c.errType == "context"; refused != (trips == 0) {
			t.Errorf("%s: %d round trips", c.op, trips)
		}
		wantTrips[c.op] += trips
		wantCalls[c.op]++
		if c.errType != "" {
			wantErrs[c.op+" "+c.errType]++
			if sp.Status().Code != codes.Error || sp.Status().Description != c.errType {
				t.Errorf("%s: status %+v", c.op, sp.Status())
			}
		} else if sp.Status().Code != codes.Unset {
			t.Errorf("%s: status %+v", c.op, sp.Status())
		}
		for _, v := range attrs {
			for _, user := range []string{"alice", "bob", "title", "example.com"} {
				if strings.Contains(v, user) {
					t.Errorf("%s: an attribute holds user data: %v", c.op, attrs)
				}
			}
		}
	}

	// The metrics: a duration per call, with error.type on errors, and
	// the round trips.
	gotTrips, gotCalls, gotErrs := points(t, collect(t, reader))
	if fmt.Sprint(gotTrips) != fmt.Sprint(wantTrips) {
		t.Errorf("round trips %v, want %v", gotTrips, wantTrips)
	}
	if fmt.Sprint(gotCalls) != fmt.Sprint(wantCalls) {
		t.Errorf("durations %v, want %v", gotCalls, wantCalls)
	}
	if fmt.Sprint(gotErrs) != fmt.Sprint(wantErrs) {
		t.Errorf("durations of errors %v, want %v", gotErrs, wantErrs)
	}
}

// points returns the round trips, the durations measured, and those of
// errors, by operation (and error type), in rm.
func points(t *testing.T, rm metricdata.ResourceMetrics) (trips map[string]int64, calls, errs map[string]uint64) {
	t.Helper()
	trips, calls, errs = map[string]int64{}, map[string]uint64{}, map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case "voting.call.round_trips":
				for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
					op, _ := p.Attributes.Value("voting.operation")
					trips[op.AsString()] += p.Value
				}
			case "voting.call.duration":
				if m.Unit != "s" {
					t.Errorf("duration's unit %q", m.Unit)
				}
				for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					op, _ := p.Attributes.Value("voting.operation")
					calls[op.AsString()] += p.Count
					if kind, ok := p.Attributes.Value("error.type"); ok {
						errs[op.AsString()+" "+kind.AsString()] += p.Count
					}
					if p.Sum < 0 || p.Sum > 60 {
						t.Errorf("%v: durations summing to %vs", p.Attributes, p.Sum)
					}
				}
			}
		}
	}
	return trips, calls, errs
}

// collect reads the metrics.
func collect(t *testing.T, reader *sdkmetric.ManualReader) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// A call's span is a child of the span in its context, and the call
// runs under the span's context.
func TestParent(t *testing.T) {
	s, spans, _ := instrumented(t)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	if _, err := s.Count(ctx); err != nil {
		t.Fatal(err)
	}
	parent.End()
	ended := spans.Ended()
	if len(ended) != 2 || ended[0].Name() != "voting.Count" {
		t.Fatalf("spans %v", ended)
	}
	if ended[0].Parent().SpanID() != parent.SpanContext().SpanID() || ended[0].SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("voting.Count's parent %v, want %v", ended[0].Parent(), parent.SpanContext())
	}
}

// ErrorType names every sentinel, wrapped as the store wraps them, and
// the other kinds of failure.
func TestErrorType(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{voting.ErrVotingClosed, "voting_closed"},
		{fmt.Errorf("voting: vote: %w: karma 1,-1 here, off in the store", voting.ErrIncompatible), "incompatible"},
		{fmt.Errorf("%w: %w", voting.ErrNotReplicated, context.DeadlineExceeded), "not_replicated"},
		{fmt.Errorf("x: %w", context.Canceled), "context"},
		{fmt.Errorf("%w: i/o timeout", context.DeadlineExceeded), "context"},
		{fmt.Errorf("x: %w", redis.Error("ERR something")), "redis"},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, "network"},
		{io.EOF, "network"},
		{redis.ErrPoolExhausted, "network"},
		{errors.New("reply of 3 fields"), "redis"},
	} {
		if got := votingotel.ErrorType(c.err); got != c.want {
			t.Errorf("ErrorType(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	// Every sentinel, as the store wraps it, by the name ErrorType
	// documents.
	names := strings.Fields("not_found voting_closed invalid_vote invalid_argument duplicate not_allowed rate_limited try_again out_of_memory incompatible")
	for i, sentinel := range []error{voting.ErrNotFound, voting.ErrVotingClosed, voting.ErrInvalidVote, voting.ErrInvalidArgument,
		voting.ErrDuplicate, voting.ErrNotAllowed, voting.ErrRateLimited, voting.ErrTryAgain, voting.ErrOutOfMemory, voting.ErrIncompatible} {
		err := fmt.Errorf("voting: vote: %w: \"9\"", sentinel)
		if got := votingotel.ErrorType(err); got != names[i] {
			t.Errorf("ErrorType(%v) = %q, want %q", err, got, names[i])
		}
	}
}

// The providers default to the global ones.
func TestDefaults(t *testing.T) {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return nil, errors.New("no server") }}
	s, err := voting.New(pool, votingotel.Tracing(), votingotel.Metrics(), votingotel.Tracing(votingotel.WithTracerProvider(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Count(context.Background()); votingotel.ErrorType(err) != "redis" {
		t.Errorf("Count without a server: %v, of type %q", err, votingotel.ErrorType(err))
	}
}
