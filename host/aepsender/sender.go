package aepsender

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Start begins sending in the background, until Shutdown.
func (o *Outbox) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	o.mu.Lock()
	o.stop, o.started = cancel, true
	o.mu.Unlock()
	go o.run(ctx)
}

// Shutdown stops taking events and waits, until ctx is done, for the
// outbox to drain; then it abandons what is left (counted as Unsent) and
// returns the final counters. It is idempotent.
func (o *Outbox) Shutdown(ctx context.Context) (Stats, error) {
	o.mu.Lock()
	started := o.started
	o.closing = true
	o.mu.Unlock()
	if !started {
		return o.Stats(), ErrNotStarted
	}
	o.once.Do(func() {
		select {
		case o.wake <- struct{}{}:
		default:
		}
		for !o.empty() {
			select {
			case <-o.idle:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				break
			}
		}
		o.stop()
		<-o.done
		o.mu.Lock()
		o.stats.Unsent += uint64(len(o.queue) + o.inflight)
		o.queue, o.inflight = nil, 0
		o.mu.Unlock()
	})
	return o.Stats(), nil
}

func (o *Outbox) empty() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.queue) == 0 && o.inflight == 0
}

// take moves up to n events from the head of the queue to in flight.
func (o *Outbox) take(n int) []item {
	o.mu.Lock()
	defer o.mu.Unlock()
	n = min(n, len(o.queue))
	batch := append([]item(nil), o.queue[:n]...)
	o.queue = o.queue[n:]
	o.inflight += n
	return batch
}

// settle ends an attempt: delivered and rejected events leave, the rest go
// back to the head of the queue, in order.
func (o *Outbox) settle(batch []item, delivered, rejected bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inflight -= len(batch)
	switch {
	case delivered:
		o.stats.Delivered += uint64(len(batch))
	case rejected:
		o.stats.Rejected += uint64(len(batch))
	default:
		o.queue = append(batch, o.queue...)
	}
	if len(o.queue) == 0 && o.inflight == 0 {
		select {
		case o.idle <- struct{}{}:
		default:
		}
	}
}

// run is the sender: batches from the head of the queue, in order; a
// failed batch is retried, with the same events, after a backoff.
func (o *Outbox) run(ctx context.Context) {
	defer close(o.done)
	backoff := o.opts.MinBackoff
	batchMax := o.opts.BatchMax
	solo := 0 // events at the head to send one by one (isolating a refused line)
	down := false
	authWarned := false
	for {
		n := batchMax
		if solo > 0 {
			n = 1
		}
		batch := o.take(n)
		if len(batch) == 0 {
			select {
			case <-o.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		status, body, err := o.post(ctx, batch)
		switch {
		case err == nil && status/100 == 2:
			o.settle(batch, true, false)
			if solo > 0 {
				solo--
			}
			backoff = o.opts.MinBackoff
			if down {
				down = false
				o.log.Info("aep relay reachable again", "relay", o.opts.Base)
			}
			continue
		case err == nil && (status == http.StatusUnauthorized || status == http.StatusForbidden):
			// A missing or wrong token refuses every event alike: no line
			// by line isolation; each is counted as rejected.
			o.settle(batch, false, true)
			solo = max(0, solo-len(batch))
			if !authWarned {
				authWarned = true
				o.log.Error("aep relay refused the token (set aep.relay_token or aep.relay_token_file); events are counted as rejected",
					"relay", o.opts.Base, "status", status)
			}
			continue
		case err == nil && status == http.StatusRequestEntityTooLarge && len(batch) > 1:
			o.settle(batch, false, false)
			batchMax = max(1, len(batch)/2)
			continue
		case err == nil && status/100 == 4 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests:
			if len(batch) > 1 {
				o.settle(batch, false, false)
				solo = len(batch)
				continue
			}
			o.settle(batch, false, true)
			if solo > 0 {
				solo--
			}
			o.log.Warn("aep relay refused an event; not retried", "status", status, "answer", body)
			continue
		}
		o.settle(batch, false, false)
		if ctx.Err() != nil {
			return
		}
		o.mu.Lock()
		o.stats.Retries++
		o.mu.Unlock()
		if !down {
			down = true
			why := fmt.Sprintf("status %d %s", status, body)
			if err != nil {
				why = err.Error()
			}
			o.log.Warn("aep relay unreachable; events wait in the outbox and are retried", "relay", o.opts.Base, "error", why)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		backoff = min(2*backoff, o.opts.MaxBackoff)
	}
}

// post sends one NDJSON batch.
func (o *Outbox) post(ctx context.Context, batch []item) (int, string, error) {
	var body bytes.Buffer
	for _, it := range batch {
		body.Write(it.line)
		body.WriteByte('\n')
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, &body)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("AEP-Version", "0.1")
	req.Header.Set("Content-Type", "application/x-ndjson")
	if o.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+o.opts.Token)
	}
	resp, err := o.opts.Client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return resp.StatusCode, string(bytes.TrimSpace(b)), nil
}
