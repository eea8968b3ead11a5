package rebuildtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRebuildWithoutSessionEntries: the same live recordings with their
// session entries removed (a wire log as an older acptap, a converter or a
// hand wrote it; seqs renumbered). Rebuilt one file per call, all in one
// call in any order, or with --all from a store holding only the wire
// logs, every later connection continues the session's outputs as the
// live run did: the same files, the same lines, the same connection
// counts, permission ids and AEP epochs — equal to the live outputs but
// for what names the renumbered wire seqs (native.ref.frames, and the AEP
// event ids derived from them) — and the three ways agree byte for byte.
func TestRebuildWithoutSessionEntries(t *testing.T) {
	needBin(t)
	for _, tc := range []struct {
		name   string
		record func(testing.TB) *live
	}{
		{"v2-resume-fork", recordV2},
		{"v1-load", recordV1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lv := tc.record(t)
			files, seqs := stripSessions(t, lv.wires)
			for _, f := range files {
				if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(`"type":"session"`)) {
					t.Fatalf("%s still has session entries", f)
				}
			}
			remap := map[string]map[uint64]uint64{}
			for i, f := range files {
				remap[filepath.Base(f)] = seqs[i]
			}

			perCall := filepath.Join(t.TempDir(), "per-call")
			for _, f := range files {
				mustRebuild(t, "--store", perCall, f)
			}
			got := outputs(t, perCall)
			equalModuloSeqs(t, lv.outputs, got, remap)

			oneCall := filepath.Join(t.TempDir(), "one-call")
			shuffled := append([]string{files[len(files)-1]}, files[:len(files)-1]...)
			mustRebuild(t, append([]string{"--store", oneCall}, shuffled...)...)
			sameOutputs(t, "one call vs one file per call", got, outputs(t, oneCall))

			all := filepath.Join(t.TempDir(), "all")
			if err := os.MkdirAll(filepath.Join(all, "wire"), 0o700); err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				b, _ := os.ReadFile(f)
				writeFile(t, filepath.Join(all, "wire", filepath.Base(f)), string(b))
			}
			mustRebuild(t, "--store", all, "--all")
			sameOutputs(t, "--all vs one file per call", got, outputs(t, all))

			// Rebuilding a later connection again changes nothing.
			mustRebuild(t, "--store", perCall, files[1])
			sameOutputs(t, "second connection rebuilt again", got, outputs(t, perCall))
		})
	}
}

var (
	refFrames = regexp.MustCompile(`"wire":"([^"]+)","frames":\[([0-9,]+)\]`)
	noticeID  = regexp.MustCompile(`"messageId":"notice:([0-9]+):([0-9]+)"`)
)

// equalModuloSeqs compares live outputs with those rebuilt from wire logs
// whose seqs were renumbered: ASR lines after mapping native.ref.frames
// through remap; AEP lines after replacing each live event id (derived
// from the wire seq) by the rebuilt event id at the same line, everywhere
// it is used (cause, subject).
func equalModuloSeqs(t *testing.T, live, got map[string][]byte, remap map[string]map[uint64]uint64) {
	t.Helper()
	norm := map[string][]byte{}
	for name, b := range live {
		switch {
		case strings.HasPrefix(name, "aep"):
			ids := map[string]string{}
			ll, gl := bytes.Split(b, []byte("\n")), bytes.Split(got[name], []byte("\n"))
			for i := range ll {
				if i >= len(gl) || len(ll[i]) == 0 {
					continue
				}
				var a, g struct{ ID string }
				json.Unmarshal(ll[i], &a)
				json.Unmarshal(gl[i], &g)
				ids[a.ID] = g.ID
			}
			var pairs []string
			for from, to := range ids {
				pairs = append(pairs, `"`+from+`"`, `"`+to+`"`)
			}
			norm[name] = []byte(strings.NewReplacer(pairs...).Replace(string(b)))
		case strings.HasSuffix(name, ".asr.jsonl"):
			var out [][]byte
			for _, line := range bytes.Split(b, []byte("\n")) {
				sm := refFrames.FindSubmatch(line)
				if sm == nil {
					out = append(out, line)
					continue
				}
				seqs := remap[string(sm[1])]
				to := func(s []byte) string {
					n, _ := strconv.ParseUint(string(s), 10, 64)
					if m, ok := seqs[n]; ok {
						n = m
					}
					return strconv.FormatUint(n, 10)
				}
				line = refFrames.ReplaceAllFunc(line, func(m []byte) []byte {
					var parts []string
					for _, s := range bytes.Split(refFrames.FindSubmatch(m)[2], []byte(",")) {
						parts = append(parts, to(s))
					}
					return []byte(`"wire":"` + string(sm[1]) + `","frames":[` + strings.Join(parts, ",") + `]`)
				})
				// A notice's derived messageId names its frame's seq too.
				line = noticeID.ReplaceAllFunc(line, func(m []byte) []byte {
					g := noticeID.FindSubmatch(m)
					return []byte(`"messageId":"notice:` + string(g[1]) + `:` + to(g[2]) + `"`)
				})
				out = append(out, line)
			}
			norm[name] = bytes.Join(out, []byte("\n"))
		default:
			norm[name] = b
		}
	}
	sameOutputs(t, "rebuilt without session entries (seqs renumbered)", norm, got)
}
