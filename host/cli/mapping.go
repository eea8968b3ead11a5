package cli

import (
	"io"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/config"
	"github.com/acptap/acptap/host/recording"
	"github.com/acptap/acptap/host/store"
)

// mapping is what a command that maps wire logs (rebuild, convert) opens
// from its config: its log, the store, and the plugins (host/recording).
type mapping struct {
	cfg     *config.Config
	logger  hclog.Logger
	closer  io.Closer
	st      *store.Store
	plugins *recording.Plugins
}

// openMapping loads the config and opens the log, the store and the
// plugins. What the command writes goes to the team store too, when one is
// configured: a shipper follows this process and ships until nothing is
// left (a rebuilt file ships as its next generation).
func openMapping(env *Env, c *common) (*mapping, error) {
	cfg, err := c.load()
	if err != nil {
		return nil, err
	}
	m := &mapping{cfg: cfg}
	if m.logger, m.closer, err = newCommandLogger(cfg); err != nil {
		return nil, err
	}
	if m.st, err = store.Open(cfg.Store); err == nil {
		m.plugins, err = recording.NewPlugins(cfg, env.Self, m.logger)
	}
	if err != nil {
		m.close()
		return nil, err
	}
	startShipping(env, cfg, m.logger)
	return m, nil
}

func (m *mapping) close() { closeQuietly(m.closer) }
