// Package votingotel turns the calls of a voting.Store into OpenTelemetry
// spans and metrics, through the store's hooks ([voting.WithHook]), as
// go-redis's extra/redisotel does for a go-redis client. It is a module
// of its own, so the voting module depends on no OpenTelemetry.
//
//	store, err := voting.New(pool,
//		votingotel.Tracing(),
//		votingotel.Metrics())
//
// Each call of a public method of the store gives one span, "voting." and
// the method's name ("voting.Vote"), of kind client, a child of the span
// in the call's context, and one measurement of each metric. Neither
// carries user data: no user name, article id, title, link or group
// name; only the operation, the order, the page, the size of a batch,
// the round trips, and an error's type.
//
// # Spans
//
// Attributes: db.system.name "redis"; voting.operation, the method's
// name; voting.round_trips; voting.order ("score-desc", "hot", ...) and
// voting.page where the call has them (Articles, GroupArticles,
// TopSince, TopUsers, Submitted, Upvoted, Thread, Replies,
// UserComments); voting.batch.size, the ballots of VoteBatch and the ids
// of ArticlesByID, VotesOf, CommentsByID and CommentVotesOf. A call
// that fails has status Error and error.type, [ErrorType]'s name of its
// error.
//
// # Metrics
//
//   - voting.call.duration, a histogram of each call's duration in
//     seconds, with voting.operation, and error.type on errors;
//   - voting.call.round_trips, a counter of the calls' round trips to
//     Redis, with voting.operation.
package votingotel

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/votekit/voting"
)

// instrumentation is the name of the tracer and the meter.
const instrumentation = "github.com/votekit/voting/votingotel"

// An Option configures Tracing or Metrics.
type Option func(*config)

type config struct {
	tp trace.TracerProvider
	mp metric.MeterProvider
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithTracerProvider sets the provider of Tracing's tracer. Default the
// global one (otel.GetTracerProvider), as it is when Tracing is called;
// a nil provider is the default.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets the provider of Metrics's meter. Default the
// global one (otel.GetMeterProvider), as it is when Metrics is called; a
// nil provider is the default.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// Tracing returns an option of voting.New that gives each call of the
// store a span (see the package documentation). WithTracerProvider sets
// where the spans go. Give it before Metrics, so that the metrics'
// exemplars link to the spans.
func Tracing(opts ...Option) voting.Option {
	c := newConfig(opts)
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	return voting.WithHook(&tracing{tracer: c.tp.Tracer(instrumentation)})
}

// tracing is the hook of Tracing.
type tracing struct {
	tracer trace.Tracer
	names  sync.Map // operation -> span name, made once
}

var dbSystem = attribute.String("db.system.name", "redis")

func (h *tracing) Call(ctx context.Context, call *voting.Call, next func(ctx context.Context) error) error {
	name, ok := h.names.Load(call.Op)
	if !ok {
		name, _ = h.names.LoadOrStore(call.Op, "voting."+call.Op)
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, dbSystem, attribute.String("voting.operation", call.Op))
	if call.HasOrder {
		attrs = append(attrs, attribute.String("voting.order", call.Order.String()))
	}
	if call.HasPage {
		attrs = append(attrs, attribute.Int("voting.page", call.Page))
	}
	if isBatch(call.Op) {
		attrs = append(attrs, attribute.Int("voting.batch.size", call.Count))
	}
	ctx, span := h.tracer.Start(ctx, name.(string), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	err := next(ctx)
	span.SetAttributes(attribute.Int("voting.round_trips", call.RoundTrips))
	if err != nil {
		// The error's type, not its text, which may name an article.
		kind := ErrorType(err)
		span.SetAttributes(attribute.String("error.type", kind))
		span.SetStatus(codes.Error, kind)
	}
	span.End()
	return err
}

// isBatch reports whether the calls of operation op are batches, whose
// voting.batch.size is their Call.Count.
func isBatch(op string) bool {
	return op == "VoteBatch" || op == "ArticlesByID" || op == "VotesOf" || op == "CommentsByID" || op == "CommentVotesOf"
}

// Metrics returns an option of voting.New that measures each call of the
// store (see the package documentation). WithMeterProvider sets where
// the measurements go. An instrument the meter fails to make is reported
// to OpenTelemetry's error handler (otel.Handle), and measures nothing.
func Metrics(opts ...Option) voting.Option {
	c := newConfig(opts)
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	meter := c.mp.Meter(instrumentation)
	h := &metrics{}
	var err error
	h.duration, err = meter.Float64Histogram("voting.call.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of the calls of a voting store."),
		metric.WithExplicitBucketBoundaries(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	if err != nil {
		otel.Handle(err)
	}
	h.trips, err = meter.Int64Counter("voting.call.round_trips",
		metric.WithUnit("{round_trip}"),
		metric.WithDescription("Round trips to Redis of the calls of a voting store."))
	if err != nil {
		otel.Handle(err)
	}
	return voting.WithHook(h)
}

// metrics is the hook of Metrics.
type metrics struct {
	duration metric.Float64Histogram
	trips    metric.Int64Counter
	ops      sync.Map // operation -> its attributes, as an option, made once
}

func (h *metrics) Call(ctx context.Context, call *voting.Call, next func(ctx context.Context) error) error {
	start := time.Now()
	err := next(ctx)
	elapsed := time.Since(start).Seconds()
	op, ok := h.ops.Load(call.Op)
	if !ok {
		op, _ = h.ops.LoadOrStore(call.Op, metric.WithAttributeSet(attribute.NewSet(attribute.String("voting.operation", call.Op))))
	}
	opAttrs := op.(metric.MeasurementOption)
	if h.trips != nil {
		h.trips.Add(ctx, int64(call.RoundTrips), opAttrs)
	}
	if h.duration != nil {
		if err == nil {
			h.duration.Record(ctx, elapsed, opAttrs)
		} else {
			h.duration.Record(ctx, elapsed, metric.WithAttributes(
				attribute.String("voting.operation", call.Op), attribute.String("error.type", ErrorType(err))))
		}
	}
	return err
}

// sentinels are the store's errors and their names for error.type.
var sentinels = []struct {
	err  error
	name string
}{
	// ErrNotReplicated first: a wait that failed wraps its cause too.
	{voting.ErrNotReplicated, "not_replicated"},
	{voting.ErrNotFound, "not_found"},
	{voting.ErrVotingClosed, "voting_closed"},
	{voting.ErrInvalidVote, "invalid_vote"},
	{voting.ErrInvalidArgument, "invalid_argument"},
	{voting.ErrDuplicate, "duplicate"},
	{voting.ErrNotAllowed, "not_allowed"},
	{voting.ErrRateLimited, "rate_limited"},
	{voting.ErrTryAgain, "try_again"},
	{voting.ErrOutOfMemory, "out_of_memory"},
	{voting.ErrIncompatible, "incompatible"},
}

// ErrorType returns the name of err's kind, as error.type gives it: the
// short name of the store's sentinel err wraps ("not_found",
// "voting_closed", "invalid_vote", "invalid_argument", "duplicate",
// "not_allowed", "rate_limited", "try_again", "not_replicated",
// "out_of_memory"); otherwise "context" for a call cut short by its
// context, "network" for a failure to reach Redis or to read its reply
// (a connection refused, reset or closed, a timeout, a pool exhausted),
// and "redis" for the rest, errors Redis replied with or replies the
// store could not read. It returns "" for a nil err.
func ErrorType(err error) string {
	if err == nil {
		return ""
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	var redisErr redis.Error
	var netErr net.Error
	var errno syscall.Errno
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "context"
	case errors.As(err, &redisErr):
		return "redis"
	case errors.As(err, &netErr), errors.As(err, &errno), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed), errors.Is(err, redis.ErrPoolExhausted):
		return "network"
	}
	return "redis"
}
