package ship

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/acptap/acptap/host/config"
)

// Message headers of a shipped chunk, besides Nats-Msg-Id.
const (
	HeaderGen   = "Acptap-Gen"   // generation of the file (a rebuild that rewrote it starts the next)
	HeaderLine  = "Acptap-Line"  // number of the chunk's first line, from 1
	HeaderCount = "Acptap-Count" // complete lines in the chunk
	// A line longer than a message may be travels in parts: each says where
	// it starts in the line and how long the whole line is.
	HeaderPartOffset = "Acptap-Part-Offset"
	HeaderLineBytes  = "Acptap-Line-Bytes"
)

// ErrOff is returned when shipping is not configured.
var ErrOff = errors.New("shipping is off: set ship.nats.url")

// Conn is a connection to the team store's server and its stream.
type Conn struct {
	NC     *nats.Conn
	JS     jetstream.JetStream
	Stream jetstream.Stream
	cfg    config.ShipNATS
}

// Connect dials the server of cfg and opens (or, with create_stream,
// creates) the stream. name labels the connection in the server's monitor.
func Connect(ctx context.Context, cfg config.ShipNATS, name string) (*Conn, error) {
	if cfg.URL == "" {
		return nil, ErrOff
	}
	opts := []nats.Option{nats.Name(name), nats.Timeout(cfg.Timeout),
		// A shipper that cannot reach the server stays quiet and retries on
		// its next pass; the connection itself keeps trying to reconnect.
		nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond), nats.RetryOnFailedConnect(false)}
	if cfg.Creds != "" {
		opts = append(opts, nats.UserCredentials(cfg.Creds))
	}
	if cfg.NKey != "" {
		o, err := nats.NkeyOptionFromSeed(cfg.NKey)
		if err != nil {
			return nil, fmt.Errorf("ship.nats.nkey: %w", err)
		}
		opts = append(opts, o)
	}
	if cfg.User != "" {
		pw := ""
		if cfg.PasswordFile != "" {
			b, err := os.ReadFile(cfg.PasswordFile)
			if err != nil {
				return nil, fmt.Errorf("ship.nats.password_file: %w", err)
			}
			pw = strings.TrimRight(string(b), "\r\n")
		}
		opts = append(opts, nats.UserInfo(cfg.User, pw))
	}
	if cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCA))
	}
	if cfg.TLSCert != "" {
		opts = append(opts, nats.ClientCert(cfg.TLSCert, cfg.TLSKey))
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", cfg.URL, err)
	}
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(cfg.Timeout))
	if err != nil {
		nc.Close()
		return nil, err
	}
	c := &Conn{NC: nc, JS: js, cfg: cfg}
	if err := c.openStream(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// StreamConfig is the stream acptap creates when it is missing: every
// subject under the prefix, on disk, kept by age only, direct gets allowed
// (a shipper reads the last message of its own subjects).
func StreamConfig(cfg config.ShipNATS) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        cfg.Stream,
		Description: "acptap team store: ASR streams, AEP events and wire logs, one subject per origin and file",
		Subjects:    []string{cfg.Subject + ".>"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      cfg.MaxAge,
		Replicas:    cfg.Replicas,
		Duplicates:  10 * time.Minute,
		AllowDirect: true,
	}
}

func (c *Conn) openStream(ctx context.Context) error {
	s, err := c.JS.Stream(ctx, c.cfg.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) && c.cfg.CreateStream {
		s, err = c.JS.CreateStream(ctx, StreamConfig(c.cfg))
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s, err = c.JS.Stream(ctx, c.cfg.Stream)
		}
	}
	if err != nil {
		return fmt.Errorf("stream %s: %w", c.cfg.Stream, err)
	}
	c.Stream = s
	return nil
}

// Close drains nothing: every publish was acknowledged or is retried.
func (c *Conn) Close() { c.NC.Close() }

var hostClean = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// DefaultOrigin is user@host, cleaned to an origin name.
func DefaultOrigin() string {
	name := "user"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	o := hostClean.ReplaceAllString(name, "-") + "@" + hostClean.ReplaceAllString(host, "-")
	return strings.TrimLeft(o, ".")
}

// Origin is cfg's origin, or DefaultOrigin.
func Origin(cfg config.ShipNATS) (string, error) {
	o := cfg.Origin
	if o == "" {
		o = DefaultOrigin()
	}
	return o, CheckOrigin(o)
}
