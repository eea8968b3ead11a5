package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/aeprelay"
	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/relay"
)

// RelayDir is the relay's directory under the store root.
const RelayDir = "relay"

func runRelay(env *Env, args []string) int {
	var c common
	var addr string
	fs := newFlagSet(env, "relay", "[flags]",
		"Runs an AEP receiver (AEP-0003 HTTP binding): POST /events takes events or NDJSON batches,\n"+
			"validates them against the AEP 0.1 schemas and stream rules, dedupes on (source, id), keeps\n"+
			"each session in (epoch, seq) order and appends it to <store>/relay/<agent>/<session>.jsonl.\n"+
			"GET /healthz answers {\"ok\":true}. Point `aep.relay` of `acptap record` at it. Stops on\n"+
			"SIGINT or SIGTERM after the requests in flight.")
	fs.StringVar(&addr, "addr", relay.DefaultAddr, "listen address (host:port; port 0 picks a free one)")
	c.register(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "acptap relay: unexpected arguments %q\n", fs.Args())
		return ExitUsage
	}
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap relay: config: %s\n", oneLine(err))
		return ExitFailure
	}
	logger, closer, err := config.NewLogger(cfg, "acptap")
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap relay: %s\n", oneLine(err))
		return ExitFailure
	}
	defer closeQuietly(closer)
	root := filepath.Join(cfg.Store, RelayDir)
	srv, err := relay.New(relay.Options{Root: root, Logger: logger.Named("relay")})
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap relay: %s\n", oneLine(err))
		return ExitFailure
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap relay: %s\n", oneLine(err))
		return ExitFailure
	}
	fmt.Fprintf(env.Stderr, "acptap relay: listening on http://%s, store %s\n", ln.Addr(), root)
	logger.Info("relay listening", "addr", ln.Addr().String(), "store", root)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = hs.Shutdown(sctx)
		cancel()
	}
	n := srv.Counts()
	fmt.Fprintf(env.Stderr, "acptap relay: stopped; %d events accepted, %d duplicates, %d refused\n", n.Accepted, n.Duplicates, n.Rejected)
	logger.Info("relay stopped", "accepted", n.Accepted, "duplicates", n.Duplicates, "refused", n.Rejected)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(env.Stderr, "acptap relay: %s\n", oneLine(err))
		return ExitFailure
	}
	return ExitOK
}

// attachOutbox starts the HTTP binding of the AEP events when aep.relay
// is set, and has the sink forward every AEP event it writes to it; nil
// when there is no relay. A relay that is down or slow never touches the
// tee: the outbox is bounded and never blocks the sink.
func attachOutbox(ctx context.Context, cfg *config.Config, logger hclog.Logger, sink *pipeline.StoreSink) *aeprelay.Outbox {
	if cfg.AEP.Relay == "" {
		return nil
	}
	o, err := aeprelay.New(aeprelay.Options{Base: cfg.AEP.Relay, Capacity: cfg.AEP.RelayQueue, Logger: logger.Named("aep-relay")})
	if err != nil {
		logger.Error("aep relay not used", "error", err)
		return nil
	}
	o.Start(ctx)
	if sink != nil {
		sink.Forward = o
	}
	return o
}

// stopOutbox lets the outbox drain for up to aep.relay_flush, then logs
// what became of the events: delivered, dropped (outbox full, by
// severity), refused by the relay, and unsent at exit.
func stopOutbox(o *aeprelay.Outbox, cfg *config.Config, logger hclog.Logger) {
	if o == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.AEP.RelayFlush)
	defer cancel()
	s, _ := o.Shutdown(ctx)
	logOutbox(s, cfg, logger)
}

// logOutbox logs what became of the outbox's events.
func logOutbox(s aeprelay.Stats, cfg *config.Config, logger hclog.Logger) {
	args := []any{"relay", cfg.AEP.Relay, "delivered", s.Delivered, "dropped", s.Dropped, "rejected", s.Rejected,
		"unsent", s.Unsent, "lost", s.Lost(), "retries", s.Retries}
	if s.Lost() > 0 {
		logger.Warn("aep relay: events not delivered", args...)
		return
	}
	logger.Info("aep relay: every event delivered", args...)
}
