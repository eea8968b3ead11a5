package term

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acptap/acptap/host/sessions"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

// Wire writes the wire log at path to w: its connection, then one line per
// frame (direction, method or the request a response answers, the session
// it names, the frame's text clipped), the gaps and session entries, and at
// the end the sessions the connection named and the requests that failed.
// An error is a read or write error (what was read is written first).
func Wire(w io.Writer, path string, color bool) (err error) {
	safe, token := newTermSafe(w, color)
	out := bufio.NewWriter(safe)
	defer func() {
		if ferr := errors.Join(out.Flush(), safe.Flush()); err == nil {
			err = ferr
		}
	}()
	p := paint{on: color, token: token}
	var x sessions.Exchanges
	var named []string
	var failures []string
	frames, gaps := 0, uint64(0)
	started := false
	_, err = sessions.Frames(path, func(h wire.Header, f sessions.Frame) error {
		if !started {
			started = true
			fmt.Fprintf(out, "%s %s\n", p.c(sgrBold, "wire log of connection"), h.Connection)
			fmt.Fprintf(out, "  started %s\n", LocalTime(h.StartedAt))
			if len(h.Agent.Command) > 0 {
				fmt.Fprintf(out, "  agent   %s\n", clean(strings.Join(h.Agent.Command, " ")))
			}
			if s := h.Source; s != nil {
				fmt.Fprintf(out, "  converted from %s (%s, %s)\n", clean(s.Path), s.From, s.Format)
			}
			fmt.Fprintln(out)
		}
		if f.Session != "" && !slices.Contains(named, f.Session) {
			named = append(named, f.Session)
		}
		switch f.Type {
		case wire.TypeGap:
			gaps += f.Gap.Frames
			fmt.Fprintf(out, "%6d %s %s %s\n", f.Seq, clock(f), arrow(f.Dir, p),
				p.c(sgrRed, fmt.Sprintf("gap: %d lines (%d bytes) not captured (%s)", f.Gap.Frames, f.Gap.Bytes, f.Gap.Reason)))
			return nil
		case wire.TypeSession:
			fmt.Fprintf(out, "%6d %s   %s\n", f.Seq, clock(f), p.c(sgrDim, "session "+clean(f.Session)+" (what the store held of it)"))
			return nil
		}
		frames++
		var what string
		switch e := x.Next(f); e.Kind {
		case sessions.KindNotJSONRPC:
			what = p.c(sgrYellow, "not JSON-RPC")
		case sessions.KindRequest:
			what = p.c(sgrCyan, f.Method) + " #" + clean(f.ID)
		case sessions.KindNotification:
			what = p.c(sgrCyan, f.Method)
			if f.Update != "" {
				what += " " + clean(f.Update)
			}
		case sessions.KindError:
			failures = append(failures, sessions.Failure(e.Request, f.ErrCode, f.ErrMsg))
			what = p.c(sgrRed, fmt.Sprintf("#%s error %d %s", clean(f.ID), f.ErrCode, clean(f.ErrMsg)))
			if e.Request != "" {
				what += " (" + e.Request + ")"
			}
		default:
			what = "#" + clean(f.ID) + " result"
			if e.Request != "" {
				what += " (" + e.Request + ")"
			}
		}
		if f.Session != "" {
			what += " " + p.c(sgrDim, "["+clean(f.Session)+"]")
		}
		fmt.Fprintf(out, "%6d %s %s %s  %s\n", f.Seq, clock(f), arrow(f.Dir, p), what, p.c(sgrDim, Clip(clean(string(f.Line)), MaxJSON)))
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "%d frames", frames)
	if gaps > 0 {
		fmt.Fprintf(out, ", %d lines not captured", gaps)
	}
	fmt.Fprintln(out)
	if len(named) == 0 {
		fmt.Fprintln(out, "sessions: none (no session was started on this connection)")
	} else {
		fmt.Fprintf(out, "sessions: %s  (`acptap show SESSION-ID` shows one)\n", clean(strings.Join(named, ", ")))
	}
	for _, fl := range failures {
		fmt.Fprintf(out, "%s %s\n", p.c(sgrRed, "failed:"), clean(fl))
	}
	return nil
}

func arrow(d sdk.Direction, p paint) string {
	if d == sdk.C2A {
		return p.c(sgrBlue, "editor → agent")
	}
	return p.c(sgrMagenta, "agent → editor")
}

func clock(f sessions.Frame) string {
	if f.At.IsZero() {
		return "--:--:--.---"
	}
	return f.At.Local().Format("15:04:05.000")
}

// clean makes text safe for a terminal: control characters and invalid
// UTF-8 are written as Go escapes.
func clean(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError }) < 0 {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}

// LocalTime writes t in local time to the second, "-" for none.
func LocalTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
