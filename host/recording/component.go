package recording

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/aepreceiver"
	"github.com/acptap/acptap/host/aepsender"
	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/otlp"
	"github.com/acptap/acptap/host/otlp/spool"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/storesink"
)

// Component is a part of a recording with a lifecycle, after the
// OpenTelemetry Collector's component.Component: Start before it is used,
// Shutdown when the recording ends. Shutdown is idempotent, safe on a
// component that never started, and bounded by its ctx.
type Component interface {
	Start(ctx context.Context) error
	Shutdown(ctx context.Context) error
}

// components start in order and shut down in reverse: what receives from
// another starts before it and stops after it.
type components []Component

func (cs components) start(ctx context.Context) error {
	for i, c := range cs {
		if err := c.Start(ctx); err != nil {
			return errors.Join(err, cs[:i].shutdown(ctx))
		}
	}
	return nil
}

func (cs components) shutdown(ctx context.Context) error {
	var errs []error
	for i := len(cs) - 1; i >= 0; i-- {
		errs = append(errs, cs[i].Shutdown(ctx))
	}
	return errors.Join(errs...)
}

var (
	_ Component = (*Outbox)(nil)
	_ Component = (*Exporter)(nil)
)

// forwarders fans the sink's AEP events out to several forwarders (the
// AEP relay outbox and the OTLP exporter); each never blocks.
type forwarders []storesink.EventForwarder

func (f forwarders) Event(session string, event []byte) {
	for _, x := range f {
		x.Event(session, event)
	}
}

// forwardTo has the sink forward every AEP event it writes to fwd too.
func forwardTo(sink *storesink.Sink, fwd storesink.EventForwarder) {
	if sink.Forward != nil {
		sink.Forward = forwarders{sink.Forward, fwd}
	} else {
		sink.Forward = fwd
	}
}

// Outbox is the AEP sender (the HTTP binding of the AEP events, aep.relay)
// as a component: Shutdown lets it drain for up to aep.relay_flush, then
// logs what became of the events (delivered, dropped by severity, refused
// by the relay, unsent at exit). A relay that is down or slow never
// touches the tee: the outbox is bounded and never blocks the sink.
type Outbox struct {
	o      *aepsender.Outbox
	cfg    *config.Config
	logger hclog.Logger
	once   sync.Once
}

// NewOutbox makes the outbox when aep.relay is set; nil when there is no
// relay or it cannot be used (logged).
func NewOutbox(cfg *config.Config, logger hclog.Logger) *Outbox {
	if cfg.AEP.Relay == "" {
		return nil
	}
	token := cfg.AEP.RelayToken
	if token == "" && cfg.AEP.RelayTokenFile != "" {
		var err error
		if token, err = aepreceiver.ReadToken(cfg.AEP.RelayTokenFile); err != nil {
			logger.Error("aep relay not used: aep.relay_token_file", "error", err)
			return nil
		}
	}
	o, err := aepsender.New(aepsender.Options{Base: cfg.AEP.Relay, Capacity: cfg.AEP.RelayQueue, Logger: logger.Named("aep-relay"), Token: token})
	if err != nil {
		logger.Error("aep relay not used", "error", err)
		return nil
	}
	return &Outbox{o: o, cfg: cfg, logger: logger}
}

// Event implements storesink.EventForwarder.
func (b *Outbox) Event(session string, event []byte) { b.o.Event(session, event) }

// Start begins sending in the background.
func (b *Outbox) Start(ctx context.Context) error {
	b.o.Start(ctx)
	return nil
}

// Shutdown drains the outbox for up to aep.relay_flush and logs the result.
func (b *Outbox) Shutdown(ctx context.Context) error {
	shutdownOnce(ctx, &b.once, b.cfg.AEP.RelayFlush, func(ctx context.Context) {
		if s, err := b.o.Shutdown(ctx); !errors.Is(err, aepsender.ErrNotStarted) {
			b.log(s)
		}
	})
	return nil
}

// shutdownOnce runs stop the first time only, bounded by flush.
func shutdownOnce(ctx context.Context, once *sync.Once, flush time.Duration, stop func(context.Context)) {
	once.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, flush)
		defer cancel()
		stop(ctx)
	})
}

// drained gives the outbox until done to deliver what it holds; false:
// some event was not delivered (record hands the connection over, the
// finisher sends them again, the relay drops the duplicates).
func (b *Outbox) drained(done <-chan time.Time) bool {
	ok := false
	b.once.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-done:
				cancel()
			case <-ctx.Done():
			}
		}()
		s, _ := b.o.Shutdown(ctx)
		if s.Lost() > 0 {
			b.logger.Debug("aep relay outbox not drained in time; the finisher sends the events again", "unsent", s.Unsent)
			return
		}
		b.log(s)
		ok = true
	})
	return ok
}

func (b *Outbox) log(s aepsender.Stats) {
	args := []any{"relay", b.cfg.AEP.Relay, "delivered", s.Delivered, "dropped", s.Dropped, "rejected", s.Rejected,
		"unsent", s.Unsent, "lost", s.Lost(), "retries", s.Retries}
	if s.Lost() > 0 {
		b.logger.Warn("aep relay: events not delivered", args...)
		return
	}
	b.logger.Info("aep relay: every event delivered", args...)
}

// Exporter is the OTLP export as a component: events wait in a bounded
// queue, then in the spool on disk, so the sink is never blocked; Shutdown
// lets the spool drain for up to otlp.flush, then logs what became of the
// records (what is left stays in the spool for the next run).
type Exporter struct {
	e      *otlp.Exporter
	cfg    *config.Config
	logger hclog.Logger
	once   sync.Once
}

// NewExporter makes the OTLP exporter when export is configured; nil when
// it is off or cannot start (logged).
func NewExporter(cfg *config.Config, st *store.Store, version string, logger hclog.Logger) *Exporter {
	if !otlp.Enabled(cfg.OTLP) {
		return nil
	}
	log := logger.Named("otlp")
	logs, traces, err := otlp.Endpoints(otlp.SettingsOf(cfg.OTLP), os.Getenv)
	if err != nil {
		log.Error("otlp export not used", "error", err)
		return nil
	}
	client, err := otlp.NewClient(logs, traces)
	if err != nil {
		log.Error("otlp export not used", "error", err)
		return nil
	}
	sp, err := spool.Open(otlp.SpoolDir(cfg.Store), cfg.OTLP.SpoolBytes)
	if err != nil {
		client.Close()
		log.Error("otlp export not used", "error", err)
		return nil
	}
	info := &otlp.ASRInfo{Path: st.StreamPath}
	exp := otlp.NewExporter(otlp.ExporterOptions{Spool: sp, Client: client, MaxCapture: otlp.MaxCaptureOf(cfg.OTLP),
		Version: version, Info: info.Agent, Logger: log})
	log.Info("otlp export", "target", client.Describe(), "spool", sp.Dir())
	return &Exporter{e: exp, cfg: cfg, logger: log}
}

// Event implements storesink.EventForwarder.
func (x *Exporter) Event(session string, event []byte) { x.e.Event(session, event) }

// Start begins exporting in the background.
func (x *Exporter) Start(ctx context.Context) error {
	x.e.Start(ctx)
	return nil
}

// Shutdown drains the spool for up to otlp.flush and logs the result.
func (x *Exporter) Shutdown(ctx context.Context) error {
	shutdownOnce(ctx, &x.once, x.cfg.OTLP.Flush, func(ctx context.Context) {
		s := x.e.Shutdown(ctx)
		args := []any{"events", s.Events, "log_records", s.Delivery.LogRecords, "spans", s.Delivery.Spans,
			"dropped", s.Dropped, "invalid", s.Invalid, "rejected", s.Delivery.Rejected, "retries", s.Delivery.Retries,
			"segments_left", s.Spooled}
		switch {
		case len(s.Dropped) > 0 || s.Delivery.Rejected > 0 || s.Invalid > 0:
			x.logger.Warn("otlp: records lost", args...)
		case s.Spooled > 0:
			x.logger.Info("otlp: records left in the spool for the next run", append(args, "last_error", s.Delivery.LastError)...)
		default:
			x.logger.Info("otlp: every record delivered", args...)
		}
	})
	return nil
}
