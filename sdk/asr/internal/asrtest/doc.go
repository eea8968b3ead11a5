// Package asrtest holds the valid ASR stream recorded from ACP that the
// tests of sdk/asr (the context view) and sdk/asr/asrcheck (the validator)
// edit line by line. It imports neither, so both can use it.
package asrtest
