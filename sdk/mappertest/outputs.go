package mappertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr/asrcheck"
	"github.com/google/go-cmp/cmp"
)

// Render writes outputs one per line, in the form golden files hold them:
// diagnostics with their severity, summary and detail, the rest with their
// JSON as it is.
func Render(outs []sdk.Output) []byte {
	var b bytes.Buffer
	for _, o := range outs {
		seqs, _ := json.Marshal(o.FrameSeqs)
		if o.Kind == sdk.Diagnostic {
			fmt.Fprintf(&b, `{"kind":"diagnostic","session":%q,"frames":%s,"severity":%q,"summary":%q,"detail":%q}`+"\n",
				o.Session, seqs, o.Severity, o.Summary, o.Detail)
			continue
		}
		fmt.Fprintf(&b, `{"kind":%q,"session":%q,"frames":%s,"json":%s}`+"\n", o.Kind, o.Session, seqs, o.JSON)
	}
	return b.Bytes()
}

// Golden compares Render(outs) with the file at path; with update set it
// rewrites the file instead (a test's -update flag).
func Golden(t testing.TB, path string, outs []sdk.Output, update bool) {
	t.Helper()
	got := Render(outs)
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// Streams joins each session's ASR header and records, one line each, in
// output order; order lists the sessions as they first appear.
func Streams(outs []sdk.Output) (streams map[string][]byte, order []string) {
	streams = map[string][]byte{}
	for _, o := range outs {
		if o.Kind != sdk.ASRHeader && o.Kind != sdk.ASRRecord {
			continue
		}
		if _, ok := streams[o.Session]; !ok {
			order = append(order, o.Session)
		}
		streams[o.Session] = append(append(streams[o.Session], o.JSON...), '\n')
	}
	return streams, order
}

// CheckStreams fails t unless every output is one valid UTF-8 JSON line, no
// diagnostic reports a plugin bug (a summary beginning "internal error", as
// sdk.SummaryInternal and the built-in translators' do), and every
// session's stream passes asrcheck.Validate without a problem (warnings
// included).
func CheckStreams(t testing.TB, outs []sdk.Output) {
	t.Helper()
	for _, o := range outs {
		if o.Kind == sdk.Diagnostic {
			if strings.HasPrefix(o.Summary, "internal error") {
				t.Fatalf("%s: %s", o.Summary, o.Detail)
			}
			continue
		}
		if !json.Valid(o.JSON) || !utf8.Valid(o.JSON) || bytes.IndexByte(o.JSON, '\n') >= 0 {
			t.Fatalf("output is not one valid JSON line: %q", o.JSON)
		}
	}
	streams, order := Streams(outs)
	for _, id := range order {
		var problems []string
		if _, err := asrcheck.Validate(bytes.NewReader(streams[id]), func(p asrcheck.Problem) { problems = append(problems, p.String()) }); err != nil {
			t.Fatalf("session %q: validate: %v", id, err)
		}
		if len(problems) > 0 {
			t.Fatalf("session %q is not valid ASR:\n  %s\n%s", id, strings.Join(problems, "\n  "), streams[id])
		}
	}
}
