package acpschema_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acptap/acptap/internal/acpschema"
	"github.com/acptap/acptap/internal/jsonscan"
)

func newChecker(t *testing.T, v acpschema.Version) *acpschema.Checker {
	t.Helper()
	c, err := acpschema.NewChecker(v)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestShortMessages: errors name the offending value by JSON pointer and
// the variant of a tagged union the message meant.
func TestShortMessages(t *testing.T) {
	c := newChecker(t, acpschema.V2)
	for _, tt := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":5}}}`,
			"session/update notification params: at /update/content: got number, want object"},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","status":"completed"}}}`,
			"session/update notification params: at /update: missing property 'toolCallId'"},
	} {
		err := c.Check(acpschema.Agent, []byte(tt.line))
		var e *acpschema.Error
		if !errors.As(err, &e) || e.Msg != tt.want || e.Entries != nil {
			t.Errorf("Check = %#v, want %q", err, tt.want)
		}
	}
	if err := c.Check(acpschema.Agent, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}`)); err != nil {
		t.Errorf("conforming chunk: %v", err)
	}
}

// TestTolerant: a recorder that starts mid-conversation sees responses to
// requests it never saw; tolerant, those get the envelope check only.
func TestTolerant(t *testing.T) {
	resp := []byte(`{"jsonrpc":"2.0","id":7,"result":{}}`)
	strict := newChecker(t, acpschema.V2)
	if err := strict.Check(acpschema.Agent, resp); err == nil || !strings.Contains(err.Error(), "unknown client request") {
		t.Errorf("strict: %v", err)
	}
	tol := newChecker(t, acpschema.V2)
	tol.SetTolerant(true)
	if err := tol.Check(acpschema.Agent, resp); err != nil {
		t.Errorf("tolerant: %v", err)
	}
	_ = tol.Check(acpschema.Client, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`))
	if err := tol.Check(acpschema.Client, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`)); err != nil {
		t.Errorf("tolerant, id reused: %v", err)
	}
}

// TestBatchEntries: a batch names the entries that do not conform.
func TestBatchEntries(t *testing.T) {
	c := newChecker(t, acpschema.V2)
	err := c.Check(acpschema.Agent, []byte(`[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}},`+
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":7}}}]`))
	var e *acpschema.Error
	if !errors.As(err, &e) || !slices.Equal(e.Entries, []int{1}) || !strings.HasPrefix(e.Msg, "batch entry 1: ") {
		t.Errorf("Check = %#v", err)
	}
}

// TestConcurrentCheckers: checkers of both versions, built and used from
// many goroutines, share the once-compiled schemas.
func TestConcurrentCheckers(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			v := acpschema.V1
			if i%2 == 0 {
				v = acpschema.V2
			}
			c, err := acpschema.NewChecker(v)
			if err != nil {
				t.Error(err)
				return
			}
			if c.Version() != v {
				t.Errorf("Version = %d, want %d", c.Version(), v)
			}
			if err := c.Check(acpschema.Client, []byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// TestShortMessagesStable: a frame with problems at several members
// reports them in the same order every time (by location), though
// jsonschema visits an object's members in Go's random map order.
func TestShortMessagesStable(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":{},"status":5,"name":7}}}`)
	want := "session/update notification params: at /update/name: got number, want null or string; at /update/status: got number, want string; at /update/status: got number, want null; …"
	for range 50 {
		if err := newChecker(t, acpschema.V2).Check(acpschema.Agent, line); err == nil || err.Error() != want {
			t.Fatalf("Check = %v, want %q", err, want)
		}
	}
}

// TestNullDefaults: SDK 2.4.0's stable v1 schema marks optional arrays
// "x-deserialize-default-on-null", so null is accepted there (and only
// there: a null prompt is still wrong).
func TestNullDefaults(t *testing.T) {
	for _, v := range []acpschema.Version{acpschema.V1, acpschema.V1Unstable} {
		c := newChecker(t, v)
		ok := `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":null,"additionalDirectories":null}}`
		if err := c.Check(acpschema.Client, []byte(ok)); err != nil {
			t.Errorf("schema %d: null optional arrays: %v", v, err)
		}
		bad := `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":null}}`
		if err := c.Check(acpschema.Client, []byte(bad)); err == nil {
			t.Errorf("schema %d: a null prompt conforms", v)
		}
	}
}

// TestCheckParsedNewline: CheckParsed answers what Check answers for lines
// with a newline or a carriage return in the space around their tokens or
// after them, so that a caller's tape without a newline spares the scan
// for one.
func TestCheckParsedNewline(t *testing.T) {
	chunk := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}`
	for _, line := range []string{chunk, chunk + "\n", chunk + "\r\n", chunk + "\r", "\n" + chunk, " " + chunk + " \r",
		strings.Replace(chunk, `,"params"`, ",\n\"params\"", 1), strings.Replace(chunk, `"content":`, "\"content\":\r\n", 1),
		strings.Replace(chunk, `"content":`, "\"content\": \t", 1), `[` + chunk + "\n]", `[` + chunk + "]\r"} {
		var tp jsonscan.Tape
		if !tp.Parse([]byte(line)) {
			t.Fatalf("tape refused %q", line)
		}
		want := fmt.Sprint(newChecker(t, acpschema.V2).Check(acpschema.Agent, []byte(line)))
		if got := fmt.Sprint(newChecker(t, acpschema.V2).CheckParsed(acpschema.Agent, []byte(line), &tp)); got != want {
			t.Errorf("%q: CheckParsed = %s, Check %s", line, got, want)
		}
	}
}
