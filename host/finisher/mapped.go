package finisher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/wire"
)

// A recording whose mapping kept up writes every output before it exits, but does not wait
// for the disk: an fsync of the wire log was 14 ms of a quiet exit on this project's
// machine, and an fsync waits behind whatever else is being written back. It marks the
// connection mapped (Mapped) and hands the marker to a finisher, which syncs the wire log
// and removes the marker (Complete). A marker left mapped (that finisher killed) is done the
// same way by the next command, unless the machine has restarted since: the page cache the
// outputs were in may then be lost, and the connection is mapped again from what of its
// wire log is on disk. The boot is told by the kernel's boot ID.

// stateMapped: every output of the connection is written; the wire log is not yet synced.
const stateMapped = "mapped"

// errNoBootID: the system does not say which boot this is.
var errNoBootID = errors.New("no boot ID (/proc/sys/kernel/random/boot_id)")

// BootID is the kernel's ID of this boot ("" where there is none): a marker written in
// another boot may have lost what was in the page cache.
var BootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

// Mapped records that the connection's outputs are all written and only the wire log's sync
// is left. It fails where there is no boot ID: the recording then syncs and completes the
// connection itself (Done).
func (m *Marker) Mapped() error {
	boot := BootID()
	if boot == "" {
		return errNoBootID
	}
	return m.write(state{State: stateMapped, Boot: boot})
}

// syncMapped completes a connection its recording mapped in this boot: the wire log is
// synced and the marker removed. ok is false when the marker is not such a one (not mapped,
// or mapped before a restart: the caller maps it again).
func syncMapped(m *Marker, path string, log hclog.Logger) (ok bool, err error) {
	s, _ := readState(m.path)
	if s.State != stateMapped {
		return false, nil
	}
	if s.Boot == "" || s.Boot != BootID() {
		log.Warn("connection mapped before the machine restarted; mapping it again from its wire log", "connection", m.Conn)
		return false, nil
	}
	if err := wire.SyncFile(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		m.Release()
		return true, fmt.Errorf("finish %s: %w", m.Conn, err)
	}
	log.Info("connection finished: mapped by its recording, wire log synced", "connection", m.Conn)
	return true, m.Done()
}
