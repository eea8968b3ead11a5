package otlp

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Protocols.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// Defaults of the OTLP exporter specification.
const (
	DefaultProtocol     = ProtocolHTTP
	DefaultGRPCEndpoint = "http://localhost:4317"
	DefaultHTTPEndpoint = "http://localhost:4318"
	DefaultTimeout      = 10 * time.Second
)

// Settings are what acptap's configuration says ([otlp]); empty fields
// defer to the OTEL_EXPORTER_OTLP_* environment, then to the defaults.
type Settings struct {
	Endpoint string
	Protocol string
	Headers  map[string]string
	Timeout  time.Duration
	Insecure bool
	// Compression is "gzip" or "none" (empty: the environment, else none).
	Compression string
}

// Target is where one signal goes.
type Target struct {
	Protocol string
	// URL is the full URL for http/protobuf (…/v1/logs), the endpoint URL
	// for grpc (scheme http: plaintext, https: TLS).
	URL      string
	Headers  map[string]string
	Timeout  time.Duration
	Insecure bool
	// Compression is "gzip" or "" (none).
	Compression string
}

// Endpoints resolves where logs and traces go, by precedence: the
// settings (acptap's config and flags), then OTEL_EXPORTER_OTLP_{LOGS,
// TRACES}_* and OTEL_EXPORTER_OTLP_* (endpoint, headers, protocol,
// timeout, insecure), then the specification's defaults. getenv is
// os.Getenv in production.
func Endpoints(s Settings, getenv func(string) string) (logs, traces Target, err error) {
	if logs, err = resolve(s, "LOGS", "/v1/logs", getenv); err != nil {
		return
	}
	traces, err = resolve(s, "TRACES", "/v1/traces", getenv)
	return
}

func resolve(s Settings, signal, path string, getenv func(string) string) (Target, error) {
	env := func(k string) string {
		if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + signal + "_" + k)); v != "" {
			return v
		}
		return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + k))
	}
	t := Target{Protocol: s.Protocol, Timeout: s.Timeout, Insecure: s.Insecure, Headers: map[string]string{}}
	if t.Protocol == "" {
		t.Protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"))
	}
	if t.Protocol == "" {
		t.Protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	if t.Protocol == "" {
		t.Protocol = DefaultProtocol
	}
	if t.Protocol != ProtocolGRPC && t.Protocol != ProtocolHTTP {
		return t, fmt.Errorf("otlp protocol %q: acptap sends grpc or http/protobuf", t.Protocol)
	}
	// The endpoint: ours is a base (http adds the signal's path), as is
	// OTEL_EXPORTER_OTLP_ENDPOINT; the per-signal variable is used as is.
	switch {
	case s.Endpoint != "":
		t.URL = withPath(t.Protocol, s.Endpoint, path)
	case strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT")) != "":
		t.URL = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"))
	case strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != "":
		t.URL = withPath(t.Protocol, strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")), path)
	case t.Protocol == ProtocolGRPC:
		t.URL = DefaultGRPCEndpoint
	default:
		t.URL = DefaultHTTPEndpoint + path
	}
	if t.Protocol == ProtocolGRPC && !strings.Contains(t.URL, "://") {
		t.URL = "http://" + t.URL
	}
	u, err := url.Parse(t.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return t, fmt.Errorf("otlp endpoint %q: not an http(s) URL", t.URL)
	}
	if h := env("HEADERS"); h != "" {
		parsed, err := ParseHeaders(h)
		if err != nil {
			return t, err
		}
		for k, v := range parsed {
			t.Headers[k] = v
		}
	}
	for k, v := range s.Headers {
		t.Headers[k] = v
	}
	if t.Timeout <= 0 {
		if v := env("TIMEOUT"); v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				return t, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT %q: not a positive number of milliseconds", v)
			}
			t.Timeout = time.Duration(ms) * time.Millisecond
		} else {
			t.Timeout = DefaultTimeout
		}
	}
	if !t.Insecure {
		t.Insecure = strings.EqualFold(env("INSECURE"), "true")
	}
	comp := s.Compression
	if comp == "" {
		comp = env("COMPRESSION")
	}
	switch comp {
	case "", "none":
	case "gzip":
		t.Compression = "gzip"
	default:
		return t, fmt.Errorf("otlp compression %q: acptap sends gzip or none", comp)
	}
	return t, nil
}

// withPath appends the signal path to a base endpoint for http/protobuf.
func withPath(protocol, base, path string) string {
	if protocol == ProtocolGRPC {
		return base
	}
	return strings.TrimRight(base, "/") + path
}

// ParseHeaders parses the OTEL_EXPORTER_OTLP_HEADERS form: comma-separated
// key=value pairs, values percent-decoded.
func ParseHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	for pair := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("otlp headers: %q is not key=value", pair)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("otlp headers: %q: %w", pair, err)
		}
		out[k] = dv
	}
	return out, nil
}
