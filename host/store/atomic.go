package store

// WriteFileAtomic replaces path with data (mode 0600) through a temporary
// file in the same directory, synced, and a rename: a reader sees the old
// bytes or the new, never a part.
func WriteFileAtomic(path string, data []byte) error { return writeFileAtomic(path, data) }
