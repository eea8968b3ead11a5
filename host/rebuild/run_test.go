package rebuild

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acptap/acptap/host/builtin"
	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/sdk"
)

const rev = "acp/2@2.0.0-alpha.9"

// writeConn writes a wire log of one ACP v2 connection: a new session
// (or a resume of it) and one prompt with an agent message. It has no
// session entries.
func writeConn(t *testing.T, dir, conn string, at time.Time, resume bool) string {
	t.Helper()
	path := filepath.Join(dir, conn+".jsonl")
	w, err := wire.Create(path, wire.Header{Connection: conn, StartedAt: at, Agent: wire.Agent{Command: []string{"agent"}}})
	if err != nil {
		t.Fatal(err)
	}
	open := `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`
	opened := `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}`
	if resume {
		open = `{"jsonrpc":"2.0","id":1,"method":"session/resume","params":{"sessionId":"s1","cwd":"/tmp","mcpServers":[]}}`
		opened = `{"jsonrpc":"2.0","id":1,"result":{}}`
	}
	for i, l := range []struct {
		dir  sdk.Direction
		line string
	}{
		{sdk.C2A, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}`},
		{sdk.A2C, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2}}`},
		{sdk.C2A, open},
		{sdk.A2C, opened},
		{sdk.C2A, `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`},
		{sdk.A2C, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m-` + conn + `","content":{"type":"text","text":"hello"}}}}`},
		{sdk.A2C, `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`},
	} {
		if _, err := w.Append(wire.Entry{Type: wire.TypeFrame, At: at.Add(time.Duration(i) * time.Millisecond), Dir: l.dir, Line: []byte(l.line)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// inProcess launches the built-in mappers in this process; fail names a
// plugin whose launch fails.
func inProcess(fail string) pipeline.Launcher {
	return func(ctx context.Context, name string) (*pipeline.Plugin, error) {
		if name == fail {
			return nil, errors.New("injected launch failure")
		}
		m := builtin.Factories()[name]()
		info, err := m.Info(ctx)
		if err != nil {
			return nil, err
		}
		return &pipeline.Plugin{Name: name, Info: info, Mapper: m}, nil
	}
}

func options(st *store.Store, fail string, out, progress *bytes.Buffer) Options {
	o := Options{Store: st, Out: out, Err: out,
		Pipeline: pipeline.Options{Revisions: map[string][]string{rev: {"acpv2", "aep"}}, SchemaRevision: "2.0.0-alpha.9",
			DefaultRevision: rev, Launch: inProcess(fail), MaxRestarts: 1}}
	if progress != nil {
		o.Progress = progress
	}
	return o
}

// TestFailedRebuildLeavesStore: when a plugin cannot map (its launch
// fails, so it gives up), Run returns an error and swaps nothing: the
// store's files are byte for byte as before and no staging is left. The
// same store then rebuilds, with progress lines, and a second run changes
// no file.
func TestFailedRebuildLeavesStore(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	dir := filepath.Join(st.Root(), "wire")
	writeConn(t, dir, "c-2", t0.Add(time.Minute), true)
	writeConn(t, dir, "c-1", t0, false)
	var out, prog bytes.Buffer
	res, err := Run(context.Background(), options(st, "", &out, &prog), Request{All: true})
	if err != nil || res.Failed || len(res.Written) != 1 {
		t.Fatalf("first rebuild: %v, %+v\n%s", err, res, out.String())
	}
	if !strings.Contains(prog.String(), "2/2 connections") {
		t.Errorf("progress = %q", prog.String())
	}
	stream := st.StreamPath("s1")
	before, _ := os.ReadFile(stream)
	if !bytes.Contains(before, []byte("m-c-1")) || !bytes.Contains(before, []byte("m-c-2")) ||
		bytes.Index(before, []byte("m-c-1")) > bytes.Index(before, []byte("m-c-2")) {
		t.Fatalf("the stream does not hold both connections in order:\n%s", before)
	}
	if n, _ := storedConnections(st, "s1"); n != 2 {
		t.Errorf("connections = %d, want 2", n)
	}

	out.Reset()
	_, err = Run(context.Background(), options(st, "aep", &out, nil), Request{All: true})
	if err == nil || !strings.Contains(err.Error(), "store is unchanged") {
		t.Fatalf("rebuild with a failing plugin: %v\n%s", err, out.String())
	}
	if after, _ := os.ReadFile(stream); !bytes.Equal(before, after) {
		t.Error("the stream changed")
	}
	if left, _ := filepath.Glob(filepath.Join(st.Root(), "tmp", stagingPrefix+"*")); len(left) > 0 {
		t.Errorf("staging left: %v", left)
	}

	out.Reset()
	res, err = Run(context.Background(), options(st, "", &out, nil), Request{All: true})
	if err != nil || len(res.Replaced) != 0 {
		t.Errorf("a rebuild with the same plugins replaced %v (%v)\n%s", res.Replaced, err, out.String())
	}
}

// TestHistoryMissing: a session whose outputs come from a connection
// whose wire log is gone is not rebuilt from the rest — neither when the
// store counts more connections than wire logs are found, nor when the
// count is missing (an older store) but the stream names the lost log —
// and the command says so and fails; its files are left as they were.
func TestHistoryMissing(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, dropCount := range []bool{false, true} {
		st, err := store.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(st.Root(), "wire")
		first := writeConn(t, dir, "c-1", t0, false)
		second := writeConn(t, dir, "c-2", t0.Add(time.Minute), true)
		var out bytes.Buffer
		if _, err := Run(context.Background(), options(st, "", &out, nil), Request{All: true}); err != nil {
			t.Fatal(err)
		}
		os.Remove(first)
		if dropCount {
			os.Remove(filepath.Join(st.SessionDir("s1"), "connections"))
		}
		before, _ := os.ReadFile(st.StreamPath("s1"))
		out.Reset()
		res, err := Run(context.Background(), options(st, "", &out, nil), Request{Files: []string{second}})
		if err != nil || !res.Failed || res.NotRebuilt["s1"] == "" || len(res.Written) != 0 {
			t.Errorf("dropCount=%v: %v %+v\n%s", dropCount, err, res, out.String())
		}
		if !strings.Contains(out.String(), `session "s1" not rebuilt`) {
			t.Errorf("dropCount=%v: not reported:\n%s", dropCount, out.String())
		}
		if after, _ := os.ReadFile(st.StreamPath("s1")); !bytes.Equal(before, after) {
			t.Errorf("dropCount=%v: the stream changed", dropCount)
		}
	}
}
