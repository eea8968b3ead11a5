package asr

import (
	"bytes"
	"testing"
)

// samePrepared fails unless Prepare gives FingerprintOf's fingerprint and
// error, and Line, once the record has its place as a recorder sets it
// (seq, id, times, links, native.ref), Marshal's line and a fingerprint
// that has not changed.
func samePrepared(t testing.TB, rec Record, werr error) {
	t.Helper()
	for _, omit := range [][]string{nil, {"messageId"}, {"type", "native"}} {
		wfp, wferr := FingerprintOf(rec, omit...)
		p, err := Prepare(rec, omit...)
		if (err == nil) != (wferr == nil) || err != nil && err.Error() != wferr.Error() {
			t.Fatalf("%T %v: Prepare error %v, FingerprintOf %v", rec, omit, err, wferr)
		}
		if err != nil {
			continue
		}
		if p.Fingerprint() != wfp {
			t.Fatalf("%T %v: Prepare's fingerprint %x, FingerprintOf %x", rec, omit, p.Fingerprint(), wfp)
		}
		if len(omit) == 1 {
			p.Release()
			continue
		}
		placed := place(rec, len(omit))
		line, err := p.Line()
		want, merr := Marshal(rec)
		if (err == nil) != (merr == nil) || !bytes.Equal(line, want) {
			t.Fatalf("%T %v: Line %s (%v), Marshal %s (%v)", rec, omit, line, err, want, merr)
		}
		if after, _ := FingerprintOf(rec, omit...); placed && after != wfp {
			t.Fatalf("%T %v: the place changed the fingerprint %x → %x", rec, omit, wfp, after)
		}
	}
	_ = werr
}

// place sets rec's place and links two ways (as sdk.Stream.Write and a
// recorder set them, or cleared); false when rec has no envelope to set.
func place(rec Record, how int) bool {
	env, prov := rec.Env(), rec.Prov()
	if env == nil || prov == nil {
		return false
	}
	if how == 0 {
		env.Seq, env.ID, env.TS, env.TSSource, env.ObservedAt = 7, "r7", "2026-10-26T14:30:41.207Z", TSSourceRecorder, ""
		env.Supersedes, env.CopiedFrom = "r3", &CopiedFrom{Session: "p", Record: "r1", Proof: ProofNativeID}
		if prov.Native == nil {
			prov.Native = &Native{}
		}
		prov.Native.Ref = &NativeRef{Wire: "w \xff.jsonl", Frames: []uint64{4, 9}}
		prov.Assembly = AssemblyFolded
		return true
	}
	env.Seq, env.ID, env.TS, env.TSSource, env.ObservedAt, env.Supersedes, env.CopiedFrom = 0, "", "", "", "\u2028", "", nil
	if prov.Native != nil {
		prov.Native.Ref = nil
	}
	prov.Assembly = ""
	return true
}
