package rebuild

import (
	"fmt"
	"io"
	"time"
)

// progress rewrites one line on a terminal: connections, frames, MB/s.
type progress struct {
	w           io.Writer
	total       int
	totalBytes  int64
	done        int
	bytes       int64
	frames      uint64
	start, last time.Time
}

func newProgress(w io.Writer, total int, totalBytes int64) *progress {
	return &progress{w: w, total: total, totalBytes: totalBytes, start: time.Now()}
}

func (p *progress) step(bytes int64, frames uint64) {
	p.done++
	p.bytes += bytes
	p.frames += frames
	if p.w == nil || (time.Since(p.last) < 100*time.Millisecond && p.done < p.total) {
		return
	}
	p.last = time.Now()
	mbs := float64(p.bytes) / 1e6 / max(time.Since(p.start).Seconds(), 1e-9)
	fmt.Fprintf(p.w, "\rrebuild: %d/%d connections, %d frames, %.1f/%.1f MB, %.1f MB/s ", p.done, p.total, p.frames,
		float64(p.bytes)/1e6, float64(p.totalBytes)/1e6, mbs)
}

func (p *progress) end() {
	if p.w != nil && p.done > 0 {
		fmt.Fprintln(p.w)
	}
}
