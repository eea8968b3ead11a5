package uie2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestLongSessionInChromium: a session longer than a page (1,200 records,
// 500 a page) shows its first page with the summary filled in after it
// (the first screen does not wait for a long stream's summary), and "more
// records" appends the next page.
func TestLongSessionInChromium(t *testing.T) {
	ctx := browser(t)
	store := filepath.Join(t.TempDir(), "store")
	dir := filepath.Join(store, "sessions", "long")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "stream.asr.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, `{"type":"header","asr":"0.1","sessionId":"long","createdAt":"2026-12-01T00:00:00Z","agent":{"name":"bench","version":"1"},"producer":{"method":"recorder","name":"acptap","lossy":[]}}`)
	for i := 1; i <= 1200; i++ {
		if i%2 == 1 {
			fmt.Fprintf(w, `{"type":"message","seq":%d,"id":"r%d","ts":"2026-12-01T00:00:01Z","messageId":"u%d","role":"user","origin":"prompt","content":[{"type":"text","text":"prompt %d"}]}`+"\n", i, i, i, i)
		} else {
			fmt.Fprintf(w, `{"type":"state","seq":%d,"id":"r%d","ts":"2026-12-01T00:00:02Z","state":"idle","stopReason":"end_turn"}`+"\n", i, i)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ui := startUI(t, store)
	const items = `document.querySelectorAll('#transcript .item').length`
	do(t, ctx, chromedp.Navigate(ui.url+"#/s/long"), chromedp.WaitVisible(`#transcript .item`))
	if n := eval[int](t, ctx, items); n != 500 {
		t.Errorf("first page: %d items, want 500", n)
	}
	waitTrue(t, ctx, `document.querySelector('#summary').textContent.includes("600 turns")`)
	do(t, ctx, chromedp.Click(`#more`))
	waitTrue(t, ctx, items+` === 1000`)
	do(t, ctx, chromedp.Click(`#more`))
	waitTrue(t, ctx, items+` === 1200 && !document.querySelector('#more')`)
	screenshot(t, ctx, "long-session")
}
