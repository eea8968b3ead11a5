package logimport

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadOnceSameStore: a conversion whose input is read once (the
// digest pass keeps the frames and hashes the bytes; feedKept sends them)
// writes the same store, byte for byte, and returns the same result as
// one that hashes the input, digests it, then reads it again (feed) —
// for a plain and a gzip input, one with skipped lines, one whose frames
// overflow the bound half-way (read again), converted again with --force,
// and into a store that holds a converted log already (hashed first);
// kept frames are converted with the feeders' queues long enough for all
// of them (liveKept) and as long as when the input is read again; the slow
// way in batches of the configured size, the others of
// pipeline.OfflineBatchFrames (offlineBatch).
func TestReadOnceSameStore(t *testing.T) {
	dir := t.TempDir()
	in, gz, raw := syntheticPair(t, dir, 192<<10)
	// Skipped lines among the frames: not JSON, a bad direction, a blank line.
	lines := strings.SplitAfter(string(raw), "\n")
	var mixed strings.Builder
	for i, l := range lines {
		mixed.WriteString(l)
		switch i % 97 {
		case 5:
			mixed.WriteString("not json at all\n")
		case 11:
			mixed.WriteString("\n")
		case 23:
			mixed.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + "\n")
		}
	}
	bad := writeFile(t, dir, "mixed.jsonl", []byte(mixed.String()))
	other := filepath.Join(dir, "other.jsonl")
	writeSyntheticLog(t, other, 64<<10)

	run := func(retain int, inputs ...string) (string, []string) {
		defer func(n int, l bool, o int) { retainBytes, liveKept, offlineBatch = n, l, o }(retainBytes, liveKept, offlineBatch)
		retainBytes, liveKept = retain, retain != 1 // 1: kept, and the feeders' queues as when read again
		if retain == 0 {
			offlineBatch = 0 // and the configured batches
		}
		if retain == 1 {
			retainBytes = 32 << 20
		}
		root := t.TempDir()
		opts := testOptions(t, root)
		var results []string
		for i, input := range inputs {
			opts.Force = i > 0 && input == inputs[i-1]
			res, err := Convert(context.Background(), input, opts)
			if err != nil {
				t.Fatalf("retain %d, %s: %v", retain, input, err)
			}
			if res.MappingErr != nil {
				t.Fatalf("retain %d, %s: mapping: %v", retain, input, res.MappingErr)
			}
			res.MappingErr = nil
			res.Replaced = nil // backup names carry the time
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, strings.ReplaceAll(string(b), root, "STORE"))
		}
		return root, results
	}
	for _, inputs := range [][]string{{in}, {gz}, {bad}, {in, in}, {other, in}, {other, bad, gz}} {
		slowRoot, slow := run(0, inputs...)
		for _, retain := range []int{32 << 20, 1, 40 << 10} { // all kept (queues for all, or as before); the bound overflowed half-way
			fastRoot, fast := run(retain, inputs...)
			if !reflect.DeepEqual(slow, fast) {
				for i := range slow {
					if i < len(fast) && slow[i] != fast[i] {
						t.Errorf("%v, retain %d: result %d differs:\n%s\n%s", inputs, retain, i, slow[i], fast[i])
					}
				}
			}
			a, b := files(t, slowRoot), files(t, fastRoot)
			if len(a) == 0 || len(a) != len(b) {
				t.Fatalf("%v, retain %d: %d files, %d read once", inputs, retain, len(a), len(b))
			}
			for name, want := range a {
				if !bytes.Equal(b[name], want) {
					t.Errorf("%v, retain %d: %s differs", inputs, retain, name)
				}
			}
		}
	}
}

// TestReadOnceKeepsWithinBound: the digest pass keeps the frames while
// their lines fit the bound and none past it; its hash is the file's.
func TestReadOnceKeepsWithinBound(t *testing.T) {
	in := filepath.Join(t.TempDir(), "v1.jsonl")
	writeSyntheticLog(t, in, 64<<10)
	want, _, err := hashFile(in)
	if err != nil {
		t.Fatal(err)
	}
	all, err := readOnce(in, "", DefaultMaxLine, 32<<20, nil)
	if err != nil || all.kept == nil || !bytes.Equal(all.sum, want) {
		t.Fatalf("kept %v, sum ok %v: %v", all.kept != nil, bytes.Equal(all.sum, want), err)
	}
	none, err := readOnce(in, "", DefaultMaxLine, 8<<10, nil)
	if err != nil || none.kept != nil || none.skips != nil || !bytes.Equal(none.sum, want) || none.frames != all.frames {
		t.Fatalf("over the bound: kept %v, same digest %v: %v", none.kept != nil, none.frames == all.frames, err)
	}
	if all.nkept == 0 || none.lines != all.lines {
		t.Fatalf("%d frames kept, lines %d and %d", all.nkept, all.lines, none.lines)
	}
}

// syntheticPair writes a synthetic v1 log of about size bytes to dir and
// its gzip beside it: the same frames in two containers.
func syntheticPair(t *testing.T, dir string, size int64) (in, gz string, raw []byte) {
	t.Helper()
	in = filepath.Join(dir, "v1.jsonl")
	writeSyntheticLog(t, in, size)
	raw, _ = os.ReadFile(in)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(raw)
	zw.Close()
	return in, writeFile(t, dir, "v1.jsonl.gz", zb.Bytes()), raw
}
