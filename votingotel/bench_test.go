package votingotel_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/gomodule/redigo/redis"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/votekit/voting"
	"github.com/votekit/voting/testkit/redistest"
	"github.com/votekit/voting/votingotel"
)

// BenchmarkVote measures what tracing and metrics add to a vote, one
// caller at a time on a redis-server of its own: the store without
// hooks, Tracing on a no-op provider, Tracing on the SDK (every span
// sampled, batched to an exporter that drops them), Metrics on the SDK
// (a manual reader), and both. See BENCHMARKS.md, "Hooks and
// OpenTelemetry".
func BenchmarkVote(b *testing.B) {
	srv := redistest.Start(b)
	pool := &redis.Pool{MaxIdle: 8, Dial: func() (redis.Conn, error) { return redis.Dial("tcp", srv.Addr) }}
	b.Cleanup(func() { pool.Close() })
	sdk := func() *sdktrace.TracerProvider {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
			sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		b.Cleanup(func() { tp.Shutdown(context.Background()) })
		return tp
	}
	meter := func() *sdkmetric.MeterProvider {
		return sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	}
	for i, c := range []struct {
		name string
		opts func() []voting.Option
	}{
		{"hooks=none", func() []voting.Option { return nil }},
		{"tracing=noop", func() []voting.Option {
			return []voting.Option{votingotel.Tracing(votingotel.WithTracerProvider(noop.NewTracerProvider()))}
		}},
		{"tracing=sdk", func() []voting.Option {
			return []voting.Option{votingotel.Tracing(votingotel.WithTracerProvider(sdk()))}
		}},
		{"metrics=sdk", func() []voting.Option {
			return []voting.Option{votingotel.Metrics(votingotel.WithMeterProvider(meter()))}
		}},
		{"tracing=sdk,metrics=sdk", func() []voting.Option {
			return []voting.Option{votingotel.Tracing(votingotel.WithTracerProvider(sdk())),
				votingotel.Metrics(votingotel.WithMeterProvider(meter()))}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			opts := append([]voting.Option{voting.WithKeyPrefix("bench" + strconv.Itoa(i))}, c.opts()...)
			s, err := voting.New(pool, opts...)
			if err != nil {
				b.Fatal(err)
			}
			a, err := s.Post(ctx, "poster", "a title", "")
			if err != nil {
				b.Fatal(err)
			}
			votes := []voting.VoteType{voting.Upvote, voting.Downvote, voting.CancelVote}
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				if _, err := s.Vote(ctx, "user"+strconv.Itoa(n%1000), a.ID, votes[n%3]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
