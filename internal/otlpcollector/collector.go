package otlpcollector

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
)

// Log is one log record as it arrived.
type Log struct {
	Service        string
	EventName      string
	SeverityText   string
	SeverityNumber int32
	Time           time.Time
	TraceID        string
	SpanID         string
	Attrs          map[string]any
	Body           any
}

// Event is one span event.
type Event struct {
	Name  string
	Time  time.Time
	Attrs map[string]any
}

// Span is one span as it arrived.
type Span struct {
	Service      string
	Name         string
	Kind         string
	TraceID      string
	SpanID       string
	ParentSpanID string
	Start, End   time.Time
	Attrs        map[string]any
	Events       []Event
	StatusCode   string
	StatusMsg    string
}

// Collector is a running receiver and what it received.
type Collector struct {
	GRPCAddr, HTTPAddr string

	mu          sync.Mutex
	logs        []Log
	spans       []Span
	reqs        int
	refuse      atomic.Bool
	refuseSpans atomic.Bool
	logsR       receiver.Logs
	spansR      receiver.Traces
}

// Start runs the receiver on free loopback ports (picking others when a
// port was taken between choosing and listening).
func Start(t testing.TB) *Collector {
	t.Helper()
	var err error
	for range 5 {
		c := &Collector{GRPCAddr: freeAddr(t), HTTPAddr: freeAddr(t)}
		if err = c.start(); err == nil {
			t.Cleanup(c.Stop)
			return c
		}
	}
	t.Fatal(err)
	return nil
}

// NewStopped returns a collector with addresses reserved but not
// listening (a collector that is down); Restart brings it up.
func NewStopped(t testing.TB) *Collector {
	t.Helper()
	c := &Collector{GRPCAddr: freeAddr(t), HTTPAddr: freeAddr(t)}
	t.Cleanup(c.Stop)
	return c
}

func freeAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type host struct{}

func (host) GetExtensions() map[component.ID]component.Component { return nil }

func (c *Collector) start() error {
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	g := cfg.Protocols.GRPC.GetOrInsertDefault()
	g.NetAddr.Endpoint = c.GRPCAddr
	cfg.Protocols.GRPC = configoptional.Some(*g)
	h := cfg.Protocols.HTTP.GetOrInsertDefault()
	h.ServerConfig.NetAddr.Endpoint = c.HTTPAddr
	cfg.Protocols.HTTP = configoptional.Some(*h)
	set := receiver.Settings{ID: component.NewID(f.Type()), BuildInfo: component.NewDefaultBuildInfo(),
		TelemetrySettings: component.TelemetrySettings{Logger: zap.NewNop(), TracerProvider: tracenoop.NewTracerProvider(),
			MeterProvider: metricnoop.NewMeterProvider(), Resource: pcommon.NewResource()}}
	logsC, _ := consumer.NewLogs(c.consumeLogs)
	spansC, _ := consumer.NewTraces(c.consumeTraces)
	ctx := context.Background()
	lr, err := f.CreateLogs(ctx, set, cfg, logsC)
	if err != nil {
		return fmt.Errorf("otlp receiver: %w", err)
	}
	tr, err := f.CreateTraces(ctx, set, cfg, spansC)
	if err != nil {
		return fmt.Errorf("otlp receiver: %w", err)
	}
	// One receiver serves both signals (the factory shares it by config).
	if err := lr.Start(ctx, host{}); err != nil {
		return fmt.Errorf("otlp receiver: %w", err)
	}
	if err := tr.Start(ctx, host{}); err != nil {
		lr.Shutdown(ctx)
		return fmt.Errorf("otlp receiver: %w", err)
	}
	c.mu.Lock()
	c.logsR, c.spansR = lr, tr
	c.mu.Unlock()
	return nil
}

// Stop shuts the receiver down (a collector going away); what it received
// stays readable.
func (c *Collector) Stop() {
	c.mu.Lock()
	lr, tr := c.logsR, c.spansR
	c.logsR, c.spansR = nil, nil
	c.mu.Unlock()
	ctx := context.Background()
	if tr != nil {
		tr.Shutdown(ctx)
	}
	if lr != nil {
		lr.Shutdown(ctx)
	}
}

// Restart brings a stopped receiver back on the same addresses, retrying
// while the ports are still being released.
func (c *Collector) Restart(t testing.TB) {
	t.Helper()
	var err error
	for range 50 {
		if err = c.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal(err)
}

// Refuse makes the consumer fail every request (a retryable error) while on.
func (c *Collector) Refuse(on bool) { c.refuse.Store(on) }

// RefuseSpans fails only trace requests while on (logs are accepted).
func (c *Collector) RefuseSpans(on bool) { c.refuseSpans.Store(on) }

var errRefused = errors.New("refused by the test collector")

func (c *Collector) consumeLogs(_ context.Context, ld plog.Logs) error {
	if c.refuse.Load() {
		return errRefused
	}
	var out []Log
	for _, rl := range ld.ResourceLogs().All() {
		svc, _ := rl.Resource().Attributes().Get("service.name")
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				out = append(out, Log{Service: svc.AsString(), EventName: lr.EventName(), SeverityText: lr.SeverityText(),
					SeverityNumber: int32(lr.SeverityNumber()), Time: lr.Timestamp().AsTime(),
					TraceID: hexOrEmpty(lr.TraceID()), SpanID: hexOrEmpty(lr.SpanID()),
					Attrs: lr.Attributes().AsRaw(), Body: bodyOf(lr.Body())})
			}
		}
	}
	c.mu.Lock()
	c.logs = append(c.logs, out...)
	c.reqs++
	c.mu.Unlock()
	return nil
}

func (c *Collector) consumeTraces(_ context.Context, td ptrace.Traces) error {
	if c.refuse.Load() || c.refuseSpans.Load() {
		return errRefused
	}
	var out []Span
	for _, rs := range td.ResourceSpans().All() {
		svc, _ := rs.Resource().Attributes().Get("service.name")
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				sp := Span{Service: svc.AsString(), Name: s.Name(), Kind: s.Kind().String(), TraceID: hexOrEmpty(s.TraceID()),
					SpanID: hexOrEmpty(s.SpanID()), ParentSpanID: hexOrEmpty(s.ParentSpanID()),
					Start: s.StartTimestamp().AsTime(), End: s.EndTimestamp().AsTime(), Attrs: s.Attributes().AsRaw(),
					StatusCode: s.Status().Code().String(), StatusMsg: s.Status().Message()}
				for _, e := range s.Events().All() {
					sp.Events = append(sp.Events, Event{Name: e.Name(), Time: e.Timestamp().AsTime(), Attrs: e.Attributes().AsRaw()})
				}
				out = append(out, sp)
			}
		}
	}
	c.mu.Lock()
	c.spans = append(c.spans, out...)
	c.reqs++
	c.mu.Unlock()
	return nil
}

func bodyOf(v pcommon.Value) any {
	if v.Type() == pcommon.ValueTypeEmpty {
		return nil
	}
	return v.AsRaw()
}

type id interface {
	IsEmpty() bool
	String() string
}

func hexOrEmpty(v id) string {
	if v.IsEmpty() {
		return ""
	}
	return v.String()
}

// Logs returns the log records received so far, in arrival order.
func (c *Collector) Logs() []Log {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Log(nil), c.logs...)
}

// Spans returns the spans received so far, in arrival order.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.spans...)
}

// Requests counts the export requests accepted.
func (c *Collector) Requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reqs
}

// Wait polls until cond holds on what arrived, or fails the test after
// timeout.
func (c *Collector) Wait(t testing.TB, timeout time.Duration, what string, cond func(logs []Log, spans []Span) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if cond(c.Logs(), c.Spans()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s: %d log records, %d spans arrived", timeout, what, len(c.Logs()), len(c.Spans()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
