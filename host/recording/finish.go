package recording

import (
	"context"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/finisher"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/storesink"
)

// FinisherOptions are what a finisher maps a recorded connection with
// again: the plugins as record had them, routed by each wire log's agent,
// and, when aep.relay is configured, an outbox per connection (the relay
// drops the events it has already).
func FinisherOptions(ctx context.Context, cfg *config.Config, plugins *Plugins, st *store.Store, logger hclog.Logger) finisher.Options {
	o := finisher.Options{Store: st, Logger: logger, Pipeline: plugins.ForHeader}
	if cfg.AEP.Relay != "" {
		o.Relay = func() (storesink.EventForwarder, func()) {
			outbox := NewOutbox(cfg, logger)
			if outbox == nil {
				return nil, func() {}
			}
			_ = outbox.Start(ctx)
			return outbox, func() { _ = outbox.Shutdown(context.Background()) }
		}
	}
	return o
}
