package rebuild

import (
	"context"
	"sync"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/wire"
)

// pool keeps the plugin processes of a rebuild for its whole run: a plugin
// serves one mapping session per connection (each its own Map stream), so
// after a connection mapped to the end its process maps the next one
// instead of a new process being started and handshaken per connection,
// which is most of a small connection's cost. A plugin that failed is
// killed as always, and the next launch starts a new one.
type pool struct {
	launch   pipeline.Launcher
	mu       sync.Mutex
	idle     map[string][]*pipeline.Plugin
	starting map[string]chan struct{} // prelaunches under way
}

func newPool(launch pipeline.Launcher) *pool {
	return &pool{launch: launch, idle: map[string][]*pipeline.Plugin{}, starting: map[string]chan struct{}{}}
}

// prelaunch starts the named plugins in the background, for the first
// connection to take (its plugins fork, handshake and warm up while the
// rebuild still plans, imports and scans); a failure is left to the
// connection's own launch, which tries again and reports it. A plugin no
// connection takes is killed by close.
func (p *pool) prelaunch(ctx context.Context, names []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, name := range names {
		if len(p.idle[name]) > 0 || p.starting[name] != nil {
			continue
		}
		ch := make(chan struct{})
		p.starting[name] = ch
		go func() {
			pl, err := p.launch(ctx, name)
			p.mu.Lock()
			defer p.mu.Unlock()
			if err == nil {
				p.idle[name] = append(p.idle[name], pl)
			}
			delete(p.starting, name)
			close(ch)
		}()
	}
}

// Launch is a pipeline.Launcher.
func (p *pool) Launch(ctx context.Context, name string) (*pipeline.Plugin, error) {
	p.mu.Lock()
	if ch := p.starting[name]; ch != nil {
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		p.mu.Lock()
	}
	var pl *pipeline.Plugin
	if l := p.idle[name]; len(l) > 0 {
		pl, p.idle[name] = l[len(l)-1], l[:len(l)-1]
	}
	p.mu.Unlock()
	if pl == nil {
		var err error
		if pl, err = p.launch(ctx, name); err != nil {
			return nil, err
		}
	}
	out := *pl
	out.Release = func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.idle[name] = append(p.idle[name], pl)
	}
	return &out, nil
}

// close kills every idle plugin (waiting for the prelaunches first).
func (p *pool) close() {
	p.mu.Lock()
	for len(p.starting) > 0 {
		var ch chan struct{}
		for _, ch = range p.starting {
			break
		}
		p.mu.Unlock()
		<-ch
		p.mu.Lock()
	}
	defer p.mu.Unlock()
	for name, l := range p.idle {
		for _, pl := range l {
			if pl.Kill != nil {
				pl.Kill()
			}
		}
		delete(p.idle, name)
	}
}

// peekRevision reads the revision entry near the start of a wire log (the
// recorder writes it once the initialize exchange decided it), without
// reading on past the first frames.
func peekRevision(path string) (string, bool) {
	r, err := wire.Open(path)
	if err != nil {
		return "", false
	}
	defer r.Close()
	for range 64 {
		if _, err := r.Next(); err != nil {
			break
		}
		if rev, ok := r.Revision(); ok {
			return rev.Revision, true
		}
	}
	return "", false
}
