package wire

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acptap/acptap/sdk"
	"github.com/google/go-cmp/cmp"
)

func readAll(t *testing.T, path string) (Header, []Entry, error) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	var out []Entry
	for {
		e, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return r.Header(), out, err
		}
		out = append(out, e)
	}
}

func TestASR723_WireLogRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wire", "c-1.jsonl")
	at := time.Date(2026, 10, 26, 14, 30, 41, 207000123, time.UTC)
	hdr := Header{Connection: "c-1", StartedAt: at, Agent: Agent{Command: []string{"agent", "--acp"}}}
	w, err := Create(path, hdr)
	if err != nil {
		t.Fatal(err)
	}
	in := []Entry{
		{Type: TypeFrame, At: at, Dir: sdk.C2A, Line: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`)},
		{Type: TypeFrame, At: at.Add(time.Nanosecond), Dir: sdk.A2C, Line: []byte{'{', 0xff, 0xfe, '}'}},
		{Type: TypeGap, Dir: sdk.A2C, Gap: sdk.Gap{Frames: 12, Bytes: 48213, Reason: "capture queue full"}},
		{Type: TypeFrame, At: at, Dir: sdk.C2A, Line: []byte{}},
		{Type: TypeFrame, At: at, Dir: sdk.A2C, Line: []byte("tail \"\n\t\x00"), NoLF: true},
	}
	for i, e := range in {
		seq, err := w.Append(e)
		if err != nil || seq != uint64(i+1) {
			t.Fatalf("Append %d: seq %d, err %v", i, seq, err)
		}
		in[i].Seq = seq
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	gotHdr, got, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hdr, gotHdr); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	raw, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	want := []string{
		`{"type":"header","format":"acptap-wire","version":1,"connection":"c-1","startedAt":"2026-10-26T14:30:41.207000123Z","agent":{"command":["agent","--acp"]}}`,
		`{"type":"frame","seq":1,"at":"2026-10-26T14:30:41.207000123Z","dir":"c2a","line":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}"}`,
		`{"type":"frame","seq":2,"at":"2026-10-26T14:30:41.207000124Z","dir":"a2c","b64":"e//+fQ=="}`,
		`{"type":"gap","seq":3,"dir":"a2c","frames":12,"bytes":48213,"reason":"capture queue full"}`,
		`{"type":"frame","seq":4,"at":"2026-10-26T14:30:41.207000123Z","dir":"c2a","line":""}`,
		`{"type":"frame","seq":5,"at":"2026-10-26T14:30:41.207000123Z","dir":"a2c","line":"tail \"\n\t\u0000","nolf":true}`,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
}

func TestWriterSeqCrossCheck(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "c.jsonl"), Header{Connection: "c"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Append(Entry{Type: TypeFrame, Seq: 2, Dir: sdk.C2A}); err == nil {
		t.Error("Append with seq 2 as the first entry: no error")
	}
	if _, err := w.Append(Entry{Type: TypeFrame, Dir: 0}); err == nil {
		t.Error("Append with no direction: no error")
	}
	if seq, err := w.Append(Entry{Type: TypeFrame, Seq: 1, Dir: sdk.C2A}); err != nil || seq != 1 {
		t.Errorf("Append seq 1: %d, %v", seq, err)
	}
	w.Close()
	if _, err := w.Append(Entry{Type: TypeFrame, Dir: sdk.C2A}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
}

func TestWriterPermissionsUnderHostileUmask(t *testing.T) {
	old := setUmask(0o277)
	defer setUmask(old)
	root := t.TempDir()
	path := filepath.Join(root, "a", "b", "c-1.jsonl")
	w, err := Create(path, Header{Connection: "c-1"})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	for p, want := range map[string]os.FileMode{
		path: 0o600, filepath.Dir(path): 0o700, filepath.Join(root, "a"): 0o700,
	} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", p, got, want)
		}
	}
	if _, err := Create(path, Header{Connection: "c-1"}); err == nil {
		t.Error("Create over an existing wire log: no error")
	}
}

func TestReaderTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	w, _ := Create(path, Header{Connection: "c"})
	w.Append(Entry{Type: TypeFrame, Dir: sdk.C2A, Line: []byte("x")})
	w.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"frame","seq":2,"dir":"a2`)
	f.Close()
	_, got, err := readAll(t, path)
	if !errors.Is(err, ErrTornTail) {
		t.Fatalf("err = %v, want ErrTornTail", err)
	}
	if len(got) != 1 {
		t.Errorf("got %d entries before the torn tail, want 1", len(got))
	}
}

func TestReaderRejectsBadFiles(t *testing.T) {
	hdr := `{"type":"header","format":"acptap-wire","version":1,"connection":"c","agent":{"command":[]}}` + "\n"
	cases := map[string]string{
		"empty":        "",
		"no header":    `{"type":"frame","seq":1,"dir":"c2a","line":""}` + "\n",
		"version 2":    strings.Replace(hdr, `"version":1`, `"version":2`, 1),
		"seq gap":      hdr + `{"type":"frame","seq":2,"dir":"c2a","line":""}` + "\n",
		"bad dir":      hdr + `{"type":"frame","seq":1,"dir":"up","line":""}` + "\n",
		"line and b64": hdr + `{"type":"frame","seq":1,"dir":"c2a","line":"","b64":""}` + "\n",
		"no payload":   hdr + `{"type":"frame","seq":1,"dir":"c2a"}` + "\n",
		"unknown type": hdr + `{"type":"note","seq":1,"dir":"c2a"}` + "\n",
		"bad at":       hdr + `{"type":"frame","seq":1,"at":"yesterday","dir":"c2a","line":""}` + "\n",
	}
	for name, content := range cases {
		path := filepath.Join(t.TempDir(), "w.jsonl")
		os.WriteFile(path, []byte(content), 0o600)
		r, err := Open(path)
		if err == nil {
			_, err = r.Next()
			r.Close()
		}
		if err == nil || errors.Is(err, io.EOF) {
			t.Errorf("%s: err = %v, want a format error", name, err)
		}
	}
}

func TestWireLogHugeLine(t *testing.T) {
	size := 50 << 20
	if testing.Short() {
		size = 4 << 20
	}
	line := bytes.Repeat([]byte(`{"text":"x\ty","n":1}`), size/20)
	path := filepath.Join(t.TempDir(), "big.jsonl")
	w, _ := Create(path, Header{Connection: "big"})
	if _, err := w.Append(Entry{Type: TypeFrame, Dir: sdk.A2C, Line: line}); err != nil {
		t.Fatal(err)
	}
	w.Append(Entry{Type: TypeFrame, Dir: sdk.A2C, Line: []byte("after")})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, got, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !bytes.Equal(got[0].Line, line) || string(got[1].Line) != "after" {
		t.Errorf("huge line did not round-trip (%d entries)", len(got))
	}
}

func TestWriterConcurrentFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	w, _ := Create(path, Header{Connection: "c"})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				w.Flush()
			}
		}
	}()
	for range 2000 {
		if _, err := w.Append(Entry{Type: TypeFrame, Dir: sdk.A2C, Line: []byte(`{"a":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	w.Close()
	_, got, err := readAll(t, path)
	if err != nil || len(got) != 2000 {
		t.Fatalf("read %d entries, err %v", len(got), err)
	}
}
