package acpasr

import (
	"math/rand/v2"
	"testing"
)

// strCache.text gives what asString gives, for strings it caches and
// strings it does not, with slots taken over by other strings.
func TestStrCacheSameAsString(t *testing.T) {
	var c strCache
	alphabet := []byte("ab\"\\\x01\x1f \x7f\x80\xff\xc3\xa9zu0/")
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200000 {
		v := []byte{'"'}
		for range rng.IntN(70) {
			if rng.IntN(4) == 0 {
				v = append(v, alphabet[rng.IntN(len(alphabet))])
			} else {
				v = append(v, byte('a'+rng.IntN(3)))
			}
		}
		switch rng.IntN(8) {
		case 0: // unterminated
		case 1:
			v = append(v, '"', ' ')
		default:
			v = append(v, '"')
		}
		got, gotOK := c.text(v)
		want, wantOK := asString(v)
		if got != want || gotOK != wantOK {
			t.Fatalf("strCache.text(%q) = %q, %v; asString %q, %v", v, got, gotOK, want, wantOK)
		}
	}
}
