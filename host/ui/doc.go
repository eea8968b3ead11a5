// Package ui is acptap's local web viewer: a read-only HTTP server over one
// store, with its page, script and styles embedded (it works offline). It
// lists the store's sessions with search and filters, shows a session's
// transcript (host/transcript) with its wire frames, follows a recording
// live over server-sent events, compares two streams record by record, and
// exports a session as one self-contained HTML file or Markdown.
//
// Every request must carry the per-run token (in the URL once, then a
// cookie), a Host naming the address the server was asked to listen on,
// and no foreign Origin; session and wire names are looked up in the store,
// never joined into paths.
package ui
