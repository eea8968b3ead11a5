package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/ui"
)

func runUI(env *Env, args []string) int {
	var c common
	fs := newFlagSet(env, "ui", "[flags]",
		"Serves a read-only web viewer of the store: sessions with search and filters, each session's\n"+
			"transcript with its wire frames, live recordings, comparisons and exports. Assets are\n"+
			"built in (it works offline). Listens on loopback unless --addr says otherwise; the URL it\n"+
			"prints carries a per-run token that every request needs. Stops on SIGINT or SIGTERM.")
	registerStoreFlags(fs, &c)
	addr := fs.String("addr", "127.0.0.1:0", "listen `address` (host:port; port 0 picks a free one)")
	open := fs.Bool("open", false, "open the URL in a browser (xdg-open)")
	allow := fs.String("allow-host", "", "comma-separated host names accepted in Host and Origin beside loopback names and IP addresses (as for relay)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "acptap ui: unexpected argument %q (see `acptap ui --help`)\n", fs.Arg(0))
		return ExitUsage
	}
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap ui: config: %s\n", oneLine(err))
		return ExitFailure
	}
	if fi, err := os.Stat(cfg.Store); err != nil || !fi.IsDir() {
		fmt.Fprintf(env.Stderr, "acptap ui: no store at %s\n", cfg.Store)
		return ExitFailure
	}
	st, err := store.Open(cfg.Store)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap ui: %s\n", oneLine(err))
		return ExitFailure
	}
	logger, closer, err := config.NewLogger(cfg, "acptap")
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap ui: %s\n", oneLine(err))
		return ExitFailure
	}
	defer closeQuietly(closer)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap ui: %s\n", oneLine(err))
		return ExitFailure
	}
	tcp := ln.Addr().(*net.TCPAddr)
	if !tcp.IP.IsLoopback() {
		fmt.Fprintf(env.Stderr, "acptap ui: WARNING: listening on %s, which is not loopback: anyone who can reach it and has the token can read every recorded session\n", ln.Addr())
	}
	srv := ui.New(ln.Addr(), ui.Options{Store: st, Log: logger.Named("ui"), Hosts: splitHosts(*allow)})
	host := ln.Addr().String()
	if tcp.IP.IsUnspecified() {
		host = fmt.Sprintf("127.0.0.1:%d", tcp.Port)
	}
	url := fmt.Sprintf("http://%s/?token=%s", host, srv.Token())
	fmt.Fprintf(env.Stderr, "acptap ui: serving %s at %s\n", cfg.Store, url)
	logger.Info("ui listening", "addr", ln.Addr().String(), "store", cfg.Store)
	if *open {
		if err := exec.Command("xdg-open", url).Start(); err != nil {
			fmt.Fprintf(env.Stderr, "acptap ui: cannot open a browser: %s\n", oneLine(err))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = hs.Shutdown(sctx) // live views are cut at the deadline
		cancel()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintf(env.Stderr, "acptap ui: %s\n", oneLine(err))
		return ExitFailure
	}
	return ExitOK
}

// splitHosts reads a comma-separated --allow-host.
func splitHosts(s string) []string {
	var out []string
	for h := range strings.SplitSeq(s, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}
