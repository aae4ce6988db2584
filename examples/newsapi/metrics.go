package main

import (
	"context"
	"net/http"
	"time"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// telemetry is the service's metrics: the store's (votingotel.Metrics)
// and the HTTP server's request durations, in OpenTelemetry, exported
// for Prometheus at GET /metrics in its text format.
type telemetry struct {
	provider *sdkmetric.MeterProvider
	registry *promclient.Registry
	requests metric.Float64Histogram
}

// newTelemetry returns the service's metrics, on a registry of their own.
func newTelemetry() (*telemetry, error) {
	reg := promclient.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	requests, err := mp.Meter("github.com/votekit/voting/examples/newsapi").Float64Histogram("http.server.request.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of the HTTP requests the service served."),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	if err != nil {
		return nil, err
	}
	return &telemetry{provider: mp, registry: reg, requests: requests}, nil
}

// handler returns h, whose requests it measures, with GET /metrics.
// Every other request goes to h as it came: h answers the paths that are
// not its routes (no ServeMux redirects here).
func (t *telemetry) handler(h http.Handler) http.Handler {
	metrics, measured := promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{}), t.measure(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			metrics.ServeHTTP(w, r)
			return
		}
		measured.ServeHTTP(w, r)
	})
}

// measure records the duration of each request h serves, with its
// method, its route (the pattern that matched, "" for none) and its
// status code.
func (t *telemetry) measure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		status := &codeRecorder{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(status, r)
		t.requests.Record(r.Context(), time.Since(start).Seconds(), metric.WithAttributes(
			attribute.String("http.request.method", r.Method),
			attribute.String("http.route", r.Pattern),
			attribute.Int("http.response.status_code", status.code)))
	})
}

// shutdown stops the metrics.
func (t *telemetry) shutdown(ctx context.Context) error {
	return t.provider.Shutdown(ctx)
}

// codeRecorder passes a reply through, and keeps its status code.
type codeRecorder struct {
	http.ResponseWriter
	code int
}

func (c *codeRecorder) WriteHeader(code int) {
	c.code = code
	c.ResponseWriter.WriteHeader(code)
}
