package logimport

import (
	"context"
	"sync"

	"github.com/acptap/acptap/host/pipeline"
)

// prelaunched starts a conversion's plugins before its pipeline does, so
// that their fork, handshake and warm-up (acpv1 compiles its schemas)
// overlap the digest pass instead of following it. The pipeline's first
// launch of a name takes the plugin started for it; a restart launches a
// new one. close kills the plugins no launch took.
type prelaunched struct {
	launch pipeline.Launcher
	mu     sync.Mutex
	starts map[string]*start
}

type start struct {
	done  chan struct{}
	pl    *pipeline.Plugin
	err   error
	taken bool
}

// prelaunch starts the named plugins (the revision's configured ones).
func prelaunch(ctx context.Context, launch pipeline.Launcher, names []string) *prelaunched {
	p := &prelaunched{launch: launch, starts: map[string]*start{}}
	for _, name := range names {
		if p.starts[name] != nil {
			continue
		}
		s := &start{done: make(chan struct{})}
		p.starts[name] = s
		go func() {
			defer close(s.done)
			s.pl, s.err = launch(ctx, name)
		}()
	}
	return p
}

// Launch is a pipeline.Launcher: the plugin started for name the first
// time, or that launch's error (the pipeline treats it as its own launch
// failing); a new launch after.
func (p *prelaunched) Launch(ctx context.Context, name string) (*pipeline.Plugin, error) {
	p.mu.Lock()
	s := p.starts[name]
	first := s != nil && !s.taken
	if first {
		s.taken = true
	}
	p.mu.Unlock()
	if !first {
		return p.launch(ctx, name)
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		// Not handed over: close kills it once its launch ends.
		p.mu.Lock()
		s.taken = false
		p.mu.Unlock()
		return nil, ctx.Err()
	}
	return s.pl, s.err
}

// close kills the plugins started and not taken (waiting for their
// launches to end).
func (p *prelaunched) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.starts {
		if s.taken {
			continue
		}
		s.taken = true
		<-s.done
		if s.err == nil && s.pl != nil && s.pl.Kill != nil {
			s.pl.Kill()
		}
	}
}
