package uie2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acptap/acptap/internal/testpeers"
)

var acptapBin string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "acptap-uie2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "uie2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if acptapBin, err = testpeers.Build(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "uie2e:", err)
		return 1
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ACPTAP_") {
			os.Unsetenv(k)
		}
	}
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		d := filepath.Join(tmp, strings.ToLower(k))
		os.MkdirAll(d, 0o700)
		os.Setenv(k, d)
	}
	return m.Run()
}

// chromium finds Debian's Chromium; without it the browser tests cannot
// run (CI installs it, so there they fail instead of skipping).
func chromium(t *testing.T) string {
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (.ci/run installs Debian's chromium)")
	}
	t.Skip("chromium is not installed: apt-get install chromium")
	return ""
}

// browser starts a headless Chromium with the flags this machine needs
// (no sandbox as root, no background networking: the network is closed).
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(cancel3)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// artifacts is where screenshots go: $ACPTAP_ARTIFACTS/ui, or a folder
// in the temporary directory (named in the log).
func artifacts(t *testing.T) string {
	dir := os.Getenv("ACPTAP_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "acptap-artifacts")
	}
	dir = filepath.Join(dir, "ui")
	os.MkdirAll(dir, 0o755)
	return dir
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	p := filepath.Join(artifacts(t), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("screenshot: %s", p)
}

// uiProc is a running `acptap ui`.
type uiProc struct {
	url, base string
}

var serving = regexp.MustCompile(`at (http://(\S+?)/\?token=\S+)`)

func startUI(t *testing.T, store string) *uiProc {
	t.Helper()
	cmd := exec.Command(acptapBin, "ui", "--store", store)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	m := serving.FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("acptap ui did not start: %q %v", line, err)
	}
	go io.Copy(io.Discard, stderr)
	return &uiProc{url: m[1], base: "http://" + m[2]}
}

// recordSDK records one session of the SDK peers into store.
func recordSDK(t *testing.T, store string, prompts ...string) *testpeers.SDKResult {
	t.Helper()
	args := []string{"--cwd", store}
	for _, p := range prompts {
		args = append(args, "--prompt", p)
	}
	agent := append([]string{acptapBin, "record", "--store", store, "--"}, testpeers.NodeArgv(t, "v2-agent.mjs")...)
	res := testpeers.RunSDKClient(t, "v2-client.mjs", args, agent)
	res.RequireOK(t)
	return res
}

func demo(t *testing.T, store string) string {
	t.Helper()
	out, err := exec.Command(acptapBin, "demo", "--acp", "2", "--store", store).CombinedOutput()
	if err != nil {
		t.Fatalf("acptap demo: %v\n%s", err, out)
	}
	m, _ := filepath.Glob(filepath.Join(store, "sessions", "sess_*"))
	if len(m) != 1 {
		t.Fatalf("demo sessions: %v", m)
	}
	return filepath.Base(m[0])
}

func get(t *testing.T, url string, header map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func jsonOf(t *testing.T, v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// do runs browser steps or fails the test.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitTrue waits until a JavaScript expression is true.
func waitTrue(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr)); err != nil {
		t.Fatalf("waiting for %s: %v", expr, err)
	}
}
