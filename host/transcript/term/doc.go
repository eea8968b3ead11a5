// Package term renders for a terminal what package transcript reads:
// `acptap show` of an ASR stream (Show: the header with every declared
// loss, then each record in stream order, by the renderer its type has in
// the renderers table), of a wire log (Wire: one line per frame, gaps,
// the sessions named and the requests that failed), and the summary of a
// store `acptap demo` prints (Report). The transcript decodes each record
// once (transcript.Reader); the web viewer and the exports render the same
// records folded into items (transcript.Build). All output passes a
// sanitiser: the only escapes that reach the terminal are its own colours.
package term
