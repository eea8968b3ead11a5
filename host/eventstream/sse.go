package eventstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// DefaultPing is the heartbeat interval: AEP-0003 §3.3 asks for a comment
// at least every 30 s.
const DefaultPing = 15 * time.Second

// DefaultWriteTimeout bounds one write to a consumer: a consumer that
// stops reading is disconnected instead of holding the server.
const DefaultWriteTimeout = 30 * time.Second

// Message is one SSE message. Data may hold LFs (each line becomes a
// data: field); ID and Event are omitted when empty.
type Message struct {
	Event string
	ID    string
	Data  []byte
}

// SSE writes a text/event-stream response.
type SSE struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	writeTimeout time.Duration
	buf          bytes.Buffer
}

// NewSSE writes the 200 response head of an event stream (no caching, no
// proxy buffering) and flushes it. writeTimeout bounds each later write
// (0: DefaultWriteTimeout).
func NewSSE(w http.ResponseWriter, writeTimeout time.Duration) (*SSE, error) {
	if writeTimeout <= 0 {
		writeTimeout = DefaultWriteTimeout
	}
	s := &SSE{w: w, rc: http.NewResponseController(w), writeTimeout: writeTimeout}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return s, s.flush()
}

// Send writes one message, unflushed.
func (s *SSE) Send(m Message) error {
	s.buf.Reset()
	if m.Event != "" {
		s.buf.WriteString("event: " + oneLine(m.Event) + "\n")
	}
	if m.ID != "" {
		s.buf.WriteString("id: " + oneLine(m.ID) + "\n")
	}
	for _, l := range bytes.Split(m.Data, []byte("\n")) {
		s.buf.WriteString("data: ")
		s.buf.Write(bytes.TrimSuffix(l, []byte("\r")))
		s.buf.WriteByte('\n')
	}
	s.buf.WriteByte('\n')
	return s.write()
}

// Comment writes a comment line (": text"), unflushed.
func (s *SSE) Comment(text string) error {
	s.buf.Reset()
	s.buf.WriteString(": " + oneLine(text) + "\n\n")
	return s.write()
}

// Flush sends what was written.
func (s *SSE) Flush() error { return s.flush() }

func (s *SSE) write() error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	_, err := s.w.Write(s.buf.Bytes())
	return err
}

func (s *SSE) flush() error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// oneLine keeps a field value on its line (an LF would end the field).
func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// Pump writes what sub delivers, converted by msg, until ctx ends, the
// subscription ends or a write fails; a ": ping" comment goes out
// whenever ping passes without one (0: DefaultPing). Queued items are
// flushed in bursts; items the subscription dropped since the last burst
// are declared in a ": dropped N" comment, never silently. It returns the subscription's error when it ended
// (ErrOverflow, ErrClosed), ctx's error, or the write error.
func Pump[T any](ctx context.Context, s *SSE, sub *Sub[T], ping time.Duration, msg func(T) (Message, bool)) error {
	if ping <= 0 {
		ping = DefaultPing
	}
	t := time.NewTicker(ping)
	defer t.Stop()
	var dropped uint64
	declare := func() error {
		if d := sub.Dropped(); d > dropped {
			err := s.Comment(fmt.Sprintf("dropped %d (the consumer's queue was full)", d-dropped))
			dropped = d
			return err
		}
		return nil
	}
	send := func(it T) error {
		m, ok := msg(it)
		if !ok {
			return nil
		}
		return s.Send(m)
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if err := s.Comment("ping"); err != nil {
				return err
			}
			if err := s.Flush(); err != nil {
				return err
			}
		case it := <-sub.C():
			if err := declare(); err != nil {
				return err
			}
			if err := send(it); err != nil {
				return err
			}
			for drained := false; !drained; {
				select {
				case it := <-sub.C():
					if err := send(it); err != nil {
						return err
					}
				default:
					drained = true
				}
			}
			if err := s.Flush(); err != nil {
				return err
			}
			t.Reset(ping)
		case <-sub.Done():
			if err := declare(); err != nil {
				return err
			}
			for {
				select {
				case it := <-sub.C():
					if err := send(it); err != nil {
						return err
					}
				default:
					if err := s.Flush(); err != nil {
						return err
					}
					if err := sub.Err(); err != nil {
						return err
					}
					return fmt.Errorf("subscription closed")
				}
			}
		}
	}
}
