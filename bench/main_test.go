package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Knobs (environment); scripts/bench.sh sets the documented sizes.
//
//	ACPTAP_BENCH_MIB      MiB per throughput run, each direction (default 256; documented: 1024)
//	ACPTAP_BENCH_LAT_N    round trips per latency run (default 2000)
//	ACPTAP_BENCH_UPDATES  session/update lines for the plugin and memory benchmarks
//	                      (default 200000; documented: 1000000)
//	ACPTAP_BENCH_RATE     updates/s the agent writes in the memory benchmark (default 50000;
//	                      0 = unpaced)
//	ACPTAP_BENCH_MEM_TRACE=1  print the memory benchmark's samples (a time series) on stderr
//	ACPTAP_BENCH_START_N  start-ups per start-to-exec run (default 40)
//	ACPTAP_BIN            a prebuilt acptap binary (default: built from this module)
//	ACPTAP_BENCH_KEEP=1   keep the runs' stores and logs (the directory is printed)
//	ACPTAP_BENCH_COALESCE=D  tee.coalesce of the recordings (default: acptap's)
//	ACPTAP_BENCH_NO_PLUGINS=1  attribution runs: acptap records the wire log but attaches no
//	                      plugin (a config file that disables acpv2 and aep)
//	ACPTAP_BENCH_QUEUE_MIB=N  tee.queue_bytes of the recordings, in MiB (default: acptap's)
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

var tmpRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "acptap-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpRoot = dir
	code := m.Run()
	if os.Getenv("ACPTAP_BENCH_KEEP") == "1" {
		fmt.Fprintln(os.Stderr, "bench: kept", dir)
	} else {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildErr  error
	acptapBin string
	agentBin  string
)

// binaries builds (once per run) the acptap binary and the bench agent.
func binaries(tb testing.TB) (acptap, agent string) {
	tb.Helper()
	buildOnce.Do(func() {
		acptapBin = os.Getenv("ACPTAP_BIN")
		agentBin = filepath.Join(tmpRoot, "benchagent")
		pkgs := [][2]string{{agentBin, "github.com/acptap/acptap/bench/internal/benchagent"}}
		if acptapBin == "" {
			acptapBin = filepath.Join(tmpRoot, "acptap")
			pkgs = append(pkgs, [2]string{acptapBin, "github.com/acptap/acptap/cmd/acptap"})
		}
		for _, p := range pkgs {
			out, err := exec.Command("go", "build", "-o", p[0], p[1]).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", p[1], err, out)
				return
			}
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return acptapBin, agentBin
}

// recordEnv is the environment of an `acptap record` run: no user config
// (no ACPTAP_ variables but the profiling ones, see internal/profacptap), the
// store and log under dir.
func recordEnv(dir string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return (strings.HasPrefix(kv, "ACPTAP_") && !strings.HasPrefix(kv, "ACPTAP_PROF_")) ||
			strings.HasPrefix(kv, "XDG_CONFIG_HOME=")
	})
	var conf string
	if os.Getenv("ACPTAP_BENCH_NO_PLUGINS") == "1" {
		// The plugins disabled by name as well: until 2dfefde an empty
		// revision list fell back to the plugins' claims (both built-ins were
		// attached in every such run).
		conf += "[revisions]\n\"acp/2@2.0.0-alpha.9\" = []\n[plugins.acpv2]\ndisabled = true\n[plugins.aep]\ndisabled = true\n"
	}
	var tee string
	if mib := envInt("ACPTAP_BENCH_QUEUE_MIB", 0); mib > 0 {
		tee += fmt.Sprintf("queue_bytes = %d\n", mib<<20)
	}
	if c := os.Getenv("ACPTAP_BENCH_COALESCE"); c != "" {
		tee += fmt.Sprintf("coalesce = %q\n", c)
	}
	if tee != "" {
		conf += "[tee]\n" + tee
	}
	if conf != "" {
		cfg := filepath.Join(dir, "config", "acptap")
		os.MkdirAll(cfg, 0o700)
		os.WriteFile(filepath.Join(cfg, "config.toml"), []byte(conf), 0o600)
	}
	return append(env, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
}

// recordArgv is `acptap record --store DIR -- agent…`.
func recordArgv(acptap, store string, agent ...string) []string {
	return append([]string{acptap, "record", "--store", store, "--"}, agent...)
}

// proc is a started process and the editor's ends of its stdio.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *lineReader
}

// startProc starts argv with piped stdio.
func startProc(tb testing.TB, env []string, argv ...string) *proc {
	tb.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	errR, errW, _ := os.Pipe()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	return &proc{cmd: cmd, stdin: inW, stdout: outR, stderr: newLineReader(errR)}
}

// lineReader collects a process's stderr lines and hands over the ones
// with a given first word.
type lineReader struct {
	mu    sync.Mutex
	cond  *sync.Cond
	lines []string
	eof   bool
}

func newLineReader(r io.ReadCloser) *lineReader {
	l := &lineReader{}
	l.cond = sync.NewCond(&l.mu)
	go func() {
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l.mu.Lock()
			l.lines = append(l.lines, sc.Text())
			l.cond.Broadcast()
			l.mu.Unlock()
		}
		l.mu.Lock()
		l.eof = true
		l.cond.Broadcast()
		l.mu.Unlock()
	}()
	return l
}

// wait returns the fields of the first line starting with word, waiting
// for it; false at EOF without one.
func (l *lineReader) wait(word string) ([]string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; ; {
		for ; i < len(l.lines); i++ {
			if f := strings.Fields(l.lines[i]); len(f) > 0 && f[0] == word {
				return f, true
			}
		}
		if l.eof {
			return nil, false
		}
		l.cond.Wait()
	}
}

// all returns every line read so far.
func (l *lineReader) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// stampOf parses "<word> [<bytes>] <unix ns>" from the agent.
func stampOf(tb testing.TB, l *lineReader, word string) (int64, time.Time) {
	tb.Helper()
	f, ok := l.wait(word)
	if !ok || len(f) < 2 {
		tb.Fatalf("agent never said %q; stderr:\n%s", word, l.all())
	}
	var n int64
	if len(f) > 2 {
		n, _ = strconv.ParseInt(f[1], 10, 64)
	}
	ns, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
	return n, time.Unix(0, ns)
}

// percentile returns the p-th percentile (0–100) of d.
func percentile(d []time.Duration, p int) time.Duration { return percentileF(d, float64(p)) }

func percentileF(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p/100))]
}

func newReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 1<<20) }

// median of xs (xs is reordered).
func median(xs []float64) float64 {
	slices.Sort(xs)
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)/2]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
