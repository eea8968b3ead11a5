package eventstream

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHubDropsDroppableAndClosesOnTheRest: a full queue drops (and
// counts) what the policy allows; anything else closes the subscription
// with ErrOverflow, what was queued still readable in order. Publish
// never blocks.
func TestHubDropsDroppableAndClosesOnTheRest(t *testing.T) {
	h := NewHub[int]()
	sub := h.Subscribe(Policy[int]{Capacity: 2, Droppable: func(i int) bool { return i < 100 }})
	other := h.Subscribe(Policy[int]{Accept: func(i int) (int, bool) { return i * 2, i%2 == 0 }})
	for _, i := range []int{1, 2, 3, 4, 500, 6} {
		h.Publish(i)
	}
	if got := sub.Dropped(); got != 2 {
		t.Errorf("dropped %d, want 2 (3 and 4)", got)
	}
	<-sub.Done()
	if !errors.Is(sub.Err(), ErrOverflow) {
		t.Errorf("err %v", sub.Err())
	}
	if a, b := <-sub.C(), <-sub.C(); a != 1 || b != 2 {
		t.Errorf("queued %d %d", a, b)
	}
	if h.Len() != 1 {
		t.Errorf("%d subscriptions left", h.Len())
	}
	for _, want := range []int{4, 8, 1000, 12} {
		if got := <-other.C(); got != want {
			t.Errorf("accepted %d, want %d", got, want)
		}
	}
	h.Close()
	<-other.Done()
	if !errors.Is(other.Err(), ErrClosed) {
		t.Errorf("after Close: %v", other.Err())
	}
	if late := h.Subscribe(Policy[int]{}); late.Err() != ErrClosed {
		t.Errorf("subscribe after Close: %v", late.Err())
	}
}

// TestPumpDeclaresDrops: items dropped for a full queue are announced
// in a comment before the next item.
func TestPumpDeclaresDrops(t *testing.T) {
	h := NewHub[int]()
	rec := httptest.NewRecorder()
	s, _ := NewSSE(rec, 0)
	sub := h.Subscribe(Policy[int]{Capacity: 1, Droppable: func(int) bool { return true }})
	h.Publish(1)
	h.Publish(2)
	h.Publish(3)
	h.Close()
	if err := Pump(t.Context(), s, sub, time.Hour, func(i int) (Message, bool) {
		return Message{Data: []byte{byte('0' + i)}}, true
	}); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
	if got := rec.Body.String(); got != ": dropped 2 (the consumer's queue was full)\n\ndata: 1\n\n" {
		t.Fatalf("%q", got)
	}
}

// TestSSEFramingAndPump: messages are framed as event/id/data lines (a
// multi-line data becomes several data: fields, an LF in a field is
// neutralised), pings go out on an idle stream, and Pump ends with the
// subscription's error.
func TestSSEFramingAndPump(t *testing.T) {
	h := NewHub[string]()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := NewSSE(w, 0)
		if err != nil {
			t.Error(err)
			return
		}
		sub := h.Subscribe(Policy[string]{})
		err = Pump(r.Context(), s, sub, 20*time.Millisecond, func(v string) (Message, bool) {
			return Message{Event: "t\nx", ID: "1", Data: []byte(v)}, v != "skip"
		})
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Pump: %v", err)
		}
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	buf := make([]byte, 64)
	n, _ := io.ReadAtLeast(resp.Body, buf, len(": ping\n\n"))
	if string(buf[:n]) != ": ping\n\n" {
		t.Fatalf("idle stream: %q", buf[:n])
	}
	for h.Len() == 0 {
		time.Sleep(time.Millisecond)
	}
	h.Publish("skip")
	h.Publish("a\nb")
	h.Close()
	rest, _ := io.ReadAll(resp.Body)
	msg := "event: t x\nid: 1\ndata: a\ndata: b\n\n"
	if got := strings.ReplaceAll(string(rest), ": ping\n\n", ""); got != msg {
		t.Fatalf("got %q, want %q", got, msg)
	}
}
