package cli

import (
	"context"
	"os"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/otlp"
	"github.com/acptap/acptap/host/otlp/spool"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/storesink"
)

// forwarders fans the sink's AEP events out to several forwarders (the
// AEP relay outbox and the OTLP exporter); each never blocks.
type forwarders []storesink.EventForwarder

func (f forwarders) Event(session string, event []byte) {
	for _, x := range f {
		x.Event(session, event)
	}
}

// attachOTLP starts the OTLP export when it is configured and has the
// sink forward every AEP event it writes to it (besides the relay
// outbox); nil when export is off or cannot start (logged). The exporter
// never blocks the sink: events wait in a bounded queue, then in the
// spool on disk.
func attachOTLP(ctx context.Context, cfg *config.Config, logger hclog.Logger, st *store.Store, sink *storesink.Sink) *otlp.Exporter {
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
		Version: version(), Info: info.Agent, Logger: log})
	exp.Start(ctx)
	if sink.Forward != nil {
		sink.Forward = forwarders{sink.Forward, exp}
	} else {
		sink.Forward = exp
	}
	log.Info("otlp export", "target", client.Describe(), "spool", sp.Dir())
	return exp
}

// stopOTLP lets the spool drain for up to otlp.flush, then logs what
// became of the records; what is left stays in the spool for the next run.
func stopOTLP(e *otlp.Exporter, cfg *config.Config, logger hclog.Logger) {
	if e == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.OTLP.Flush)
	defer cancel()
	s := e.Shutdown(ctx)
	args := []any{"events", s.Events, "log_records", s.Delivery.LogRecords, "spans", s.Delivery.Spans,
		"dropped", s.Dropped, "invalid", s.Invalid, "rejected", s.Delivery.Rejected, "retries", s.Delivery.Retries,
		"segments_left", s.Spooled}
	switch {
	case len(s.Dropped) > 0 || s.Delivery.Rejected > 0 || s.Invalid > 0:
		logger.Named("otlp").Warn("otlp: records lost", args...)
	case s.Spooled > 0:
		logger.Named("otlp").Info("otlp: records left in the spool for the next run", append(args, "last_error", s.Delivery.LastError)...)
	default:
		logger.Named("otlp").Info("otlp: every record delivered", args...)
	}
}
