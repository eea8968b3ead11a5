package config

import (
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Shipping defaults ([ship.nats]).
const (
	DefaultShipStream   = "ACPTAP"
	DefaultShipSubject  = "acptap"
	DefaultShipDurable  = "acptap-collect"
	DefaultShipInterval = time.Second
	DefaultShipTimeout  = 5 * time.Second
	DefaultShipLinger   = 10 * time.Minute
	DefaultShipAckWait  = 30 * time.Second
	DefaultShipReplicas = 1
)

// Ship configures shipping the store's outputs to a team store.
type Ship struct {
	NATS ShipNATS `koanf:"nats"`
}

// ShipNATS is the NATS JetStream team store: where record, rebuild and
// convert publish the lines they append, and where acptap collect reads
// them from. An empty URL turns shipping off.
type ShipNATS struct {
	// URL is the server (or a comma-separated list of cluster members).
	URL string `koanf:"url"`
	// Creds is a NATS credentials file (JWT and NKey seed).
	Creds string `koanf:"creds"`
	// NKey is a file holding an NKey seed.
	NKey string `koanf:"nkey"`
	// User and PasswordFile authenticate with a user name and a password
	// read from a file (never written in the config itself).
	User         string `koanf:"user"`
	PasswordFile string `koanf:"password_file"`
	// TLSCA, TLSCert and TLSKey are PEM files: the CA to trust, and the
	// client certificate and key for mutual TLS.
	TLSCA   string `koanf:"tls_ca"`
	TLSCert string `koanf:"tls_cert"`
	TLSKey  string `koanf:"tls_key"`
	// Origin names this machine in the team store (default user@host); it
	// is the second token of every subject this machine publishes.
	Origin string `koanf:"origin"`
	// Stream is the JetStream stream's name; Subject the subject prefix.
	Stream  string `koanf:"stream"`
	Subject string `koanf:"subject"`
	// Wire ships wire logs too (they hold the raw prompts and files).
	Wire bool `koanf:"wire"`
	// CreateStream creates the stream when it is missing, with Replicas
	// replicas and MaxAge retention (0: kept until deleted).
	CreateStream bool          `koanf:"create_stream"`
	Replicas     int           `koanf:"replicas"`
	MaxAge       time.Duration `koanf:"max_age"`
	// Interval is how often a recording looks for new lines to ship.
	Interval time.Duration `koanf:"interval"`
	// Linger is how long a recording's shipper keeps trying once the
	// recording is over (the server may be down); what is left then goes
	// with the next recording or `acptap ship`.
	Linger time.Duration `koanf:"linger"`
	// Timeout bounds one request to the server.
	Timeout time.Duration `koanf:"timeout"`
	// Durable is the collector's durable consumer name; collectors sharing
	// one name share the work.
	Durable string `koanf:"durable"`
	// AckWait is how long the server waits for a collector to acknowledge
	// a chunk before it delivers it again (to a collector that died, say).
	AckWait time.Duration `koanf:"ack_wait"`
}

var (
	shipStreamName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	shipSubject    = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
)

func shipDefaults() Ship {
	return Ship{NATS: ShipNATS{
		Stream: DefaultShipStream, Subject: DefaultShipSubject, CreateStream: true, Replicas: DefaultShipReplicas,
		Interval: DefaultShipInterval, Linger: DefaultShipLinger, Timeout: DefaultShipTimeout, Durable: DefaultShipDurable,
		AckWait: DefaultShipAckWait,
	}}
}

func (s *Ship) validate(bad func(key, format string, args ...any)) {
	n := &s.NATS
	if n.URL == "" {
		return // shipping is off; acptap ship and collect say so themselves
	}
	{
		for _, u := range splitURLs(n.URL) {
			p, err := url.Parse(u)
			if err != nil || p.Host == "" {
				bad("ship.nats.url", "%q is not a server URL (nats://host:port)", u)
				continue
			}
			switch p.Scheme {
			case "nats", "tls", "ws", "wss":
			default:
				bad("ship.nats.url", "scheme %q is not nats, tls, ws or wss", p.Scheme)
			}
			if p.User != nil {
				bad("ship.nats.url", "credentials in the URL; use ship.nats.user and password_file, creds or nkey")
			}
		}
	}
	if !shipStreamName.MatchString(n.Stream) {
		bad("ship.nats.stream", "%q: stream names are letters, digits, '_' and '-'", n.Stream)
	}
	if !shipSubject.MatchString(n.Subject) {
		bad("ship.nats.subject", "%q is not a subject prefix (tokens of letters, digits, '_', '-')", n.Subject)
	}
	if !shipStreamName.MatchString(n.Durable) {
		bad("ship.nats.durable", "%q: consumer names are letters, digits, '_' and '-'", n.Durable)
	}
	if n.Replicas < 1 || n.Replicas > 5 {
		bad("ship.nats.replicas", "must be between 1 and 5, got %d", n.Replicas)
	}
	if n.MaxAge < 0 {
		bad("ship.nats.max_age", "must not be negative, got %s", n.MaxAge)
	}
	if n.Interval <= 0 {
		bad("ship.nats.interval", "must be positive, got %s", n.Interval)
	}
	if n.AckWait < time.Second {
		bad("ship.nats.ack_wait", "must be at least 1s, got %s", n.AckWait)
	}
	if n.Linger < 0 {
		bad("ship.nats.linger", "must not be negative, got %s", n.Linger)
	}
	if n.Timeout <= 0 {
		bad("ship.nats.timeout", "must be positive, got %s", n.Timeout)
	}
	if (n.TLSCert == "") != (n.TLSKey == "") {
		bad("ship.nats.tls_cert", "tls_cert and tls_key go together")
	}
	if n.PasswordFile != "" && n.User == "" {
		bad("ship.nats.password_file", "set without ship.nats.user")
	}
	if n.Creds != "" && n.NKey != "" {
		bad("ship.nats.creds", "use creds or nkey, not both")
	}
}

func splitURLs(s string) []string {
	var out []string
	for u := range strings.SplitSeq(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}
