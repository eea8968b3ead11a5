package ui

import (
	"maps"
	"slices"
	"strings"

	"github.com/acptap/acptap/host/ship"
	"github.com/acptap/acptap/host/store"
)

func centralOrigins(st *store.Store) map[string]*store.Store { return ship.Origins(st.Root()) }

// keys lists every session's key: its ID, or origin/ID in a central store.
func (s *Server) keys() ([]string, error) {
	if s.origins == nil {
		return s.st.Sessions()
	}
	var out []string
	for _, origin := range slices.Sorted(maps.Keys(s.origins)) {
		ids, err := s.origins[origin].Sessions()
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			out = append(out, origin+"/"+id)
		}
	}
	return out, nil
}

// resolve finds the store and session ID a key names.
func (s *Server) resolve(key string) (st *store.Store, id, origin string, ok bool) {
	if s.origins == nil {
		return s.st, key, "", true
	}
	origin, id, found := strings.Cut(key, "/")
	st, ok = s.origins[origin]
	return st, id, origin, found && ok
}
