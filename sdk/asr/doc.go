// Package asr is the Agent Session Record model shared by acptap plugins and
// tools: the stream header, the record envelope and the record bodies with
// their JSON field names, PathRef conversion, and a streaming reader that
// honours the LF commit mark, and the context view (ContextView). It
// imports only the standard library and internal/jsonscan (itself standard
// library only), so any plugin or tool can use it without pulling in the
// host or a JSON Schema validator: the ASR JSON Schema and the stream
// validator are in sdk/asr/asrcheck, beside it.
//
// Marshal encodes any of these types deterministically (struct fields in
// declaration order, map keys sorted, no HTML escaping), which is what makes
// a mapper's output byte-identical across reruns.
package asr
