package ui

import (
	"encoding/json"
	"testing"
)

// TestFirstScreenDoesNotWaitForTheSummary (issue 14): a cold /api/session
// answers its window with the summary null (the stream is being read for
// it in the background); /api/summary answers it, and from then on
// /api/session carries it too.
func TestFirstScreenDoesNotWaitForTheSummary(t *testing.T) {
	st := newStore(t, "s1")
	ts, srv := serve(t, st)
	tok := "&token=" + srv.Token()
	var page struct {
		Summary *Summary        `json:"summary"`
		View    json.RawMessage `json:"view"`
	}
	code, body := get(t, ts.URL+"/api/session?id=s1"+tok, nil)
	if code != 200 || json.Unmarshal([]byte(body), &page) != nil || len(page.View) < 10 {
		t.Fatalf("%d %s", code, body)
	}
	// A summary already read by then (a fast machine) is allowed; a
	// summary not yet read must be null, never a partial one.
	if page.Summary != nil && page.Summary.Turns == 0 {
		t.Errorf("a partial summary on the first screen: %+v", page.Summary)
	}
	var sum Summary
	code, body = get(t, ts.URL+"/api/summary?id=s1"+tok, nil)
	if code != 200 || json.Unmarshal([]byte(body), &sum) != nil || sum.Turns == 0 || sum.Key != "s1" {
		t.Fatalf("/api/summary: %d %s", code, body)
	}
	code, body = get(t, ts.URL+"/api/session?id=s1"+tok, nil)
	if code != 200 || json.Unmarshal([]byte(body), &page) != nil || page.Summary == nil || page.Summary.Turns != sum.Turns {
		t.Fatalf("after the summary was read: %d %s", code, body)
	}
	for _, bad := range []string{"nope", "../../../etc/passwd"} {
		if code, _ := get(t, ts.URL+"/api/summary?id="+bad+tok, nil); code != 404 {
			t.Errorf("/api/summary?id=%s: %d", bad, code)
		}
	}
	if code, _ := get(t, ts.URL+"/api/summary?id=s1", nil); code != 403 {
		t.Errorf("/api/summary without the token: %d", code)
	}
}
