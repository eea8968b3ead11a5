package asr

import (
	"strconv"
	"strings"
)

// PathRef is a path relative to a workspace root (ASR-711). Root is nil
// (JSON null) when no root contains the path; Path is then absolute. A path
// equal to its root is "".
type PathRef struct {
	Root *string `json:"root"`
	Path string  `json:"path"`
}

// RootIDs names roots in declaration order: root0 (the cwd), root1, ….
func RootIDs(paths []string) []Root {
	roots := make([]Root, len(paths))
	for i, p := range paths {
		p := p
		roots[i] = Root{ID: "root" + strconv.Itoa(i), Path: &p}
	}
	return roots
}

// Ref converts an absolute path to a PathRef against the first root whose
// path is a segment-wise prefix of it. Roots with a null (redacted) path
// never match. A remainder with empty, "." or ".." segments does not count
// as inside the root, so a PathRef never points outside its root.
func Ref(roots []Root, abs string) PathRef {
	for i := range roots {
		if roots[i].Path == nil {
			continue
		}
		if rel, ok := relative(*roots[i].Path, abs); ok {
			id := roots[i].ID
			return PathRef{Root: &id, Path: rel}
		}
	}
	return PathRef{Path: abs}
}

// RefOK is Ref for a path from the wire, which may be anything: ok is
// false when p is not an absolute path (POSIX, or Windows with a drive or
// UNC prefix), since no PathRef can hold it. A remainder inside a root that
// is not a clean relative path in either separator (`a\..\b` under a
// POSIX root) is written with root null and the absolute path, so the
// result always passes the validator's ASR-711 checks.
func RefOK(roots []Root, p string) (PathRef, bool) {
	ref := Ref(roots, p)
	if ref.Root != nil && IsCleanRelPath(ref.Path) {
		return ref, true
	}
	if !IsAbsPath(p) {
		return PathRef{}, false
	}
	return PathRef{Path: p}, true
}

// relative reports abs relative to root when root is a segment-wise prefix.
// Separators are "/", and also "\" when the root uses them (Windows paths).
func relative(root, abs string) (string, bool) {
	if root == "" {
		return "", false
	}
	seps := "/"
	if strings.Contains(root, `\`) {
		seps = `/\`
	}
	isSep := func(b byte) bool { return strings.IndexByte(seps, b) >= 0 }
	prefix := root
	for len(prefix) > 0 && isSep(prefix[len(prefix)-1]) {
		prefix = prefix[:len(prefix)-1]
	}
	rest, ok := strings.CutPrefix(abs, prefix)
	if !ok {
		return "", false
	}
	if rest == "" {
		return "", true
	}
	if !isSep(rest[0]) {
		return "", false // "/w" is not a prefix of "/wx"
	}
	rest = rest[1:]
	if rest == "" {
		return "", true // the root itself, written with a trailing separator
	}
	start := 0
	for i := 0; i <= len(rest); i++ {
		if i < len(rest) && !isSep(rest[i]) {
			continue
		}
		if seg := rest[start:i]; seg == "" || seg == "." || seg == ".." {
			return "", false
		}
		start = i + 1
	}
	return rest, true
}

// IsAbsPath reports whether p is an absolute POSIX or Windows path.
func IsAbsPath(p string) bool {
	switch {
	case strings.HasPrefix(p, "/"), strings.HasPrefix(p, `\\`):
		return true
	case len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/'):
		c := p[0] | 0x20
		return c >= 'a' && c <= 'z'
	}
	return false
}

// IsCleanRelPath reports whether p is "" or segments without empty, "." or
// ".." ones ("/" or "\" separated), not starting with a separator.
func IsCleanRelPath(p string) bool {
	if p == "" {
		return true
	}
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' && p[i] != '\\' {
			continue
		}
		if seg := p[start:i]; seg == "" || seg == "." || seg == ".." {
			return false
		}
		start = i + 1
	}
	return true
}
