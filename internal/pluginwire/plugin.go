package pluginwire

import (
	"context"
	"fmt"
	"os"
	"time"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
	"github.com/acptap/acptap/sdk"
	hclog "github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/experimental"
)

// mapperPlugin is the go-plugin definition of the mapper service.
type mapperPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl   sdk.Mapper
	legacy bool // serve as a plugin built before FeaturePacked (ServeLegacy)
}

var _ plugin.GRPCPlugin = (*mapperPlugin)(nil)

func (p *mapperPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterMapperServer(s, &grpcServer{impl: p.impl, legacy: p.legacy})
	return nil
}

func (p *mapperPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &grpcClient{c: pb.NewMapperClient(c)}, nil
}

// VersionedPlugins is the plugin set per wire version. The host passes a nil
// impl; a plugin passes its Mapper. A wire v2 adds an entry here.
func VersionedPlugins(impl sdk.Mapper) map[int]plugin.PluginSet { return versionedPlugins(impl, false) }

// versionedPlugins is VersionedPlugins, served the old way when legacy (ServeLegacy).
func versionedPlugins(impl sdk.Mapper, legacy bool) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		WireVersion: {PluginKey: &mapperPlugin{impl: impl, legacy: legacy}},
	}
}

// GRPCDialOptions are the host's dial options: the explicit max message
// size, the window and buffers below, and the buffer pool of bufpool.go
// (the transport's and the codec's, codec.go).
//
// A batch (256 frames of some 320 bytes) is larger than gRPC's default
// flow-control window (64 KiB, grown by ping-based estimation) and its
// 32 KiB socket buffers: each batch cost its sender a wait for a window
// update and both sides estimation pings and extra reads and writes. A
// fixed window of windowSize (which turns the estimation off) and
// bufferSize buffers carry a batch in one go: 3–4 read and write system
// calls a batch on each side instead of 8–10 (BenchmarkPluginFrames's
// syscalls/batch). The window only bounds what may be in flight; the host
// never has more than two batches unanswered.
func GRPCDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(MaxMessageSize),
		grpc.MaxCallSendMsgSize(MaxMessageSize),
		codecCallOption,
	),
		grpc.WithInitialWindowSize(windowSize), grpc.WithInitialConnWindowSize(windowSize),
		experimental.WithBufferPool(sharedPool),
	}
}

// windowSize is the flow-control window of both ends (see GRPCDialOptions).
const windowSize = 1 << 20

func newGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts, grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize),
		grpc.InitialWindowSize(windowSize), grpc.InitialConnWindowSize(windowSize),
		experimental.BufferPool(sharedPool), codecServerOption)
	return grpc.NewServer(opts...)
}

// Dispense returns the Mapper served by a started go-plugin client.
func Dispense(c *plugin.Client) (sdk.Mapper, error) {
	rpc, err := c.Client()
	if err != nil {
		return nil, fmt.Errorf("connect plugin: %w", err)
	}
	raw, err := rpc.Dispense(PluginKey)
	if err != nil {
		return nil, fmt.Errorf("dispense plugin: %w", err)
	}
	m, ok := raw.(sdk.Mapper)
	if !ok {
		return nil, fmt.Errorf("dispense plugin: unexpected type %T", raw)
	}
	return m, nil
}

// Serve runs m as an acptap plugin: it answers go-plugin's handshake on
// stdout and then serves gRPC until the host goes away. Logs go to stderr
// as hclog JSON, which the host relays under the plugin's name. Serve never
// returns while the host is alive; it exits the process when the host dies
// (even when the host was SIGKILLed).
func Serve(m sdk.Mapper) { serve(m, false) }

// ServeLegacy is Serve as a plugin built with an SDK from before
// FeaturePacked serves: it announces no wire feature, answers with Output
// messages and refuses packed batches. For the tests that such a plugin
// still works with this host (testdata/legacyplugin); no plugin uses it.
func ServeLegacy(m sdk.Mapper) { serve(m, true) }

func serve(m sdk.Mapper, legacy bool) {
	logger := hclog.New(&hclog.LoggerOptions{
		Name:       "plugin",
		Level:      hclog.LevelFromString(os.Getenv("ACPTAP_PLUGIN_LOG_LEVEL")),
		Output:     os.Stderr,
		JSONFormat: true,
	})
	go watchParent(logger)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: versionedPlugins(m, legacy),
		GRPCServer:       newGRPCServer,
		Logger:           logger,
	})
}

// watchParent exits the plugin when its parent process changes (the host
// died and the plugin was re-parented), so no plugin outlives its host.
func watchParent(logger hclog.Logger) {
	ppid := os.Getppid()
	for {
		time.Sleep(200 * time.Millisecond)
		if os.Getppid() != ppid {
			logger.Warn("host process is gone; plugin exiting", "old_ppid", ppid)
			os.Exit(3)
		}
	}
}
