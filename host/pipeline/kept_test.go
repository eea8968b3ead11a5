package pipeline

import (
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// TestKeptScanSameFrames: a rebuild whose window takes the entries its
// planning scan kept (ScanWireKeeping), and reads the rest of the log on
// from where the scan's reader stood after them, gives each plugin exactly
// the batches the window gave it decoding the whole log (the old path),
// for budgets that keep the whole log, nothing, and ends at many places
// of it (beside the bad lines, the seq gap, the seq repeated, the gap and
// the session entries of windowTestLog), in process and over gRPC, with a
// tight window; and the scan gives the budget back what it did not keep.
func TestKeptScanSameFrames(t *testing.T) {
	path := windowTestLog(t, 700)
	old := rebuildFailing(t, path, true, false, nil, [2]int{}, nil, 0, mustScan(t, path, nil))
	fi, _ := os.Stat(path)
	budgets := []int64{1 << 30, 1, 200}
	for b := int64(500); b < fi.Size()+int64(700*keptCost); b += fi.Size() / 23 {
		budgets = append(budgets, b)
	}
	ends := map[int]bool{}
	for _, b := range budgets {
		var budget atomic.Int64
		budget.Store(b)
		scan := mustScan(t, path, &budget)
		held := int64(0)
		if scan.kept != nil {
			for _, e := range scan.kept.entries {
				held += int64(len(e.line)) + keptCost
				if e.other > 0 {
					held += int64(len(scan.kept.others[e.other-1].Line))
				}
			}
			ends[len(scan.kept.entries)] = true
			if b == 1<<30 && scan.kept.resume != nil {
				t.Errorf("budget %d: the whole log fits, yet a place to read on from", b)
			}
		}
		if got := budget.Load(); got != b-held {
			t.Errorf("budget %d: %d left, %d kept", b, got, held)
		}
		sameRun(t, "kept", rebuildFailing(t, path, true, false, nil, [2]int{}, nil, 0, scan), old)
	}
	if len(ends) < 10 {
		t.Errorf("the kept entries ended at %d places only", len(ends))
	}
	for _, b := range []int64{1 << 30, fi.Size() / 3} {
		var budget atomic.Int64
		budget.Store(b)
		sameRun(t, "kept, gRPC, a slow, window of 2 blocks",
			rebuildFailing(t, path, true, true, map[string]time.Duration{"a": time.Millisecond}, [2]int{2, 1 << 20}, nil, 0, mustScan(t, path, &budget)), old)
	}
	// Off: the window decodes the whole log, whatever the scan kept.
	defer func(b bool) { useKept = b }(useKept)
	useKept = false
	var budget atomic.Int64
	budget.Store(1 << 30)
	sameRun(t, "kept, not used", rebuildFailing(t, path, true, false, nil, [2]int{}, nil, 0, mustScan(t, path, &budget)), old)
}

func mustScan(t *testing.T, path string, budget *atomic.Int64) *WireScan {
	t.Helper()
	s, err := ScanWireKeeping(path, budget)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
