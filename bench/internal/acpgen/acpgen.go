// Package acpgen generates the synthetic ACP v2 (schema 2.0.0-alpha.9)
// traffic the benchmarks push through acptap: the handshake of one
// connection (initialize, session/new, session/prompt and their responses),
// a long agent → client stream of session/update notifications, and a long
// client → agent stream of mcp/message notifications.
//
// The agent stream is made of turns of exactly UpdatesPerTurn updates:
//
//	state_update running
//	agent_thought_chunk × 8        (messageId th-<turn>)
//	agent_message_chunk × 40       (messageId msg-<turn>)
//	tool_call_update pending       (toolCallId call-<turn>, title, kind, rawInput, locations)
//	tool_call_update in_progress
//	tool_call_content_chunk × 10
//	tool_call_update completed     (rawOutput)
//	agent_message_chunk × 37       (messageId ans-<turn>)
//	state_update idle, end_turn
//
// so that every entity the acpv2 mapper folds is closed within its turn and
// the mapper's state stays bounded however long the stream is. Every turn
// has its own ids. Text chunks vary in length (16–200 characters, JSON
// escapes included); an update line averages about 310 bytes.
//
// Generation is cheap enough to never be the bottleneck: a block of
// BlockTurns turns is rendered once, and writing turn n copies the block's
// bytes after patching the fixed-width turn number into its ids.
package acpgen

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"
)

// UpdatesPerTurn is the number of session/update lines in one turn.
const UpdatesPerTurn = 100

// BlockTurns is the number of turns rendered into one reusable block.
const BlockTurns = 64

// SessionID is the one ACP session of the generated connection.
const SessionID = "sess_7f3a9c1e5b2d4f60"

// turnDigits is the fixed width of the turn number in ids.
const turnDigits = 9

// Handshake lines, each with its LF. The agent answers initialize (id 0),
// session/new (id 1) and session/prompt (id 2: ACP v2 answers a prompt at
// once with the user message's id; the turn's end is a state_update).
var (
	InitializeRequest  = []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"bench-editor","version":"1.0.0"},"capabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true}}}` + "\n")
	InitializeResponse = []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"bench-agent","version":"1.0.0"},"capabilities":{"session":{}}}}` + "\n")
	NewSessionRequest  = []byte(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/dev/project","additionalDirectories":["/home/dev/lib"],"mcpServers":[{"type":"stdio","name":"gh","command":"/usr/bin/gh-mcp","args":["--token","SECRET"],"env":[{"name":"GH_TOKEN","value":"SECRET"}]}]}}` + "\n")
	NewSessionResponse = []byte(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"` + SessionID + `"}}` + "\n")
	PromptRequest      = []byte(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"` + SessionID + `","prompt":[{"type":"text","text":"Refactor the storage layer so that every writer flushes once per batch, and explain each step."}]}}` + "\n")
	PromptResponse     = []byte(`{"jsonrpc":"2.0","id":2,"result":{"messageId":"user-1"}}` + "\n")
)

// words feed the text chunks; some carry characters JSON must escape.
var words = []string{
	"the", "writer", "flushes", "once", "per", "batch", "so", "a", "slow", "disk",
	"never", "stalls", "capture", "I'll", "read", "`store.go`", "first,", "then",
	"change", "Append", "to", "buffer", "entries", "and", "call", "Flush", "from",
	"the", "pipeline", "after", "each", "dispatch.", "\\\"quoted\\\"", "path/to/file.go",
	"func", "(w", "*Writer)", "Flush()", "error", "{", "}", "\\n", "—", "naïve",
	"lines", "frames", "sequence", "numbers", "are", "monotonic", "across", "restarts.",
}

// mark is where a turn number is patched into the block.
type mark struct{ off, turn int }

// Stream renders the agent's session/update stream.
type Stream struct {
	block     []byte
	turnStart []int // offset of turn j in block; turnStart[BlockTurns] = len(block)
	marks     []mark
	buf       []byte
}

// NewStream renders the reusable block.
func NewStream() *Stream {
	s := &Stream{}
	rng := uint64(0x9e3779b97f4a7c15)
	next := func(n int) int {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(n))
	}
	text := func(min, max int) string {
		want := min + next(max-min+1)
		var b []byte
		for len(b) < want {
			if len(b) > 0 {
				b = append(b, ' ')
			}
			b = append(b, words[next(len(words))]...)
		}
		return string(b)
	}
	var b []byte
	id := func(prefix string, j int) {
		b = append(b, prefix...)
		s.marks = append(s.marks, mark{off: len(b), turn: j})
		b = append(b, bytes.Repeat([]byte("0"), turnDigits)...)
	}
	head := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + SessionID + `","update":{"sessionUpdate":"`
	const tail = "}}}\n"
	chunk := func(kind, prefix string, j int, t string) {
		b = append(b, head...)
		b = append(b, kind...)
		b = append(b, `","messageId":"`...)
		id(prefix, j)
		b = append(b, `","content":{"type":"text","text":"`...)
		b = append(b, t...)
		b = append(b, `"}`...)
		b = append(b, tail...)
	}
	tool := func(j int, rest string) {
		b = append(b, head...)
		b = append(b, `tool_call_update","toolCallId":"`...)
		id("call-", j)
		b = append(b, `"`...)
		b = append(b, rest...)
		b = append(b, tail...)
	}
	for j := range BlockTurns {
		s.turnStart = append(s.turnStart, len(b))
		b = append(b, head+`state_update","state":"running"`+tail...)
		for range 8 {
			chunk("agent_thought_chunk", "th-", j, text(16, 120))
		}
		for range 40 {
			chunk("agent_message_chunk", "msg-", j, text(16, 200))
		}
		file := fmt.Sprintf("/home/dev/project/internal/store/file%02d.go", j%17)
		tool(j, `,"title":"Read `+file+`","kind":"read","status":"pending","rawInput":{"path":"`+file+`"},"locations":[{"path":"`+file+`","line":`+strconv.Itoa(1+j)+`}]`)
		tool(j, `,"status":"in_progress"`)
		for range 10 {
			b = append(b, head...)
			b = append(b, `tool_call_content_chunk","toolCallId":"`...)
			id("call-", j)
			b = append(b, `","content":{"type":"content","content":{"type":"text","text":"`...)
			b = append(b, text(40, 200)...)
			b = append(b, `"}}`...)
			b = append(b, tail...)
		}
		tool(j, `,"status":"completed","rawOutput":{"bytes":`+strconv.Itoa(1000+17*j)+`}`)
		for range 37 {
			chunk("agent_message_chunk", "ans-", j, text(16, 200))
		}
		b = append(b, head+`state_update","state":"idle","stopReason":"end_turn"`+tail...)
	}
	s.turnStart = append(s.turnStart, len(b))
	s.block = b
	s.buf = make([]byte, len(b))
	return s
}

// Bytes is the exact size of turns [0, n).
func (s *Stream) Bytes(n int) int64 {
	return int64(n/BlockTurns)*int64(len(s.block)) + int64(s.turnStart[n%BlockTurns])
}

// TurnsFor is the smallest number of turns of at least size bytes.
func (s *Stream) TurnsFor(size int64) int {
	n := int(size/int64(len(s.block))) * BlockTurns
	for s.Bytes(n) < size {
		n++
	}
	return n
}

// Block returns the rendered turns [first, first+n) with n ≤ BlockTurns and
// first a multiple of BlockTurns. The slice is reused by the next call.
func (s *Stream) Block(first, n int) []byte {
	copy(s.buf, s.block)
	var d [turnDigits]byte
	for _, m := range s.marks {
		if m.turn >= n {
			break
		}
		t := first + m.turn
		for i := turnDigits - 1; i >= 0; i-- {
			d[i] = byte('0' + t%10)
			t /= 10
		}
		copy(s.buf[m.off:], d[:])
	}
	return s.buf[:s.turnStart[n]]
}

// WriteTurns writes turns [0, n) to w, one block per Write.
func (s *Stream) WriteTurns(w io.Writer, n int) (int64, error) {
	var total int64
	for first := 0; first < n; first += BlockTurns {
		k, err := w.Write(s.Block(first, min(BlockTurns, n-first)))
		total += int64(k)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// WriteTurnsPaced writes turns [0, n) to w, one turn per Write, at most
// rate updates per second (rate ≤ 0: as fast as w takes them). After a
// stall (the reader, or this process, was not scheduled) it goes on at the
// same rate rather than bursting to catch up.
func (s *Stream) WriteTurnsPaced(w io.Writer, n int, rate float64) (int64, error) {
	if rate <= 0 {
		return s.WriteTurns(w, n)
	}
	start := time.Now()
	perTurn := time.Duration(float64(time.Second) * UpdatesPerTurn / rate)
	var total int64
	for first := 0; first < n; first += BlockTurns {
		k := min(BlockTurns, n-first)
		block := s.Block(first, k)
		for j := range k {
			switch d := time.Until(start.Add(time.Duration(first+j) * perTurn)); {
			case d > 0:
				time.Sleep(d)
			case d < -10*time.Millisecond: // behind: move the schedule, do not burst
				start = start.Add(-d)
			}
			m, err := w.Write(block[s.turnStart[j]:s.turnStart[j+1]])
			total += int64(m)
			if err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// EchoLine is the latency benchmarks' line: a 300-byte $/cancel_request
// notification, which ACP v2 allows in both directions, so the echo agent's
// copy conforms too (TestWorkload). Its length is in the request id (a
// string), not in _meta: the wire log's scrubbing walks every _meta, which
// most lines of a session do not have.
func EchoLine() []byte {
	const head, tail = `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"req-`, `"}}` + "\n"
	b := []byte(head)
	for i := 0; len(b) < 300-len(tail); i++ {
		b = append(append(b, words[i%len(words)]...), '-')
	}
	return append(b[:300-len(tail)], tail...)
}

// MCPBlock is about size bytes of client → agent mcp/message notifications
// (the updates of MCP requests the client's ACP MCP server relays to the
// agent, schema 2.0.0-alpha.9 unstable: serverId, requestId, method), 200 B
// to 2 KiB each. They conform (TestWorkload), so acpv2 maps them without a
// diagnostic, as a real session's, and are stateless for the mapper, so the
// block may be repeated. (Until the fifth round of issue 12 they lacked
// serverId, requestId and method: every line was a diagnostic and a log
// line, which the figures before then include.)
func MCPBlock(size int) []byte {
	rng := uint64(0x2545f4914f6cdd1d)
	var b []byte
	for i := 0; len(b) < size; i++ {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		n := 120 + int(rng%1800)
		b = append(b, `{"jsonrpc":"2.0","method":"mcp/message","params":{"serverId":"mcp_gh","requestId":"r`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `","method":"notifications/message","params":{"content":[{"type":"text","text":"`...)
		for k := 0; k < n; k++ {
			w := words[(i+k)%len(words)]
			if k > 0 {
				b = append(b, ' ')
			}
			b = append(b, w...)
			k += len(w)
		}
		b = append(b, `"}],"isError":false}}}`+"\n"...)
	}
	return b
}
