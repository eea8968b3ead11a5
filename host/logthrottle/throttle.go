package logthrottle

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/acptap/acptap/internal/jsonscan"
)

// Defaults for Writer.
const (
	// DefaultBurst is how many lines of one message each window writes.
	DefaultBurst = 20
	// DefaultWindow is how long a message's burst lasts.
	DefaultWindow = time.Minute
	// MaxKeys bounds the distinct messages tracked; messages beyond it
	// share one key per level and module.
	MaxKeys = 4096
)

// SuppressedMessage is the message of the lines that report suppressed
// repeats; their "message" field names the repeated message and
// "suppressed" how many lines of it were not written.
const SuppressedMessage = "repeated log message suppressed"

// Writer sits between an hclog JSON logger and its file. hclog writes each
// entry in one Write call; Writer reads the entry's @level, @module and
// @message, and writes at most Burst entries with the same three per
// Window. Writes that are not an hclog JSON entry pass through.
type Writer struct {
	Burst  int
	Window time.Duration
	Now    func() time.Time

	mu   sync.Mutex
	w    io.Writer
	keys map[key]*count
}

// key is what makes two entries repeats: level, module, message and the
// plugin a diagnostic came from.
type key struct{ level, module, plugin, msg string }

type count struct {
	start      time.Time
	n          int
	suppressed int
}

// New returns a Writer over w with the defaults.
func New(w io.Writer) *Writer {
	return &Writer{Burst: DefaultBurst, Window: DefaultWindow, Now: time.Now, w: w, keys: map[key]*count{}}
}

// entryHead is what Write reads of an hclog JSON entry.
type entryHead struct{ Level, Module, Message string }

// head reads an entry's @level, @module, @message and a string plugin, in
// one pass over its top-level members and without decoding the rest: a
// plugin's diagnostics can be an entry per frame, and decoding each whole
// entry (encoding/json) was most of what logging one cost. ok is false when
// p is not one JSON object or a member read is not a string of JSON
// (plugin excepted, which is then "", as any non-string plugin is).
// TestHeadMatchesUnmarshal compares it with json.Unmarshal.
func head(p []byte) (h entryHead, plugin string, ok bool) {
	bad := false
	ok = jsonscan.Members(p, func(k, v []byte) bool {
		name := string(k)
		if bytes.IndexByte(k, '\\') >= 0 {
			name, _ = jsonscan.Unquote(k)
		}
		var dst *string
		switch name {
		case "@level":
			dst = &h.Level
		case "@module":
			dst = &h.Module
		case "@message":
			dst = &h.Message
		case "plugin":
			plugin, _ = jsonscan.String(v) // not a string: no plugin
			return true
		default:
			return true
		}
		if string(v) == "null" {
			*dst = ""
			return true
		}
		s, sok := jsonscan.String(v)
		*dst, bad = s, !sok
		return sok
	})
	return h, plugin, ok && !bad
}

// Write implements io.Writer.
func (t *Writer) Write(p []byte) (int, error) {
	h, plugin, ok := head(p)
	if !ok || h.Message == "" {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.w.Write(p)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	k := key{h.Level, h.Module, plugin, h.Message}
	c, ok := t.keys[k]
	if !ok {
		if len(t.keys) >= MaxKeys {
			k.msg = "(other messages)"
			c = t.keys[k]
		}
		if c == nil {
			c = &count{}
			t.keys[k] = c
		}
	}
	now := t.Now()
	if c.n > 0 && now.Sub(c.start) >= t.Window {
		if err := t.summary(k, c, now); err != nil {
			return 0, err
		}
		c.n = 0
	}
	if c.n == 0 {
		c.start = now
	}
	c.n++
	if c.n > t.Burst {
		c.suppressed++
		return len(p), nil
	}
	return t.w.Write(p)
}

// summary writes k's suppressed count, if any, and zeroes it.
func (t *Writer) summary(k key, c *count, now time.Time) error {
	if c.suppressed == 0 {
		return nil
	}
	line, _ := json.Marshal(map[string]any{
		"@level": k.level, "@module": k.module, "@message": SuppressedMessage,
		"@timestamp": now.Format("2006-01-02T15:04:05.000000Z07:00"),
		"message":    k.msg, "suppressed": c.suppressed, "plugin": k.plugin,
		"since": c.start.Format(time.RFC3339Nano), "burst": t.Burst, "window": t.Window.String(),
	})
	c.suppressed = 0
	_, err := t.w.Write(append(line, '\n'))
	return err
}

// Flush writes the suppressed counts of every message, oldest first.
func (t *Writer) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	ks := make([]key, 0, len(t.keys))
	for k, c := range t.keys {
		if c.suppressed > 0 {
			ks = append(ks, k)
		}
	}
	sort.Slice(ks, func(i, j int) bool { return t.keys[ks[i]].start.Before(t.keys[ks[j]].start) })
	now := t.Now()
	var errs []error
	for _, k := range ks {
		errs = append(errs, t.summary(k, t.keys[k], now))
	}
	return errors.Join(errs...)
}

// Close flushes the counts and closes the underlying writer if it is an
// io.Closer.
func (t *Writer) Close() error {
	err := t.Flush()
	if c, ok := t.w.(io.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	return err
}
