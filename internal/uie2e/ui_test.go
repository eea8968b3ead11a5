package uie2e

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestViewerInChromium walks the viewer as a person would: the sessions
// page of a store recorded through the SDK peers (one session watched live
// while it is recorded), a search, a session with a tool call expanded, a
// record followed to its frames and back, an export opened offline.
func TestViewerInChromium(t *testing.T) {
	ctx := browser(t)
	store := filepath.Join(t.TempDir(), "store")
	demoID := demo(t, store)
	ui := startUI(t, store)
	const countMsgs = `document.querySelectorAll('#transcript .item[data-kind="message"]').length`

	// Live: a recording paced by the test; the page is open before the
	// second prompt is sent.
	pc := newPacedClient(t, store, "basic: say hello", "everything: please fix the greeting")
	pc.until(pc.index(`"session/prompt"`, 2))
	sid := "sdk-v2-session-1"
	waitFile(t, filepath.Join(store, "sessions", sid, "stream.asr.jsonl"))
	do(t, ctx, chromedp.Navigate(ui.url+"#/s/"+sid), chromedp.WaitVisible(`#transcript .item`))
	before := eval[int](t, ctx, countMsgs)
	screenshot(t, ctx, "live-before")
	pc.finish()
	waitTrue(t, ctx, fmt.Sprintf(`%s > %d`, countMsgs, before))
	t.Logf("live: %d messages before the second turn, %d after, without a reload", before, eval[int](t, ctx, countMsgs))
	screenshot(t, ctx, "live-after")

	// The sessions page: both sessions.
	do(t, ctx, chromedp.Navigate(ui.base+"/#/"), chromedp.WaitVisible(`#sessions tbody tr`))
	ids := eval[[]string](t, ctx, `[...document.querySelectorAll('#sessions tbody tr')].map(r => r.dataset.id)`)
	if len(ids) != 2 || !contains(ids, sid) || !contains(ids, demoID) {
		t.Fatalf("sessions page lists %v, want %s and %s", ids, sid, demoID)
	}
	screenshot(t, ctx, "sessions")

	// Search: words only the demo session holds (its second prompt).
	do(t, ctx, chromedp.SendKeys(`#q`, "What does main.go"), chromedp.Click(`#go`))
	waitTrue(t, ctx, `location.hash.includes("q=What") && document.querySelectorAll('#sessions tbody tr').length === 1`)
	ids = eval[[]string](t, ctx, `[...document.querySelectorAll('#sessions tbody tr')].map(r => r.dataset.id)`)
	if len(ids) != 1 || ids[0] != demoID {
		t.Fatalf("search found %v, want only %s", ids, demoID)
	}
	screenshot(t, ctx, "search")

	// Open it; reasoning is collapsed; expand a tool call.
	do(t, ctx, chromedp.Click(`#sessions tbody tr a.open`), chromedp.WaitVisible(`#transcript .item.tool`))
	if eval[bool](t, ctx, `!!document.querySelector('#transcript details.reasoning[open]')`) {
		t.Error("reasoning is expanded by default")
	}
	do(t, ctx, chromedp.Click(`#transcript .item.tool details.tool > summary`), chromedp.WaitVisible(`#transcript .item.tool pre.input`))
	input := eval[string](t, ctx, `document.querySelector('#transcript .item.tool pre.input').textContent`)
	if !strings.Contains(input, "main.go") {
		t.Errorf("the expanded tool call shows input %q", input)
	}
	if !eval[bool](t, ctx, `!!document.querySelector('#usage-chart svg polyline')`) {
		t.Error("no usage chart for a session with two usage summaries")
	}
	screenshot(t, ctx, "session")

	// Follow the tool call's record to its frames, then a frame back to
	// its record.
	href := eval[string](t, ctx, `document.querySelector('#transcript .item.tool a.frames').getAttribute('href')`)
	do(t, ctx, chromedp.Click(`#transcript .item.tool a.frames`), chromedp.WaitVisible(`#wire tr.frame.hl`))
	hl := eval[[]int](t, ctx, `[...document.querySelectorAll('#wire tr.frame.hl')].map(r => +r.dataset.seq)`)
	u, _ := url.Parse("http://x/" + strings.TrimPrefix(href, "#"))
	var got []string
	for _, n := range hl {
		got = append(got, fmt.Sprint(n))
	}
	if strings.Join(got, ",") != u.Query().Get("frames") {
		t.Errorf("wire page highlights frames %v, the record cites %s", got, u.Query().Get("frames"))
	}
	screenshot(t, ctx, "wire")
	back := eval[string](t, ctx, `document.querySelector('#wire tr.frame.hl a.record').getAttribute('href')`)
	do(t, ctx, chromedp.Click(`#wire tr.frame.hl a.record`), chromedp.WaitVisible(`#transcript .item.hl`))
	rec := back[strings.LastIndex(back, "record=")+len("record="):]
	recs := eval[string](t, ctx, `document.querySelector('#transcript .item.hl').dataset.records`)
	if !contains(strings.Fields(recs), rec) {
		t.Errorf("following %s back highlights an item of records %q", rec, recs)
	}

	// Export HTML and open the file itself, offline, in the browser.
	exportURL := eval[string](t, ctx, `document.querySelector('#export-html').getAttribute('href')`)
	html := fetchWithCookie(t, ctx, ui.base+exportURL)
	if bytes.Contains(html, []byte("<script")) || bytes.Contains(html, []byte("<link")) || bytes.Contains(html, []byte(" src=")) {
		t.Error("the export loads something from elsewhere")
	}
	file := filepath.Join(t.TempDir(), "session.html")
	os.WriteFile(file, html, 0o600)
	do(t, ctx, chromedp.Navigate("file://"+file), chromedp.WaitVisible(`#export`))
	title := eval[string](t, ctx, `document.title`)
	if n := eval[int](t, ctx, `document.querySelectorAll('#export .item.tool').length`); n < 2 || !strings.Contains(title, demoID) {
		t.Errorf("the exported page has title %q and %d tool cards", title, n)
	}
	screenshot(t, ctx, "export")
}

// fetchWithCookie downloads a URL from the page, with its cookie (the
// token), as a click on the link would.
func fetchWithCookie(t *testing.T, ctx context.Context, u string) []byte {
	t.Helper()
	body, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`fetch(%q).then(r => r.text())`, u), chromedp.EvalAwaitPromise))
	must(t, err)
	return []byte(body)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// waitFile waits until a file has a complete record after its header (the
// recording's plugins write it off the copy path).
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if b, err := os.ReadFile(path); err == nil && bytes.Count(b, []byte("\n")) >= 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not written", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
