package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/acptap/acptap/host/logimport"
	"github.com/acptap/acptap/host/transcript/term"
)

// progressBar redraws one status line on a terminal, at most ten times a
// second: the input, how much of it is read, bytes and records per second,
// and the outputs so far.
type progressBar struct {
	w      io.Writer
	p      *logimport.Progress
	mu     sync.Mutex
	done   chan struct{}
	wg     sync.WaitGroup
	last   string
	active bool
}

func startProgress(w io.Writer, p *logimport.Progress) *progressBar {
	b := &progressBar{w: w, p: p, done: make(chan struct{})}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-b.done:
				return
			case <-t.C:
				b.draw()
			}
		}
	}()
	return b
}

func (b *progressBar) draw() {
	line := progressLine(b.p, time.Now())
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.active || line == "" || line == b.last {
		return
	}
	b.last = line
	fmt.Fprintf(b.w, "\r\x1b[K%s", line)
}

// pause erases the status line and stops redrawing it (while a summary is
// printed); resume redraws it again.
func (b *progressBar) pause() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active = false
	if b.last != "" {
		fmt.Fprint(b.w, "\r\x1b[K")
		b.last = ""
	}
}

func (b *progressBar) resume() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active = true
}

func (b *progressBar) stop() {
	if b == nil {
		return
	}
	close(b.done)
	b.wg.Wait()
	b.pause()
}

// progressLine renders the progress of the input being converted.
func progressLine(p *logimport.Progress, now time.Time) string {
	name := p.Name()
	if name == "" {
		return ""
	}
	elapsed := now.Sub(time.Unix(0, p.Started.Load())).Seconds()
	if elapsed <= 0 {
		elapsed = 1e-9
	}
	read, size, frames := p.Read.Load(), p.Size.Load(), p.Frames.Load()
	if name == "-" {
		name = "(stdin)"
	}
	name = term.Clip(filepath.Base(name), 32)
	outs := p.Outputs.Load()
	if p.Mapping.Load() {
		pct := ""
		if frames > 0 {
			pct = fmt.Sprintf(" about %.0f%% of", 100*min(1, float64(p.Mapped.Load())/float64(frames)))
		}
		return fmt.Sprintf("%s: read; the plugins are mapping%s %s records · %s outputs", name, pct, human(float64(frames)), human(float64(outs)))
	}
	pct := ""
	if size > 0 {
		pct = fmt.Sprintf(" %3.0f%%", 100*float64(read)/float64(size))
	}
	return fmt.Sprintf("%s:%s %s/%s · %s/s · %s records (%s/s) · %s outputs", name, pct,
		bytesHuman(read), bytesHuman(size), bytesHuman(int64(float64(read)/elapsed)),
		human(float64(frames)), human(float64(frames)/elapsed), human(float64(outs)))
}

func bytesHuman(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
