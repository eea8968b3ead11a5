package eventstream

import (
	"errors"
	"sync"
)

// ErrOverflow closes a subscription whose queue was full when an item
// that may not be dropped arrived: the consumer is disconnected (and
// resumes) rather than silently missing it.
var ErrOverflow = errors.New("subscriber too slow: queue full")

// ErrClosed closes every subscription when the hub closes.
var ErrClosed = errors.New("event stream closed")

// Policy decides, per subscription, what a published item becomes.
type Policy[T any] struct {
	// Accept returns the item to queue (possibly rewritten) and whether
	// the subscriber wants it at all. Nil accepts everything unchanged.
	Accept func(T) (T, bool)
	// Droppable reports whether an item may be dropped (and counted) when
	// the queue is full; otherwise the subscription closes with
	// ErrOverflow. Nil: nothing is droppable.
	Droppable func(T) bool
	// Capacity bounds the queue (default 1024).
	Capacity int
}

// Hub fans items out to subscribers. Publish never blocks: each
// subscriber has a bounded queue. Safe for concurrent use.
type Hub[T any] struct {
	mu     sync.Mutex
	subs   map[*Sub[T]]struct{}
	closed bool
}

// NewHub returns an empty hub.
func NewHub[T any]() *Hub[T] { return &Hub[T]{subs: map[*Sub[T]]struct{}{}} }

// Sub is one subscription: read C until Done is closed, then Err says why.
type Sub[T any] struct {
	hub    *Hub[T]
	policy Policy[T]
	c      chan T
	done   chan struct{}

	mu      sync.Mutex
	err     error
	dropped uint64
}

// Subscribe adds a subscriber. Items published from now on reach it.
func (h *Hub[T]) Subscribe(p Policy[T]) *Sub[T] {
	if p.Capacity <= 0 {
		p.Capacity = 1024
	}
	s := &Sub[T]{hub: h, policy: p, c: make(chan T, p.Capacity), done: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.end(ErrClosed)
		return s
	}
	h.subs[s] = struct{}{}
	return s
}

// Publish offers item to every subscriber.
func (h *Hub[T]) Publish(item T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		v, ok := item, true
		if s.policy.Accept != nil {
			v, ok = s.policy.Accept(item)
		}
		if !ok {
			continue
		}
		select {
		case s.c <- v:
			continue
		default:
		}
		if s.policy.Droppable != nil && s.policy.Droppable(v) {
			s.mu.Lock()
			s.dropped++
			s.mu.Unlock()
			continue
		}
		delete(h.subs, s)
		s.end(ErrOverflow)
	}
}

// Len is the number of live subscriptions.
func (h *Hub[T]) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Close ends every subscription with ErrClosed; later subscriptions end
// at once.
func (h *Hub[T]) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		delete(h.subs, s)
		s.end(ErrClosed)
	}
}

// C delivers the queued items.
func (s *Sub[T]) C() <-chan T { return s.c }

// Done is closed when the subscription ends; what is still queued in C
// may be read first.
func (s *Sub[T]) Done() <-chan struct{} { return s.done }

// Err is why the subscription ended (nil while it is live or after
// Close by its owner).
func (s *Sub[T]) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Dropped counts the droppable items that found the queue full.
func (s *Sub[T]) Dropped() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Close unsubscribes.
func (s *Sub[T]) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	delete(s.hub.subs, s)
	s.end(nil)
}

// end closes done once; the hub's lock is held.
func (s *Sub[T]) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return
	default:
	}
	s.err = err
	close(s.done)
}
