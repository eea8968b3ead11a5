// Package rebuildtest holds the end-to-end tests of `acptap rebuild`
// (issue 10, issue 18.4): sessions recorded live through `acptap record`
// with the official SDK peers over two and three connections (resume,
// fork, load), rebuilt from their wire logs — with and without session
// entries, one file per call, all in one call in any order, and --all —
// and compared with what the live runs wrote. It has only tests.
package rebuildtest
