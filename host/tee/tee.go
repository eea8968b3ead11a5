package tee

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/aep"
)

// ExitCannotStart is Run's exit code when the agent cannot be started (as a shell does).
const ExitCannotStart = 127

// Defaults for the zero values of Config.
const (
	// DefaultDrainTimeout bounds how long Run keeps reading the agent's stdout after the agent
	// exited, when a descendant still holds it open.
	DefaultDrainTimeout = 2 * time.Second
)

// finalGapWait bounds the blocking send of the last pending gap at the end of Run.
var finalGapWait = 5 * time.Second

// Config says what to run and where the bytes go. Zero stdio fields mean this process's own.
type Config struct {
	Agent  []string             // argv of the agent
	Env    []string             // nil = inherit
	Dir    string               // "" = current directory
	Stdin  io.Reader            // editor → (nil = os.Stdin)
	Stdout io.Writer            // → editor (nil = os.Stdout)
	Stderr io.Writer            // agent stderr goes straight here; an *os.File is inherited (nil = os.Stderr)
	Queue  chan<- captured.Item // bounded, never blocked on; closed by Run; nil = no capture (items: see captured.Item)
	// Doorbell, when set, is rung (a send that never blocks) after each chunk queued on
	// Queue has been forwarded, and after Queue is closed. A receiver that waits on it
	// rather than on Queue is woken after the write, not by the send before it: waking a
	// parked goroutine costs the copier some 10 µs per line otherwise. Its capacity must
	// be at least 1.
	Doorbell chan<- struct{}
	Signals  bool          // forward SIGINT, SIGTERM, SIGHUP received by this process to the agent
	OnStart  func(pid int) // called right after the agent started
	// Watchdog makes the command of the watchdog process that kills the
	// agent's process group pgid if acptap dies without ending it (Linux;
	// see procgroup_linux.go and Watchdog). Nil: no watchdog.
	Watchdog func(pgid int) *exec.Cmd
	Logger   hclog.Logger // nil = silent

	QueueBytes int // bound on the bytes of the chunks on Queue (0 = captured.DefaultQueueBytes)
	// Arena holds the read buffers and slabs of queued chunks (nil: the heap pool); the
	// recording hands it to its finisher at the exit (see captured.Arena).
	Arena        *captured.Arena
	DrainTimeout time.Duration // 0 = DefaultDrainTimeout
}

// Run spawns the agent and copies until the agent exits and both copy directions are drained
// (the editor's stdin is not waited for: a read blocked on it is abandoned). It returns the
// code acptap must exit with: the agent's exit code, 128+n when it was killed by signal n, or
// ExitCannotStart with a one-line error when it could not be started. Cancelling ctx kills the
// agent. Run closes cfg.Queue before it returns.
func Run(ctx context.Context, cfg Config) (exitCode int, err error) {
	cfg = withDefaults(cfg)
	log := cfg.Logger
	if len(cfg.Agent) == 0 {
		closeQueue(cfg.Queue, cfg.Doorbell)
		return ExitCannotStart, errors.New("acptap: no agent command given")
	}
	ag, err := start(ctx, cfg)
	if err != nil {
		closeQueue(cfg.Queue, cfg.Doorbell)
		return ExitCannotStart, err
	}
	cmd, agentIn, agentOut := ag.cmd, ag.in, ag.out
	cfg.Stdin = takeEditorIn(cfg.Stdin)     // off the runtime's poller (editorin_linux.go)
	raiseEditorPipes(cfg.Stdin, cfg.Stdout) // larger pipes in a burst (pipe_linux.go)
	log.Debug("agent started", "pid", cmd.Process.Pid, "command", aep.RedactArgv(cfg.Agent))

	bound := captured.NewBound(int64(cfg.QueueBytes))
	c2a := newCapture(sdk.C2A, cfg.Queue, bound, cfg.Arena)
	a2c := newCapture(sdk.A2C, cfg.Queue, bound, cfg.Arena)
	c2a.bell, a2c.bell = cfg.Doorbell, cfg.Doorbell
	// The agent's stdin gone (a failed write, or closed by the agent) closes
	// the editor's: its next write fails, as it would without acptap.
	editorIn := closeEditorIn(cfg.Stdin)
	stopWatch := watchAgentStdin(agentIn, editorIn)
	var closeIn sync.Once
	closeAgentIn := func() { closeIn.Do(func() { stopWatch(); agentIn.Close() }) }

	// Editor → agent. Not waited for: its Read may block for as long as the editor keeps
	// stdin open. After finish, its writes fail (agentIn is closed) and it captures nothing.
	go func() {
		if err := copyLines(agentIn, cfg.Stdin, c2a); err != nil {
			log.Debug("editor to agent copy ended", "error", err)
			if errors.Is(err, errWrite) {
				editorIn()
			}
		}
		closeAgentIn() // editor EOF → agent sees EOF
	}()
	// Agent → editor. Closing agentOut afterwards makes a still-writing agent see EPIPE, as it
	// would if the editor had gone away.
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		if err := copyLines(cfg.Stdout, agentOut, a2c); err != nil {
			log.Debug("agent to editor copy ended", "error", err)
		}
		agentOut.Close()
	}()

	waitErr := cmd.Wait()
	close(ag.reaped)
	if ag.relay != nil {
		ag.relay.stop()
	}
	ag.group.terminate()
	drainAfterExit(outDone, agentOut, cfg.DrainTimeout, log)
	closeAgentIn()
	ag.group.end()

	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalGapWait)
	for _, c := range []*capture{a2c, c2a} {
		if l := c.finish(fctx.Done()); l != nil {
			log.Warn("capture gap could not be delivered", "dir", c.dir.String(),
				"lost_bytes", l.Bytes, "lost_lfs", l.LFs, "reason", captured.ReasonQueueFull)
		}
	}
	cancel()
	closeQueue(cfg.Queue, cfg.Doorbell)

	ps := cmd.ProcessState
	if ps == nil {
		return ExitCannotStart, fmt.Errorf("acptap: waiting for agent: %w", waitErr)
	}
	if waitErr != nil && !isExitError(waitErr) {
		log.Warn("waiting for agent", "error", waitErr)
	}
	code := statusCode(ps)
	log.Debug("agent exited", "pid", ps.Pid(), "code", code)
	return code, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Stdin == nil {
		cfg.Stdin = os.Stdin
	}
	if cfg.Stdout == nil {
		cfg.Stdout = os.Stdout
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = captured.DefaultQueueBytes
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	return cfg
}

// agent is a started agent process and our ends of its stdio pipes.
type agent struct {
	cmd   *exec.Cmd
	in    *os.File // we write, the agent reads
	out   *os.File // the agent writes, we read
	relay *signalRelay
	group *procGroup
	// reaped is closed once the agent is waited for: the thread that forked it may end.
	reaped chan struct{}
}

// start makes the two pipes and starts the agent on them. The agent inherits the pipe ends
// directly (no copying goroutine in between), and stderr too when it is an *os.File.
func start(ctx context.Context, cfg Config) (*agent, error) {
	fail := func(err error) error {
		return fmt.Errorf("acptap: cannot start agent %q: %w", cfg.Agent[0], err)
	}
	inR, inW, err := agentStdinPipe()
	if err != nil {
		return nil, fail(err)
	}
	outR, outW, err := readBlockingPipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fail(err)
	}
	cmd := exec.CommandContext(ctx, cfg.Agent[0], cfg.Agent[1:]...)
	cmd.Env, cmd.Dir = cfg.Env, cfg.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, cfg.Stderr
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = cancelAgent(cmd)    // ctx cancelled: the whole group goes
	cmd.WaitDelay = cfg.DrainTimeout // bounds the stderr copy when Stderr is not a file

	var relay *signalRelay
	if cfg.Signals {
		relay = newSignalRelay() // before Start: a signal during startup is relayed, not fatal
	}
	reaped := make(chan struct{})
	err = startOnOwnThread(cmd, reaped)
	inR.Close() // the agent holds its own copies now
	outW.Close()
	if err != nil {
		if relay != nil {
			relay.stop()
		}
		inW.Close()
		outR.Close()
		return nil, fail(err)
	}
	if cfg.OnStart != nil {
		cfg.OnStart(cmd.Process.Pid)
	}
	group := startGroup(cmd, cfg.Watchdog, cfg.Logger)
	if relay != nil {
		relay.start(group, cfg.Logger.Debug)
	}
	return &agent{cmd: cmd, in: inW, out: outR, relay: relay, group: group, reaped: reaped}, nil
}
