package logimport

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/storesink"
	"github.com/acptap/acptap/internal/jsonscan"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// countingSink counts what the plugins produce, by record and event type,
// and the losses the streams declare, before the store sink writes it.
type countingSink struct {
	inner *storesink.Sink
	prog  *Progress

	mu      sync.Mutex
	through map[string]uint64 // per plugin: the highest wire seq an output came from
	headers int
	asr     map[string]int
	aep     map[string]int
	losses  map[string]bool
}

var _ pipeline.Sink = (*countingSink)(nil)

func newCountingSink(inner *storesink.Sink, prog *Progress) *countingSink {
	return &countingSink{inner: inner, prog: prog, asr: map[string]int{}, aep: map[string]int{}, losses: map[string]bool{},
		through: map[string]uint64{}}
}

// outputHead is the part of an ASR line that declares losses.
type outputHead struct {
	Lossy    []string `json:"lossy"`
	Producer *struct {
		Lossy []string `json:"lossy"`
	} `json:"producer"`
}

func (c *countingSink) Output(plugin string, primary bool, o sdk.Output) {
	c.inner.Output(plugin, primary, o)
	if o.Kind != sdk.ASRHeader && o.Kind != sdk.ASRRecord && o.Kind != sdk.AEPEvent {
		return
	}
	// The type is read without decoding the output; only lines that declare
	// losses are decoded.
	typ, _ := jsonscan.String(member(o.JSON, "type"))
	var h outputHead
	if o.Kind != sdk.AEPEvent && bytes.Contains(o.JSON, []byte(`"lossy"`)) {
		_ = json.Unmarshal(o.JSON, &h)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch o.Kind {
	case sdk.AEPEvent:
		c.aep[typ]++
	case sdk.ASRHeader:
		c.headers++
		if h.Producer != nil {
			c.addLosses(h.Producer.Lossy)
		}
	default:
		c.asr[typ]++
		c.addLosses(h.Lossy)
	}
	if c.prog != nil {
		c.prog.Outputs.Add(1)
		for _, seq := range o.FrameSeqs {
			c.through[plugin] = max(c.through[plugin], seq)
		}
		slowest := uint64(0)
		for _, seq := range c.through {
			if slowest == 0 || seq < slowest {
				slowest = seq
			}
		}
		c.prog.Mapped.Store(int64(slowest))
	}
}

func (c *countingSink) addLosses(l []string) {
	for _, k := range l {
		c.losses[k] = true
	}
}

func (c *countingSink) Gap(plugin string, primary bool, through uint64, reason string) {
	c.inner.Gap(plugin, primary, through, reason)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.losses[asr.LossUnmappedFrames] = true
}

func (c *countingSink) fill(r *Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.ASRStreams = c.headers
	for k, v := range c.asr {
		r.ASRTypes[k] = v
	}
	for k, v := range c.aep {
		r.AEPTypes[k] = v
	}
	r.Losses = r.Losses[:0]
	for k := range c.losses {
		r.Losses = append(r.Losses, k)
	}
	slices.Sort(r.Losses)
}
