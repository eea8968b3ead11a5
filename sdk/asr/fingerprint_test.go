package asr

import "testing"

// TestRecordFingerprint: the fingerprint ignores what differs between
// revisions and copies of the same content (place, times, links, assembly,
// native.ref) and member order, and sees every other change.
func TestRecordFingerprint(t *testing.T) {
	base := `{"type":"message","seq":3,"id":"r3","ts":"2026-10-26T14:30:41.207Z","tsSource":"recorder","messageId":"m","content":[{"type":"text","text":"hi"}],"native":{"ref":{"wire":"w","frames":[1]}},"assembly":"chunks","_meta":{"a":1.50}}`
	same := []string{
		`{"messageId":"m","type":"message","content":[{"text":"hi","type":"text"}],"_meta":{"a":1.50}}`,
		`{"type":"message","seq":9,"id":"r9","observedAt":"2026-10-27T00:00:00.000Z","supersedes":"r3","copiedFrom":{"session":"p","record":"r1","proof":"native_id"},"messageId":"m","content":[{"type":"text","text":"hi"}],"native":{"ref":{"wire":"x","frames":[7,8]}},"assembly":"folded","_meta":{"a":1.50}}`,
	}
	differ := []string{
		`{"type":"message","messageId":"m","content":[{"type":"text","text":"hi!"}],"_meta":{"a":1.50}}`,
		`{"type":"message","messageId":"m","content":[{"type":"text","text":"hi"}],"_meta":{"a":1.5}}`,
		`{"type":"message","messageId":"m","content":[{"type":"text","text":"hi"}]}`,
		`{"type":"org.x/y","native":{"record":{"a":1}}}`,
	}
	want, err := RecordFingerprint([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range same {
		if got, _ := RecordFingerprint([]byte(s)); got != want {
			t.Errorf("differs from the base: %s", s)
		}
	}
	for _, s := range differ {
		if got, _ := RecordFingerprint([]byte(s)); got == want {
			t.Errorf("same as the base: %s", s)
		}
	}
	a, _ := RecordFingerprint([]byte(`{"type":"org.x/y","native":{"record":{"a":1}}}`))
	b, _ := RecordFingerprint([]byte(`{"type":"org.x/y","native":{"record":{"a":2},"ref":{"wire":"w","frames":[1]}}}`))
	if a == b {
		t.Error("native.record is content")
	}
	n1, _ := RecordFingerprint([]byte(`{"type":"message","messageId":"notice:0:4","content":[]}`), "messageId")
	n2, _ := RecordFingerprint([]byte(`{"type":"message","messageId":"notice:1:9","content":[]}`), "messageId")
	if n1 != n2 {
		t.Error("omit did not leave out messageId")
	}
	if _, err := RecordFingerprint([]byte(`[1]`)); err == nil {
		t.Error("an array has a fingerprint")
	}
}
