package pluginhost

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/acptap/acptap/host/priority"
	"github.com/acptap/acptap/internal/pluginwire"
	"github.com/acptap/acptap/sdk"
)

// Deadlines of the calls Launch makes: a plugin that never completes the
// handshake, or whose Info never returns, is killed and Launch fails, so no
// caller waits on a hung plugin for longer (issue 18.1).
var (
	HandshakeTimeout = 20 * time.Second
	InfoTimeout      = 10 * time.Second
)

// Instance is one running plugin process.
type Instance struct {
	Spec   Spec
	Info   sdk.Info
	Mapper sdk.Mapper
	SHA256 string
	client *plugin.Client
	// release ends the thread that forked the plugin (its Pdeathsig
	// parent), once the plugin is dead.
	release func()
}

// Launch verifies and starts a plugin process and fingerprints it. Plugin
// logs (hclog JSON on the plugin's stderr) are relayed into logger under the
// plugin's name. The process is killed when the host process dies. It runs
// at the host's CPU priority (offline commands, whose plugins are the work).
func Launch(ctx context.Context, spec Spec, logger hclog.Logger) (*Instance, error) {
	return launch(ctx, spec, logger, false)
}

// LaunchBackground is Launch for record: the plugin is forked at a lower
// CPU priority than the host (package priority), so that the tee's copy
// path and capture win the CPU and the plugin catches up from the wire log.
func LaunchBackground(ctx context.Context, spec Spec, logger hclog.Logger) (*Instance, error) {
	return launch(ctx, spec, logger, true)
}

func launch(ctx context.Context, spec Spec, logger hclog.Logger, lower bool) (*Instance, error) {
	bin, err := openBinary(spec)
	if err != nil {
		return nil, err
	}
	defer bin.close() // after Dispense: the process has exec'd by then
	sum := bin.sum
	cmd := exec.Command(bin.path)
	cmd.Env = os.Environ()
	if spec.Builtin {
		cmd.Env = append(cmd.Env, PluginModeEnv+"="+spec.Name)
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	cmd.Env = append(cmd.Env, "ACPTAP_PLUGIN_LOG_LEVEL="+levelName(logger))
	setDeathSignal(cmd)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginwire.Handshake,
		VersionedPlugins: pluginwire.VersionedPlugins(nil),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           logger.Named(spec.Name),
		GRPCDialOptions:  pluginwire.GRPCDialOptions(),
		// cmd.Env is complete already; go-plugin would append the host
		// environment a second time.
		SkipHostEnv:  true,
		StartTimeout: HandshakeTimeout,
	})
	var m sdk.Mapper
	dispense := func() error {
		var derr error
		m, derr = pluginwire.Dispense(client)
		return derr
	}
	hold := make(chan struct{})
	var reniceErr error
	if lower {
		reniceErr, err = priority.Start(dispense, hold)
	} else {
		err = dispense()
	}
	if reniceErr != nil {
		logger.Warn("plugin runs at the host's CPU priority", "plugin", spec.Name, "error", reniceErr)
	}
	release := sync.OnceFunc(func() { close(hold) })
	if err != nil {
		client.Kill()
		release()
		return nil, fmt.Errorf("plugin %s (%s): %w", spec.Name, spec.Path, err)
	}
	ictx, cancel := context.WithTimeout(ctx, InfoTimeout)
	info, err := m.Info(ictx)
	cancel()
	if err == nil {
		err = info.Check()
	}
	if err != nil {
		client.Kill()
		release()
		return nil, fmt.Errorf("plugin %s: %w", spec.Name, err)
	}
	return &Instance{Spec: spec, Info: info, Mapper: m, SHA256: sum, client: client, release: release}, nil
}

// Kill stops the plugin process. It is safe to call more than once.
func (i *Instance) Kill() {
	if i != nil && i.client != nil {
		i.client.Kill()
		if i.release != nil {
			i.release()
		}
	}
}

// Exited reports whether the plugin process has exited.
func (i *Instance) Exited() bool { return i.client.Exited() }

// Pid returns the plugin's process id, or 0.
func (i *Instance) Pid() int {
	if rc := i.client.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}

func levelName(l hclog.Logger) string {
	switch {
	case l.IsTrace():
		return "trace"
	case l.IsDebug():
		return "debug"
	case l.IsInfo():
		return "info"
	case l.IsWarn():
		return "warn"
	}
	return "error"
}
