package logimport

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestPredecodeSameFrames: the digest pass with its lines decoded ahead
// (predecoder) gives what the scanner gives decoding them itself — the
// same frames, skips, counts and digests, for every layout, odd lines and
// a log of many chunks, also when the frames overflow the bound — and the
// lines it decoded are taken from the predecoder, none decoded twice.
func TestPredecodeSameFrames(t *testing.T) {
	synth := filepath.Join(t.TempDir(), "v1.jsonl")
	writeSyntheticLog(t, synth, 1<<20)
	raw, err := os.ReadFile(synth)
	if err != nil {
		t.Fatal(err)
	}
	trace, err := os.ReadFile(filepath.Join("testdata", "sdk-v1-trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ins := append(append([]string{}, wholeCases...), string(raw), string(trace))
	for _, format := range []Format{"", FormatFrames, FormatTrace, FormatUpdates} {
		for _, in := range ins {
			for _, retain := range []int{32 << 20, 4 << 10} {
				want, err := digestFrames(newMemScanner([]byte(in), format, 4096), retain)
				if err != nil {
					t.Fatal(err)
				}
				got, err := digestFrames(newPassScanner([]byte(in), format, 4096), retain)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%q %.60q, retain %d: %+v, decoding each line %+v", format, in, retain, got, want)
				}
			}
		}
	}

	// Every line of the synthetic log is an object line the scanner
	// decodes: each one from the predecoder.
	s := newPassScanner(raw, "", 4096)
	defer s.pre.stop()
	for {
		if _, err := s.Next(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if s.Lines < 3*predecodeChunk || s.pre.served != s.Lines-s.Blank {
		t.Errorf("%d of %d lines (%d blank) taken from the predecoder", s.pre.served, s.Lines, s.Blank)
	}
}

// TestPredecoderStops: a predecoder stopped before its lines were all
// taken ends its goroutine (it does not wait to hand over a chunk); it
// hangs to the test's timeout when it does not.
func TestPredecoderStops(t *testing.T) {
	synth := filepath.Join(t.TempDir(), "v1.jsonl")
	writeSyntheticLog(t, synth, 1<<20)
	raw, err := os.ReadFile(synth)
	if err != nil {
		t.Fatal(err)
	}
	pd := startPredecoder(raw, 4096)
	var p probe
	if _, found := pd.take(1, &p); !found {
		t.Fatal("line 1 not predecoded")
	}
	pd.stop()
	<-pd.ended
}
