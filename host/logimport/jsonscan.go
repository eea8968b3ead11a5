package logimport

import "github.com/acptap/acptap/internal/jsonscan"

// member returns the raw value of obj's member key (as written, escapes not
// decoded), nil if it has none.
func member(obj []byte, key string) []byte {
	var out []byte
	jsonscan.Members(obj, func(k, v []byte) bool {
		if string(k) == key {
			out = v
			return false
		}
		return true
	})
	return out
}
