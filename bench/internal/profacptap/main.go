// Command profacptap is the acptap command with CPU and heap profiling
// switched on by the environment, for finding where the benchmarks' time
// goes (docs/benchmarks.md). It behaves exactly like cmd/acptap otherwise;
// built-in plugins re-execute it, so they can be profiled too.
//
//	ACPTAP_PROF_DIR=DIR   write DIR/host-<pid>.cpu and DIR/host-<pid>.heap (at exit), and for a
//	                      built-in plugin DIR/plugin-<pid>.cpu and .heap after ACPTAP_PROF_SECS
//	ACPTAP_PROF_SECS=N    how long a plugin profiles (default 20; a plugin never exits on its own)
//	ACPTAP_PROF_TRACE=1   also write an execution trace of the host to DIR/host-<pid>.trace
//	                      (go tool trace; -pprof=sched shows how long goroutines waited for a P)
//	ACPTAP_PROF_HEAP_AFTER=D  also write the live heap to DIR/<role>-<pid>.heap-early after the
//	                      duration D (e.g. 400ms), to see what is held at a peak
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"time"

	"github.com/acptap/acptap/host/cli"
	"github.com/acptap/acptap/host/pluginhost"
)

func main() {
	dir := os.Getenv("ACPTAP_PROF_DIR")
	if dir == "" {
		os.Exit(cli.Main(os.Args[1:]))
	}
	role := "host"
	if os.Getenv(pluginhost.PluginModeEnv) != "" {
		role = "plugin"
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-%d", role, os.Getpid()))
	f, err := os.Create(base + ".cpu")
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "profacptap:", err)
		os.Exit(1)
	}
	var tf *os.File
	if role == "host" && os.Getenv("ACPTAP_PROF_TRACE") == "1" {
		if tf, err = os.Create(base + ".trace"); err == nil {
			err = trace.Start(tf)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "profacptap:", err)
			os.Exit(1)
		}
	}
	stop := func() {
		if tf != nil {
			trace.Stop()
			tf.Close()
		}
		pprof.StopCPUProfile()
		f.Close()
		if h, err := os.Create(base + ".heap"); err == nil {
			runtime.GC()
			pprof.Lookup("allocs").WriteTo(h, 0)
			h.Close()
		}
	}
	if d, err := time.ParseDuration(os.Getenv("ACPTAP_PROF_HEAP_AFTER")); err == nil {
		go func() {
			time.Sleep(d)
			if h, err := os.Create(base + ".heap-early"); err == nil {
				pprof.Lookup("heap").WriteTo(h, 0)
				h.Close()
			}
		}()
	}
	if role == "plugin" {
		secs, err := strconv.Atoi(os.Getenv("ACPTAP_PROF_SECS"))
		if err != nil || secs <= 0 {
			secs = 20
		}
		go func() {
			time.Sleep(time.Duration(secs) * time.Second)
			stop()
		}()
	}
	code := cli.Main(os.Args[1:])
	stop()
	os.Exit(code)
}
