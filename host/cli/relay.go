package cli

import (
	"context"
	"crypto/tls"
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

	"github.com/acptap/acptap/host/aepreceiver"
	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/eventstream"
)

// RelayDir is the relay's directory under the store root.
const RelayDir = "relay"

func runRelay(env *Env, args []string) int {
	var c common
	var addr, tokenFile, tlsCert, tlsKey, allowHosts string
	var noAuth bool
	var ping time.Duration
	var buffer int
	fs := newFlagSet(env, "relay", "[flags]",
		"Runs an AEP relay (AEP-0003): POST /events takes events or NDJSON batches, validates them\n"+
			"against the AEP 0.1 schemas and stream rules, dedupes on (source, id), keeps each session in\n"+
			"(epoch, seq) order and appends it to <store>/relay/<agent>/<session>.jsonl. Consumers read\n"+
			"GET /stream (SSE) or /socket (WebSocket) with attr-match filters, a capture ceiling and\n"+
			"resume positions; GET /events and /.well-known/aep describe it; GET /healthz is open.\n"+
			"Every request but /healthz needs Authorization: Bearer <token>: --token-file, or a token\n"+
			"generated on first start (printed once, kept in <store>/relay/_token, mode 0600).\n"+
			"A non-loopback --addr needs a token. Stops on SIGINT or SIGTERM.")
	fs.StringVar(&addr, "addr", aepreceiver.DefaultAddr, "listen address (host:port; port 0 picks a free one)")
	fs.StringVar(&tokenFile, "token-file", "", "file holding the bearer token (first line)")
	fs.BoolVar(&noAuth, "no-auth", false, "no token (loopback addresses only)")
	fs.StringVar(&tlsCert, "tls-cert", "", "TLS certificate (PEM); with --tls-key the relay serves https")
	fs.StringVar(&tlsKey, "tls-key", "", "TLS private key (PEM)")
	fs.StringVar(&allowHosts, "allow-host", "", "comma-separated host names accepted in Host and Origin beside loopback names and IP addresses")
	fs.DurationVar(&ping, "ping", eventstream.DefaultPing, "SSE heartbeat and WebSocket ping interval")
	fs.IntVar(&buffer, "replay-buffer", aepreceiver.DefaultBuffer, "events per session a consumer can resume from")
	c.register(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(env.Stderr, "acptap relay: "+format+"\n", a...)
		return ExitUsage
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected arguments %q", fs.Args())
	case noAuth && tokenFile != "":
		return usage("--no-auth and --token-file exclude each other")
	case (tlsCert == "") != (tlsKey == ""):
		return usage("--tls-cert and --tls-key go together")
	case noAuth && !aepreceiver.IsLoopback(addr):
		return usage("refusing to serve %s without a token: off loopback, AEP-0003 §8.1 requires one (drop --no-auth)", addr)
	case ping <= 0:
		return usage("--ping must be positive")
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
	token, err := relayToken(env, root, tokenFile, noAuth)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap relay: %s\n", oneLine(err))
		return ExitFailure
	}
	var tlsConf *tls.Config
	if tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(tlsCert, tlsKey)
		if err != nil {
			fmt.Fprintf(env.Stderr, "acptap relay: TLS: %s\n", oneLine(err))
			return ExitFailure
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	hosts := splitHosts(allowHosts)
	srv, err := aepreceiver.New(aepreceiver.Options{Root: root, Logger: logger.Named("relay"), Token: token,
		AllowHosts: hosts, Ping: ping, Buffer: buffer})
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
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
		ln = tls.NewListener(ln, tlsConf)
	} else if !aepreceiver.IsLoopback(addr) {
		fmt.Fprintf(env.Stderr, "acptap relay: WARNING: plain HTTP on %s: the token crosses the network in clear; give --tls-cert/--tls-key or terminate TLS in front (AEP-0003 §8.1)\n", addr)
	}
	fmt.Fprintf(env.Stderr, "acptap relay: listening on %s://%s, store %s\n", scheme, ln.Addr(), root)
	logger.Info("relay listening", "addr", ln.Addr().String(), "scheme", scheme, "store", root, "auth", token != "")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// No server-wide read or write timeout: streams are long-lived. Each
	// request body and each write to a consumer has its own deadline.
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: logger.Named("relay").StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})}
	hs.RegisterOnShutdown(srv.Drain)
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
	fmt.Fprintf(env.Stderr, "acptap relay: stopped; %d events accepted, %d duplicates, %d refused, %d store failures\n", n.Accepted, n.Duplicates, n.Rejected, n.StoreFailures)
	logger.Info("relay stopped", "accepted", n.Accepted, "duplicates", n.Duplicates, "refused", n.Rejected, "store_failures", n.StoreFailures)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(env.Stderr, "acptap relay: %s\n", oneLine(err))
		return ExitFailure
	}
	return ExitOK
}

// relayToken is the token the relay requires: the --token-file's, none
// with --no-auth, else the one kept in the store (generated and printed
// once, on the first start).
func relayToken(env *Env, root, tokenFile string, noAuth bool) (string, error) {
	switch {
	case noAuth:
		fmt.Fprintln(env.Stderr, "acptap relay: no token (--no-auth): anyone on this machine can post and read events")
		return "", nil
	case tokenFile != "":
		if st, err := os.Stat(tokenFile); err == nil && st.Mode().Perm()&0o077 != 0 {
			fmt.Fprintf(env.Stderr, "acptap relay: WARNING: %s is readable by others (mode %04o); chmod 600 it\n", tokenFile, st.Mode().Perm())
		}
		return aepreceiver.ReadToken(tokenFile)
	}
	path := filepath.Join(root, aepreceiver.TokenFile)
	tok, created, err := aepreceiver.LoadOrCreateToken(path)
	if err != nil {
		return "", err
	}
	if created {
		fmt.Fprintf(env.Stderr, "acptap relay: generated token (printed once; kept in %s, mode 0600): %s\n", path, tok)
	} else {
		fmt.Fprintf(env.Stderr, "acptap relay: token in %s\n", path)
	}
	return tok, nil
}
