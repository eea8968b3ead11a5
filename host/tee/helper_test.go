package tee

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/acptap/acptap/host/captured"
)

// The test binary doubles as the helper agent (and, for the signal test, as the tee itself):
// TestMain runs helperMain when TEE_HELPER names a mode, so the tests need no extra binaries.
func TestMain(m *testing.M) {
	if mode := os.Getenv("TEE_HELPER"); mode != "" {
		os.Exit(helperMain(mode))
	}
	os.Exit(m.Run())
}

// stderrPayload is what the "exit" and "sigkill" helpers write to stderr: not UTF-8, CRLF,
// no final newline.
var stderrPayload = []byte("agent stderr \xff\xfe\xc3\x28 line\r\nsecond line without newline")

func helperMain(mode string) int {
	switch mode {
	case "echo": // stdin → stdout, chunk by chunk, until EOF
		if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
			return 1
		}
		return 0
	case "echogen":
		return helperEchoGen()
	case "exit":
		os.Stderr.Write(stderrPayload)
		code, _ := strconv.Atoi(os.Getenv("TEE_EXIT"))
		return code
	case "sigkill":
		os.Stderr.Write(stderrPayload)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	case "digest": // reads stdin to EOF, then writes its sha256 (hex) and an LF
		h := sha256.New()
		if _, err := io.Copy(h, os.Stdin); err != nil {
			return 1
		}
		fmt.Printf("%x\n", h.Sum(nil))
		return 0
	case "untileof": // exits only once its stdin is closed
		io.Copy(io.Discard, os.Stdin)
		os.Stdout.WriteString("got eof\n")
		return 7
	case "trapterm": // says "ready <pid>" once SIGTERM is trapped, exits 42 when it arrives
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		fmt.Printf("ready %d\n", os.Getpid())
		<-c
		return 42
	case "tee": // this process is the tee, around the helper named by TEE_AGENT
		return helperTee()
	case "orphan": // leaves a descendant holding stdout open, then exits 0
		child := exec.Command(selfExe())
		child.Env = append(os.Environ(), "TEE_HELPER=untileof")
		child.Stdin, child.Stdout = os.Stdin, os.Stdout
		if err := child.Start(); err != nil {
			return 1
		}
		return 0
	}
	if code, ok := pipeSizeHelper(mode); ok {
		return code
	}
	if code, ok := procGroupHelper(mode); ok {
		return code
	}
	fmt.Fprintf(os.Stderr, "unknown TEE_HELPER mode %q\n", mode)
	return 2
}

// helperEchoGen echoes stdin to stdout while writing its own agentLines stream, then a last
// line without LF; it reports the sha256 of what it read and of what it wrote on stderr.
func helperEchoGen() int {
	var mu sync.Mutex
	out := sha256.New()
	write := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		os.Stdout.Write(b)
		out.Write(b)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range agentLines {
			write(agentLine(i))
		}
	}()
	in := sha256.New()
	buf := make([]byte, 32<<10)
	for {
		n, err := os.Stdin.Read(buf)
		if n > 0 {
			in.Write(buf[:n])
			write(buf[:n])
		}
		if err != nil {
			break
		}
	}
	wg.Wait()
	write([]byte("agent bye, no newline"))
	fmt.Fprintf(os.Stderr, "in=%x out=%x\n", in.Sum(nil), out.Sum(nil))
	return 0
}

func helperTee() int {
	q := make(chan captured.Item, 64)
	go func() {
		for it := range q {
			it.Release()
		}
	}()
	code, err := Run(context.Background(), Config{
		Agent:   []string{selfExe()},
		Env:     append(os.Environ(), "TEE_HELPER="+os.Getenv("TEE_AGENT")),
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Queue:   q,
		Signals: true,
		Watchdog: func(pgid int) *exec.Cmd {
			c := exec.Command(selfExe())
			c.Env = append(os.Environ(), "TEE_HELPER=watchdog", "TEE_PGID="+strconv.Itoa(pgid))
			return c
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return code
}

const agentLines = 10000

// agentLine is line i of the helper agent's own stream: JSON, not JSON, invalid UTF-8, CRLF,
// empty, and one 1 MiB line.
func agentLine(i int) []byte {
	switch {
	case i == agentLines/2:
		return repeatTo([]byte(`{"big":"abcdefghij`), 1<<20, "\"}\n")
	case i%6 == 0:
		return []byte("agent \xc0\xaf not utf8 " + strconv.Itoa(i) + "\n")
	case i%6 == 1:
		return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"result":{}}` + "\r\n")
	case i%6 == 2:
		return []byte("\n")
	case i%6 == 3:
		return []byte("plain text from the agent " + strconv.Itoa(i) + "\n")
	}
	return []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"n":` + strconv.Itoa(i) + "}}\n")
}

// repeatTo is pattern repeated to n bytes, then tail (allocated once).
func repeatTo(pattern []byte, n int, tail string) []byte {
	b := make([]byte, 0, n+len(tail))
	for len(b) < n {
		b = append(b, pattern[:min(len(pattern), n-len(b))]...)
	}
	return append(b, tail...)
}

func selfExe() string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return exe
}

// helperAgent is the argv and env of the test binary running helper mode.
func helperAgent(mode string, env ...string) ([]string, []string) {
	return []string{selfExe()}, append(append(os.Environ(), "TEE_HELPER="+mode), env...)
}

// pipe returns an os.Pipe, closed at the end of the test.
func pipe(t testing.TB) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// readLine reads one line (with its LF) or fails the test.
func readLine(t testing.TB, r *bufio.Reader) string {
	t.Helper()
	s, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading a line: %v (got %q)", err, s)
	}
	return s
}

// runAsync runs Run in a goroutine; the returned func waits for its result.
func runAsync(cfg Config) func() (int, error) {
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := Run(context.Background(), cfg)
		done <- result{code, err}
	}()
	return func() (int, error) { r := <-done; return r.code, r.err }
}
