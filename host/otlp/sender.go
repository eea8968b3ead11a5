package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	grpcgzip "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// ErrPermanent marks an export the collector refused for good (a 4xx, a
// gRPC InvalidArgument …): retrying the same bytes cannot succeed.
var ErrPermanent = errors.New("refused by the collector")

// Client sends OTLP export requests to one logs and one traces target.
// It is our own small sender over the official protos rather than the
// SDK's exporters: those take SDK spans and log records (with ids the SDK
// generates and batches it holds in memory), whereas we send pre-built,
// spooled messages whose ids derive from the recording.
type Client struct {
	logs, traces *target
}

type target struct {
	Target
	conn   *grpc.ClientConn
	http   *http.Client
	logsC  collogspb.LogsServiceClient
	traceC coltracepb.TraceServiceClient
}

// Rejected is what a collector answered as partial success.
type Rejected struct {
	Count   int64
	Message string
}

// NewClient connects lazily (gRPC dials on first use).
func NewClient(logs, traces Target) (*Client, error) {
	l, err := newTarget(logs)
	if err != nil {
		return nil, err
	}
	t, err := newTarget(traces)
	if err != nil {
		l.close()
		return nil, err
	}
	return &Client{logs: l, traces: t}, nil
}

func newTarget(t Target) (*target, error) {
	out := &target{Target: t}
	if t.Protocol == ProtocolHTTP {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		out.http = &http.Client{Transport: tr, Timeout: t.Timeout}
		return out, nil
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("otlp endpoint %q: %w", t.URL, err)
	}
	creds := insecure.NewCredentials()
	if u.Scheme == "https" && !t.Insecure {
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if t.Compression == "gzip" {
		opts = append(opts, grpc.WithDefaultCallOptions(grpc.UseCompressor(grpcgzip.Name)))
	}
	conn, err := grpc.NewClient(u.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("otlp grpc %s: %w", u.Host, err)
	}
	out.conn = conn
	out.logsC = collogspb.NewLogsServiceClient(conn)
	out.traceC = coltracepb.NewTraceServiceClient(conn)
	return out, nil
}

func (t *target) close() {
	if t.conn != nil {
		t.conn.Close()
	}
	if t.http != nil {
		t.http.CloseIdleConnections()
	}
}

// Close releases the connections.
func (c *Client) Close() {
	c.logs.close()
	c.traces.close()
}

// Describe names the targets for logs and messages (without any
// credentials a URL may hold).
func (c *Client) Describe() string {
	return fmt.Sprintf("logs %s %s, traces %s %s", c.logs.Protocol, redactURL(c.logs.URL), c.traces.Protocol, redactURL(c.traces.URL))
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// compress gzips a request body when the target asks for it.
func (t *target) compress(body []byte) ([]byte, error) {
	if t.Compression != "gzip" {
		return body, nil
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(body); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ExportLogs sends one request. A returned error wrapping ErrPermanent
// must not be retried; any other is transient.
func (c *Client) ExportLogs(ctx context.Context, rl []*logspb.ResourceLogs) (Rejected, error) {
	req := &collogspb.ExportLogsServiceRequest{ResourceLogs: rl}
	t := c.logs
	if t.Protocol == ProtocolGRPC {
		ctx, cancel := context.WithTimeout(t.outgoing(ctx), t.Timeout)
		defer cancel()
		resp, err := t.logsC.Export(ctx, req)
		if err != nil {
			return Rejected{}, grpcErr(err)
		}
		ps := resp.GetPartialSuccess()
		return Rejected{ps.GetRejectedLogRecords(), ps.GetErrorMessage()}, nil
	}
	var resp collogspb.ExportLogsServiceResponse
	if err := t.post(ctx, req, &resp); err != nil {
		return Rejected{}, err
	}
	ps := resp.GetPartialSuccess()
	return Rejected{ps.GetRejectedLogRecords(), ps.GetErrorMessage()}, nil
}

// ExportSpans sends one request, as ExportLogs.
func (c *Client) ExportSpans(ctx context.Context, rs []*tracepb.ResourceSpans) (Rejected, error) {
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: rs}
	t := c.traces
	if t.Protocol == ProtocolGRPC {
		ctx, cancel := context.WithTimeout(t.outgoing(ctx), t.Timeout)
		defer cancel()
		resp, err := t.traceC.Export(ctx, req)
		if err != nil {
			return Rejected{}, grpcErr(err)
		}
		ps := resp.GetPartialSuccess()
		return Rejected{ps.GetRejectedSpans(), ps.GetErrorMessage()}, nil
	}
	var resp coltracepb.ExportTraceServiceResponse
	if err := t.post(ctx, req, &resp); err != nil {
		return Rejected{}, err
	}
	ps := resp.GetPartialSuccess()
	return Rejected{ps.GetRejectedSpans(), ps.GetErrorMessage()}, nil
}

func (t *target) outgoing(ctx context.Context) context.Context {
	if len(t.Headers) == 0 {
		return ctx
	}
	var kv []string
	for k, v := range t.Headers {
		kv = append(kv, strings.ToLower(k), v)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// grpcErr classifies a gRPC failure by the OTLP specification's table of
// retryable codes.
func grpcErr(err error) error {
	switch status.Code(err) {
	case codes.Canceled, codes.DeadlineExceeded, codes.Aborted, codes.OutOfRange, codes.Unavailable,
		codes.DataLoss, codes.ResourceExhausted, codes.Unknown, codes.Internal:
		return fmt.Errorf("otlp grpc: %w", err)
	}
	return fmt.Errorf("otlp grpc: %w: %w", ErrPermanent, err)
}

func (t *target) post(ctx context.Context, req, resp proto.Message) error {
	body, err := proto.Marshal(req)
	if err != nil {
		return fmt.Errorf("otlp: %w: %w", ErrPermanent, err)
	}
	if body, err = t.compress(body); err != nil {
		return fmt.Errorf("otlp: %w: %w", ErrPermanent, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("otlp http: %w: %w", ErrPermanent, err)
	}
	hreq.Header.Set("Content-Type", "application/x-protobuf")
	if t.Compression == "gzip" {
		hreq.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range t.Headers {
		hreq.Header.Set(k, v)
	}
	hresp, err := t.http.Do(hreq)
	if err != nil {
		return fmt.Errorf("otlp http: %w", err)
	}
	defer hresp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(hresp.Body, 4<<20))
	switch code := hresp.StatusCode; {
	case code/100 == 2:
		if len(b) > 0 && strings.HasPrefix(hresp.Header.Get("Content-Type"), "application/x-protobuf") {
			_ = proto.Unmarshal(b, resp)
		}
		return nil
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code/100 == 5:
		return fmt.Errorf("otlp http %s: status %d", t.URL, code)
	default:
		return fmt.Errorf("otlp http %s: %w: status %d %s", t.URL, ErrPermanent, code, strings.TrimSpace(string(b[:min(len(b), 200)])))
	}
}
