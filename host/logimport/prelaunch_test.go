package logimport

import (
	"bytes"
	"compress/gzip"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acptap/acptap/host/pipeline"
)

// TestPrelaunchSameStore: a conversion whose plugins start before its
// pipeline does, and whose outputs are written buffered, writes the same
// store, byte for byte, as one whose pipeline launches them and writes
// each line at once — and so does converting it again with --force over
// that store; each plugin is launched once, and none is left
// running; a launch that fails fails the pipeline's launch, as before
// (the plugin gives up).
func TestPrelaunchSameStore(t *testing.T) {
	in := filepath.Join(t.TempDir(), "v1.jsonl")
	writeSyntheticLog(t, in, 256<<10)
	raw, _ := os.ReadFile(in)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(raw)
	zw.Close()
	gz := writeFile(t, t.TempDir(), "v1.jsonl.gz", zb.Bytes())
	run := func(pre bool, fail string) (string, map[string]int, int) {
		defer func(b bool, n int) { prelaunchPlugins, outputBuffer = b, n }(prelaunchPlugins, outputBuffer)
		prelaunchPlugins, outputBuffer = pre, 0
		if pre {
			outputBuffer = 300 // small: lines gathered and lines written at once, many flushes
		}
		root := t.TempDir()
		opts := testOptions(t, root)
		var mu sync.Mutex
		launched, live := map[string]int{}, 0
		opts.Pipeline.Launch = func(ctx context.Context, name string) (*pipeline.Plugin, error) {
			mu.Lock()
			defer mu.Unlock()
			launched[name]++
			if name == fail && launched[name] == 1 {
				return nil, os.ErrDeadlineExceeded
			}
			pl, err := inProcess(ctx, name)
			if err == nil {
				live++
				pl.Kill = func() { mu.Lock(); live--; mu.Unlock() }
			}
			return pl, err
		}
		res, err := Convert(context.Background(), in, opts)
		if err != nil || (res.MappingErr != nil) != (fail != "") {
			t.Fatalf("fail %q: %v, mapping %v", fail, err, res.MappingErr)
		}
		res, err = Convert(context.Background(), in, opts) // converted before: nothing to do
		if err != nil || !res.Existed {
			t.Fatalf("second conversion: %v %+v", err, res)
		}
		// The same frames in other bytes: found so by the digest, after the
		// plugins were prelaunched (they are killed unused).
		res, err = Convert(context.Background(), gz, opts)
		if err != nil || !res.Existed {
			t.Fatalf("the gzip: %v %+v", err, res)
		}
		opts.Force = true // again, over what the first wrote
		if res, err = Convert(context.Background(), in, opts); err != nil || res.MappingErr != nil || res.Existed {
			t.Fatalf("fail %q, forced: %v, mapping %v", fail, err, res.MappingErr)
		}
		mu.Lock()
		defer mu.Unlock()
		return root, launched, live
	}
	for _, fail := range []string{"", "acpv1"} {
		slow, n0, live0 := run(false, fail)
		fast, n1, live1 := run(true, fail)
		a, b := files(t, slow), files(t, fast)
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("fail %q: %d files, %d with the plugins prelaunched", fail, len(a), len(b))
		}
		for name, want := range a {
			if !bytes.Equal(b[name], want) {
				t.Errorf("fail %q: %s differs", fail, name)
			}
		}
		for _, name := range builtinRevision() {
			if n0[name] != 2 || n1[name] != 3 {
				t.Errorf("fail %q: %s launched %d times, %d prelaunched; want 2, 3", fail, name, n0[name], n1[name])
			}
		}
		if live0 != 0 || live1 != 0 {
			t.Errorf("fail %q: plugins left running: %d, %d prelaunched", fail, live0, live1)
		}
	}
}

// files is every file of a store but its logs, by path.
func files(t *testing.T, root string) map[string][]byte {
	out := map[string][]byte{}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if strings.HasPrefix(rel, "logs") || strings.HasPrefix(rel, "tmp") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.Index(rel, ".prev-"); i >= 0 {
			rel = rel[:i] + ".prev"
		}
		out[rel] = append(out[rel], b...)
		return nil
	})
	return out
}
