package captured

import "io"

// batchWriter gathers buffers and writes them together: with writev on a file
// (writevFile), one system call and one copy per batch; otherwise one Write each.
type batchWriter struct {
	w    io.Writer
	bufs [][]byte
	size int
	tmp  []byte // scratch for the records' fixed parts, reused per batch
}

// batchBuffers and batchBytes bound a batch.
const (
	batchBuffers = 512
	batchBytes   = 8 << 20
)

func newBatchWriter(w io.Writer) *batchWriter {
	return &batchWriter{w: w, tmp: make([]byte, 0, batchBuffers*recordSize)}
}

func (b *batchWriter) add(p []byte) {
	b.bufs = append(b.bufs, p)
	b.size += len(p)
}

// scratch copies a small buffer into the batch's scratch space (valid until flush).
func (b *batchWriter) scratch(p []byte) []byte {
	if cap(b.tmp)-len(b.tmp) < len(p) {
		b.tmp = make([]byte, 0, max(cap(b.tmp), len(p))) // the old one stays with its batch
	}
	s := len(b.tmp)
	b.tmp = append(b.tmp, p...)
	return b.tmp[s:len(b.tmp):len(b.tmp)]
}

func (b *batchWriter) full() bool { return len(b.bufs) >= batchBuffers-1 || b.size >= batchBytes }

func (b *batchWriter) flush() error {
	if len(b.bufs) == 0 {
		return nil
	}
	err := writeBuffers(b.w, b.bufs)
	clear(b.bufs)
	b.bufs, b.size, b.tmp = b.bufs[:0], 0, b.tmp[:0]
	return err
}

func writeEach(w io.Writer, bufs [][]byte) error {
	for _, p := range bufs {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}
