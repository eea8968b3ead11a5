package aepreceiver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/acptap/acptap/host/eventstream"
	"github.com/acptap/acptap/sdk/aep"
)

// helloTimeout bounds the wait for the client's hello.
const helloTimeout = 10 * time.Second

// maxSubscriptions bounds the subscriptions of one connection.
const maxSubscriptions = 64

// socket is one WebSocket connection (AEP-0003 §3.5): hello both ways,
// then events in (emitter), subscriptions out (consumer), pings.
type socket struct {
	s    *Server
	c    *websocket.Conn
	ctx  context.Context
	stop context.CancelFunc
	role string

	mu        sync.Mutex
	subs      map[string]*socketSub
	delivered map[[2]string]position // (sub, session) → last position sent
	closed    sync.Once
}

type socketSub struct {
	id   string
	live *eventstream.Sub[*item]
}

// frame is the shape of the frames the relay reads.
type frame struct {
	Type     string          `json:"type"`
	ID       string          `json:"id"`
	Versions []string        `json:"versions"`
	Role     string          `json:"role"`
	Filter   json.RawMessage `json:"filter"`
	From     json.RawMessage `json:"from"`
	Capture  string          `json:"capture"`
	T        any             `json:"t"`
}

// serveSocket is GET /socket. The guard has already checked Host, Origin
// and the token, so the library's same-origin check (which would refuse
// a loopback page on another port) is off.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	c.SetReadLimit(s.opts.MaxBody)
	// The connection's own context: the library closes the connection
	// when a read's context ends, so shutdown goes through closing instead.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	k := &socket{s: s, c: c, ctx: ctx, stop: stop, subs: map[string]*socketSub{}, delivered: map[[2]string]position{}}
	defer k.closeSubs()
	defer context.AfterFunc(s.ctx, func() { k.closing("shutting-down", websocket.StatusGoingAway) })()
	if !k.hello() {
		return
	}
	go k.pinger()
	err = k.readLoop()
	switch {
	case s.ctx.Err() != nil:
		k.closing("shutting-down", websocket.StatusGoingAway)
	case errors.Is(err, errBinary):
		_ = c.Close(websocket.StatusUnsupportedData, "binary frames are reserved in AEP 0.1")
	default:
		_ = c.CloseNow()
	}
}

var errBinary = errors.New("binary frame")

func (k *socket) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return k.write(b)
}

func (k *socket) write(b []byte) error {
	ctx, cancel := context.WithTimeout(k.ctx, orDefault(k.s.opts.WriteTimeout, eventstream.DefaultWriteTimeout))
	defer cancel()
	return k.c.Write(ctx, websocket.MessageText, b)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (k *socket) fail(code, detail string) {
	_ = k.send(map[string]any{"type": "error", "code": code, "detail": detail, "versions": []string{aep.Version}})
	_ = k.c.Close(websocket.StatusPolicyViolation, code)
}

// hello reads the client's hello and answers with the relay's: one
// version from the intersection, the relay's capabilities.
func (k *socket) hello() bool {
	ctx, cancel := context.WithTimeout(k.ctx, helloTimeout)
	defer cancel()
	typ, b, err := k.c.Read(ctx)
	if err != nil {
		_ = k.c.CloseNow()
		return false
	}
	var f frame
	if typ != websocket.MessageText || json.Unmarshal(b, &f) != nil || f.Type != "hello" {
		k.fail("hello-required", "the first frame must be hello")
		return false
	}
	if !slices.ContainsFunc(f.Versions, supportedVersion) {
		k.fail("version-unsupported", fmt.Sprintf("no common version in %q", f.Versions))
		return false
	}
	switch f.Role {
	case "emitter", "consumer", "both":
		k.role = f.Role
	default:
		k.role = "consumer"
	}
	host, _ := os.Hostname()
	return k.send(map[string]any{
		"type": "hello", "versions": []string{aep.Version}, "role": "both",
		"identity":     map[string]any{"agent": "acptap-relay", "instance": fmt.Sprintf("%s/%d", host, os.Getpid())},
		"capabilities": k.s.Capabilities(),
	}) == nil
}

// pinger sends a ping frame every Ping (AEP-0003 §3.5 liveness).
func (k *socket) pinger() {
	t := time.NewTicker(k.s.opts.Ping)
	defer t.Stop()
	for {
		select {
		case <-k.ctx.Done():
			return
		case now := <-t.C:
			if k.send(map[string]any{"type": "ping", "t": now.UnixMilli()}) != nil {
				k.stop()
				return
			}
		}
	}
}

func (k *socket) readLoop() error {
	for {
		typ, b, err := k.c.Read(k.ctx)
		if err != nil {
			return err
		}
		if typ != websocket.MessageText {
			return errBinary
		}
		var f frame
		if err := json.Unmarshal(b, &f); err != nil {
			_ = k.send(map[string]any{"type": "error", "code": "invalid-frame", "detail": "a frame is one JSON object"})
			continue
		}
		if strings.Contains(f.Type, ".") {
			k.event(bytes.TrimSpace(b))
			continue
		}
		switch f.Type {
		case "subscribe":
			k.subscribe(f)
		case "unsubscribe":
			k.mu.Lock()
			sub, ok := k.subs[f.ID]
			delete(k.subs, f.ID)
			k.mu.Unlock()
			if ok {
				sub.live.Close()
			}
			_ = k.send(map[string]any{"type": "unsubscribed", "id": f.ID})
		case "ping":
			_ = k.send(map[string]any{"type": "pong", "t": f.T})
		}
		// other frames (pong, roster, closing, unknown) are ignored (§2)
	}
}

// event ingests an event sent on the socket, as POST /events would.
func (k *socket) event(line []byte) {
	if k.role == "consumer" {
		_ = k.send(map[string]any{"type": "error", "code": "unauthorized", "detail": "a consumer connection does not emit events"})
		return
	}
	_, _, refused, storeErr := k.s.admit([][]byte{line})
	switch {
	case storeErr != nil:
		_ = k.send(map[string]any{"type": "error", "code": "store-failed", "detail": storeErr.Error()})
	case len(refused) > 0:
		_ = k.send(map[string]any{"type": "error", "code": "invalid-event", "id": refused[0].ID, "detail": refused[0].Detail})
	}
}

func (k *socket) refuse(id, code, detail string) {
	_ = k.send(map[string]any{"type": "error", "id": id, "code": code, "detail": detail})
}

// subscribe answers subscribed or an in-band error from the closed set
// (AEP-0003 §6.5), then replays and delivers in its own goroutine.
func (k *socket) subscribe(f frame) {
	if k.role == "emitter" {
		k.refuse(f.ID, "unauthorized", "an emitter connection does not subscribe")
		return
	}
	if f.ID == "" {
		k.refuse(f.ID, "invalid-filter", "subscribe needs an id")
		return
	}
	from := ""
	if len(f.From) > 0 && string(f.From) != "null" {
		var all string
		if json.Unmarshal(f.From, &all) == nil {
			from = all
			if all != "all" {
				k.refuse(f.ID, "invalid-filter", `from is "all" or an array of {session, epoch, seq}`)
				return
			}
		} else {
			from = string(f.From)
		}
	}
	filter := ""
	if len(f.Filter) > 0 && string(f.Filter) != "null" {
		filter = string(f.Filter)
	}
	sub, err := k.s.ParseSubscription(filter, f.Capture, from, "")
	if err != nil {
		code := "invalid-filter"
		if errors.Is(err, errLimit) {
			code = "limit-exceeded"
		}
		k.refuse(f.ID, code, err.Error())
		return
	}
	k.mu.Lock()
	_, taken := k.subs[f.ID]
	n := len(k.subs)
	k.mu.Unlock()
	switch {
	case taken:
		k.refuse(f.ID, "invalid-filter", "a subscription with this id is live")
		return
	case n >= maxSubscriptions:
		k.refuse(f.ID, "limit-exceeded", fmt.Sprintf("at most %d subscriptions per connection", maxSubscriptions))
		return
	}
	plan, live := k.s.open(sub)
	ss := &socketSub{id: f.ID, live: live}
	k.mu.Lock()
	k.subs[f.ID] = ss
	k.mu.Unlock()
	if k.send(map[string]any{"type": "subscribed", "id": f.ID}) != nil {
		return
	}
	go k.deliver(sub, ss, plan)
}

func (k *socket) deliver(sub *Subscription, ss *socketSub, plan []replayPart) {
	var dropped uint64
	emit := func(it *item) error {
		if d := ss.live.Dropped(); d > dropped {
			// Declared, never silent: an acptap frame (unknown frame
			// types are ignored by AEP peers, §2).
			if err := k.send(map[string]any{"type": "dropped", "sub": ss.id, "count": d - dropped}); err != nil {
				return err
			}
			dropped = d
		}
		b := sub.message(it)
		if b == nil {
			return nil
		}
		if err := k.write(b); err != nil {
			return err
		}
		if it.hasPos {
			k.mu.Lock()
			k.delivered[[2]string{ss.id, it.session}] = it.pos
			k.mu.Unlock()
		}
		return nil
	}
	err := sub.replay(plan, func(p replayPart) error {
		return k.send(map[string]any{"type": "replay-exhausted", "sub": ss.id, "session": p.session,
			"earliest": map[string]any{"epoch": p.earliest.epoch, "seq": p.earliest.seq}})
	}, emit)
	for err == nil {
		select {
		case <-k.ctx.Done():
			return
		case it := <-ss.live.C():
			err = emit(it)
		case <-ss.live.Done():
			for drained := false; !drained && err == nil; {
				select {
				case it := <-ss.live.C():
					err = emit(it)
				default:
					drained = true
				}
			}
			if errors.Is(ss.live.Err(), eventstream.ErrOverflow) {
				// Deliver or disconnect (AEP-0003 §8.4): the consumer resumes from the positions.
				k.closing("overflow: the consumer fell behind", websocket.StatusTryAgainLater)
			}
			return
		}
	}
	k.stop()
}

// closing sends the closing frame with the positions delivered per
// subscription, then closes (AEP-0003 §3.5 rule 4).
func (k *socket) closing(reason string, code websocket.StatusCode) {
	k.closed.Do(func() { k.close(reason, code) })
}

func (k *socket) close(reason string, code websocket.StatusCode) {
	k.mu.Lock()
	var delivered []map[string]any
	for key, p := range k.delivered {
		delivered = append(delivered, map[string]any{"sub": key[0], "session": key[1], "epoch": p.epoch, "seq": p.seq})
	}
	k.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"type": "closing", "reason": reason, "delivered": delivered})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = k.c.Write(ctx, websocket.MessageText, b)
	_ = k.c.Close(code, reason)
	k.stop()
}

func (k *socket) closeSubs() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for id, sub := range k.subs {
		sub.live.Close()
		delete(k.subs, id)
	}
}
