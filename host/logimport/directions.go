package logimport

import (
	"encoding/json"
	"fmt"

	"github.com/acptap/acptap/sdk"
)

// pendingCap bounds the unanswered requests remembered per direction; past
// it the oldest are forgotten (their responses are then placed by their
// result members, or skipped).
const pendingCap = 1 << 16

// directions infers the direction of JSON-RPC messages without one: a
// request or notification from its method; a response from the request it
// answers (both sides number their requests, so an id may be pending both
// ways).
type directions struct {
	pending [3]map[string]uint64 // by the request's direction: id → order
	order   [3][]pendingID       // oldest first, possibly stale
	next    uint64
	cap     int
}

type pendingID struct {
	id    string
	order uint64
}

func newDirections(capacity int) *directions {
	d := &directions{cap: capacity}
	d.pending[sdk.C2A] = map[string]uint64{}
	d.pending[sdk.A2C] = map[string]uint64{}
	return d
}

func opposite(dir sdk.Direction) sdk.Direction {
	if dir == sdk.C2A {
		return sdk.A2C
	}
	return sdk.C2A
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// infer returns the message's direction, or why it cannot be told.
func (d *directions) infer(p *probe) (sdk.Direction, string) {
	if p.Method != nil {
		method := *p.Method
		dir, ok := methodDir[method]
		if method == cancelRequest && p.paramsFields() != nil {
			// The side that sent the request cancels it.
			if id := string(p.paramsFields().RequestID); id != "" {
				_, c2a := d.pending[sdk.C2A][id]
				_, a2c := d.pending[sdk.A2C][id]
				switch {
				case c2a && !a2c:
					dir, ok = sdk.C2A, true
				case a2c && !c2a:
					dir, ok = sdk.A2C, true
				}
			}
		}
		if !ok {
			return 0, fmt.Sprintf("method %q is not in the ACP v1 method table: its direction is unknown", clip(method, 80))
		}
		if !isNull(p.ID) {
			d.add(dir, string(p.ID))
		}
		return dir, ""
	}
	id := string(p.ID)
	o1, c2a := d.pending[sdk.C2A][id] // a request to the agent: answered a2c
	o2, a2c := d.pending[sdk.A2C][id]
	var dir sdk.Direction
	switch {
	case c2a && !a2c:
		dir = sdk.A2C
	case a2c && !c2a:
		dir = sdk.C2A
	default:
		dir = resultDir(p.Result)
		if dir == 0 && c2a && a2c {
			// Both sides await an answer with this id: the later request is
			// the nested one, answered first.
			dir = sdk.A2C
			if o2 > o1 {
				dir = sdk.C2A
			}
		}
		if dir == 0 {
			return 0, fmt.Sprintf("a response (id %s) to no request seen earlier: its direction is unknown", clip(id, 40))
		}
	}
	delete(d.pending[opposite(dir)], id)
	return dir, ""
}

// resultDir places a response by the members its result has.
func resultDir(result json.RawMessage) sdk.Direction {
	var r fields
	if !decodeFields(result, &r) {
		return 0
	}
	for _, k := range resultKeys {
		if r.has(k.key) {
			return k.dir
		}
	}
	return 0
}

func (d *directions) add(dir sdk.Direction, id string) {
	d.next++
	d.pending[dir][id] = d.next
	d.order[dir] = append(d.order[dir], pendingID{id, d.next})
	if len(d.pending[dir]) > d.cap {
		// Forget the oldest request still pending.
		q := d.order[dir]
		for len(q) > 0 {
			oldest := q[0]
			q = q[1:]
			if o, ok := d.pending[dir][oldest.id]; ok && o == oldest.order {
				delete(d.pending[dir], oldest.id)
				break
			}
		}
		d.order[dir] = q
	}
	if len(d.order[dir]) > 2*d.cap+16 {
		// Drop the answered entries from the queue.
		q := d.order[dir][:0]
		for _, e := range d.order[dir] {
			if o, ok := d.pending[dir][e.id]; ok && o == e.order {
				q = append(q, e)
			}
		}
		d.order[dir] = append([]pendingID(nil), q...)
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
