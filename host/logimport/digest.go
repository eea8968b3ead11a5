package logimport

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/wire"
)

// framesDigest is the hex SHA-256 of the frames the input at path yields
// (wire.Source.FramesSHA256): per frame its direction, its bytes and an
// LF, in order; gaps count too. A read of its own, before the conversion:
// the digest decides whether there is anything to convert.
func framesDigest(path string, format Format, maxLine int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r, _, err := decompress(f)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	s := NewScanner(r, format, maxLine)
	s.Borrow = true // each frame is hashed before the next is read
	for {
		fr, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		it := fr.Item
		if it.Gap != nil {
			h.Write([]byte("gap\n"))
			continue
		}
		h.Write([]byte(it.Dir.String() + " "))
		h.Write(it.Line)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sameFrames finds a converted wire log of st whose input yielded the
// frames with digest sum.
func sameFrames(st *store.Store, sum string) (conn, path string, ok bool) {
	logs, _ := filepath.Glob(filepath.Join(store.WireDir(st.Root()), ConnectionPrefix+"*.jsonl"))
	for _, p := range logs {
		r, err := wire.Open(p)
		if err != nil {
			continue
		}
		h := r.Header()
		r.Close()
		if h.Source != nil && h.Source.FramesSHA256 == sum {
			return strings.TrimSuffix(filepath.Base(p), ".jsonl"), p, true
		}
	}
	return "", "", false
}
