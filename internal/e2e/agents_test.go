package e2e

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The test binary re-executed with helperEnv set is a helper agent.
const (
	helperEnv = "E2E_HELPER" // the mode: helperLines, helperExit or helperACP
	reportEnv = "E2E_REPORT" // a file the agent writes "<sha256 of stdin> <bytes>" to at EOF
	exitEnv   = "E2E_EXIT"   // the agent's exit code, or "SIGKILL"
	linesEnv  = "E2E_LINES"  // helperLines: lines per direction
	bigEnv    = "E2E_BIG"    // helperLines: size of the one big line (0: none)

	helperLines = "lines" // writes genLines(a2c) while hashing its stdin
	helperExit  = "exit"  // writes stderrMarker and exits at once with E2E_EXIT
	helperACP   = "acp"   // a scripted ACP v2 agent (acpAgent)

	stderrMarker = "e2e-agent: this line is the agent's stderr\n"
	e2eSession   = "sess_e2e_1"
)

func runHelper(mode string) int {
	switch mode {
	case helperLines:
		return linesAgent()
	case helperExit:
		os.Stderr.WriteString(stderrMarker)
		return exitWith(os.Getenv(exitEnv))
	case helperACP:
		return acpAgentMain()
	case helperCloseIn:
		return closeInAgent()
	case helperHello:
		os.Stdout.WriteString(helloLine)
		return exitWith(os.Getenv(exitEnv))
	}
	fmt.Fprintf(os.Stderr, "e2e helper: unknown mode %q\n", mode)
	return 2
}

func exitWith(code string) int {
	if code == "SIGKILL" {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	n, _ := strconv.Atoi(code)
	return n
}

// digest hashes and counts the bytes written to it.
type digest struct {
	h hash.Hash
	n int64
}

func newDigest() *digest { return &digest{h: sha256.New()} }

func (d *digest) Write(p []byte) (int, error) {
	d.n += int64(len(p))
	return d.h.Write(p)
}

// String is the report format: "<sha256 hex> <bytes>".
func (d *digest) String() string { return fmt.Sprintf("%s %d", hex.EncodeToString(d.h.Sum(nil)), d.n) }

// digestOf is what a helper agent reports for having read b.
func digestOf(b []byte) string {
	d := newDigest()
	d.Write(b)
	return d.String()
}

// report writes the digest of the agent's stdin to $E2E_REPORT.
func report(d *digest) error {
	if p := os.Getenv(reportEnv); p != "" {
		return os.WriteFile(p, []byte(d.String()), 0o600)
	}
	return nil
}

// linesAgent writes the agent → client lines while it reads (and hashes)
// the client → agent lines; both directions flow at once.
func linesAgent() int {
	n, _ := strconv.Atoi(os.Getenv(linesEnv))
	big, _ := strconv.Atoi(os.Getenv(bigEnv))
	wrote := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(os.Stdout, 1<<16)
		for _, l := range genLines("a2c", n, big) {
			if _, err := w.Write(l); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- w.Flush()
	}()
	os.Stderr.WriteString(stderrMarker)
	d := newDigest()
	if _, err := io.Copy(d, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "e2e lines agent:", err)
		return 1
	}
	if err := report(d); err != nil {
		fmt.Fprintln(os.Stderr, "e2e lines agent:", err)
		return 1
	}
	if err := <-wrote; err != nil {
		fmt.Fprintln(os.Stderr, "e2e lines agent:", err)
		return 1
	}
	return 0
}

// genLines returns n deterministic lines for one direction, each with its
// own terminator: JSON-RPC messages and batches, lines that are not JSON,
// invalid UTF-8, NUL and control bytes, CRLF endings, a lone CR, empty and
// blank lines, \u escapes, some long lines, one line of big bytes (if big >
// 0), and a last line without LF. Line 0 is an initialize request (c2a) or
// its response (a2c); c2a line 3 is a session/new carrying MCP secrets.
func genLines(dir string, n, big int) [][]byte {
	out := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		var l string
		switch {
		case i == 0 && dir == "c2a":
			l = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"e2e-client","version":"1"}}}` + "\n"
		case i == 0:
			l = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"e2e-agent","version":"1"}}}` + "\n"
		case i == 3 && dir == "c2a":
			l = sessionNewWithSecrets(1) + "\n"
		case i == n-1:
			l = fmt.Sprintf("%s final line %d without LF", dir, i)
		case i == n/2 && big > 0:
			prefix := `{"jsonrpc":"2.0","method":"_e2e/blob","params":{"data":"`
			suffix := `"}}` + "\n"
			l = prefix + strings.Repeat("B", big-len(prefix)-len(suffix)) + suffix
		case i%997 == 0:
			l = fmt.Sprintf(`{"jsonrpc":"2.0","method":"_e2e/long","params":{"n":%d,"pad":"%s"}}`+"\n", i, strings.Repeat("0123456789", 7000+i%13))
		default:
			switch i % 12 {
			case 0:
				l = fmt.Sprintf(`{"jsonrpc":"2.0","method":"_e2e/note","params":{"dir":%q,"n":%d,"text":"línea ✓ \"q\" \\ %d"}}`+"\n", dir, i, i)
			case 1:
				l = fmt.Sprintf("%s plain text line %d, not JSON at all\n", dir, i)
			case 2:
				l = fmt.Sprintf("%s bad utf8 \xff\xfe\xc3\x28 %d\n", dir, i)
			case 3:
				l = fmt.Sprintf(`{"jsonrpc":"2.0","method":"_e2e/crlf","params":{"n":%d}}`+"\r\n", i)
			case 4:
				l = "\n"
			case 5:
				l = " \t  \n"
			case 6:
				l = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"_e2e/escapes","params":{"s":"\u00e9\u2713\ud83d\ude00 \u0000 \u005c"}}`+"\n", i)
			case 7:
				l = fmt.Sprintf(`[{"jsonrpc":"2.0","method":"_e2e/a","params":{"n":%d}},{"jsonrpc":"2.0","method":"_e2e/b"}]`+"\n", i)
			case 8:
				l = fmt.Sprintf("%s nul\x00byte\x01 \x1b[31mred\x1b[0m %d\n", dir, i)
			case 9:
				l = fmt.Sprintf("%s a lone\rcarriage return %d\n", dir, i)
			case 10:
				l = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":null}`+"\n", i)
			case 11:
				l = fmt.Sprintf("{\"jsonrpc\":\"2.0\", \"method\" : \"_e2e/spaced\" , \"params\":{ \"n\": %d }}  \n", i)
			}
		}
		out = append(out, []byte(l))
	}
	return out
}

// sessionNewWithSecrets is a session/new request whose MCP servers carry
// the recognisable secrets in an env value, an argument and a header value.
func sessionNewWithSecrets(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/tmp/e2e","mcpServers":[`+
		`{"type":"stdio","name":"docs","command":"/usr/bin/docs-mcp","args":["--token","%s"],"env":[{"name":"API_KEY","value":"%s"}]},`+
		`{"type":"http","name":"issues","url":"https://mcp.example.invalid","headers":[{"name":"Authorization","value":"Bearer %s"}]}]}}`,
		id, secretArg, secretEnv, secretHeader)
}

const (
	secretEnv    = "E2E-SECRET-ENV-4242"
	secretArg    = "E2E-SECRET-ARG-4343"
	secretHeader = "E2E-SECRET-HEADER-4444"
)

// acpAgentMain serves acpAgent on stdin/stdout; at EOF it reports the hash
// of its stdin and exits with $E2E_EXIT.
func acpAgentMain() int {
	a := &acpAgent{}
	d := newDigest()
	br := bufio.NewReader(io.TeeReader(os.Stdin, d))
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if out := a.answer(line); len(out) > 0 {
				if _, werr := os.Stdout.Write(out); werr != nil {
					return 1
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 1
		}
	}
	os.Stderr.WriteString(stderrMarker)
	if err := report(d); err != nil {
		return 1
	}
	return exitWith(os.Getenv(exitEnv))
}

// acpAgent is a scripted ACP v2 agent whose answers are a pure function of
// the lines it has read, so a test can compute the exact bytes the client
// must receive. Each prompt plays: running, a message chunk, two
// _acme/progress updates (a vendor extension), idle, then the response.
type acpAgent struct{ prompts int }

func (a *acpAgent) answer(line []byte) []byte {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method == "" {
		return nil
	}
	reply := func(result string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, result)
	}
	update := func(u string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":%s}}`+"\n", m.Params.SessionID, u)
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch m.Method {
	case "initialize":
		return []byte(reply(`{"protocolVersion":2,"info":{"name":"e2e-agent","version":"1.0.0"},"capabilities":{}}`))
	case "session/new":
		return []byte(reply(fmt.Sprintf(`{"sessionId":%q}`, e2eSession)))
	case "session/prompt":
		a.prompts++
		n := a.prompts
		var b strings.Builder
		b.WriteString(update(`{"sessionUpdate":"state_update","state":"running"}`))
		b.WriteString(update(fmt.Sprintf(`{"sessionUpdate":"agent_message_chunk","messageId":"agent-%d","content":{"type":"text","text":"working on prompt %d"}}`, n, n)))
		b.WriteString(update(fmt.Sprintf(`{"sessionUpdate":"_acme/progress","progressId":"p%d","percent":40,"message":"indexing"}`, n)))
		b.WriteString(update(fmt.Sprintf(`{"sessionUpdate":"_acme/progress","progressId":"p%d","percent":100,"message":"done"}`, n)))
		b.WriteString(update(`{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}`))
		b.WriteString(reply(fmt.Sprintf(`{"messageId":"user-%d"}`, n)))
		return []byte(b.String())
	case "session/close", "session/resume":
		return []byte(reply(`{}`))
	}
	if hasID {
		return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", m.ID))
	}
	return nil
}
