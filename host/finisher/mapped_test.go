package finisher

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/store"
)

// TestMappedMarker: a connection its recording mapped to the end (Mapped) is completed by
// the next finisher with a sync of its wire log and the marker's removal, nothing mapped
// again, whoever holds the marker meanwhile; it holds up no other connection of its
// sessions. A mapped marker from another boot is not taken as complete: its outputs may
// have been lost with the page cache, so it is mapped again (and holds up its sessions).
func TestMappedMarker(t *testing.T) {
	if BootID() == "" {
		t.Skip("no boot ID on this system: record syncs before it exits")
	}
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wirePath := st.WirePath("c-m")
	if err := os.MkdirAll(filepath.Dir(wirePath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wirePath, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := Create(st, "c-m")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Mapped(); err != nil {
		t.Fatal(err)
	}
	if mayWrite(st, "c-m", "s1") {
		t.Error("a mapped connection, held, holds up its sessions")
	}
	m.Release() // the finisher it went to was killed before the sync
	if mayWrite(st, "c-m", "s1") {
		t.Error("a mapped connection, abandoned, holds up its sessions")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// No Pipeline in the options: a mapping would fail.
	res, err := CompleteAll(ctx, Options{Store: st}, true)
	if err != nil || len(res) != 1 || !res[0].Synced || res[0].Conn != "c-m" {
		t.Fatalf("CompleteAll = %+v, %v; want c-m synced", res, err)
	}
	if c, _ := Pending(st); len(c) != 0 {
		t.Errorf("pending after the sync: %v", c)
	}

	// Another boot's.
	m, err = Create(st, "c-old")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.write(state{State: stateMapped, Boot: "an-earlier-boot"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := syncMapped(m, wirePath, hclog.NewNullLogger()); ok || err != nil {
		t.Errorf("syncMapped of another boot's marker = %v, %v; want it mapped again", ok, err)
	}
	m.Release()
	if !mayWrite(st, "c-old", "s1") {
		t.Error("a connection mapped before a restart does not hold up its sessions (it is mapped again)")
	}
	if c, _ := Pending(st); len(c) != 1 || c[0] != "c-old" {
		t.Errorf("pending = %v, want c-old left for a mapping", c)
	}
}
