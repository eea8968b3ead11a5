package testpeers

import (
	"context"
	"testing"
	"time"

	"github.com/acptap/acptap/host/finisher"
	"github.com/acptap/acptap/host/store"
)

// WaitMapped waits, after an `acptap record` into root has exited, for the
// finisher it may have handed its mapping to (host/finisher): record exits
// with the agent, and the outputs are complete once no connection of the
// store is pending.
func WaitMapped(t testing.TB, root string) {
	t.Helper()
	st, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := finisher.WaitIdle(ctx, st); err != nil {
		t.Fatalf("mapping not finished after record exited: %v", err)
	}
}
