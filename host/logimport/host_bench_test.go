package logimport

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/sdk"
)

// BenchmarkConvertHost times the host's side of a conversion — reading,
// hashing and digesting the input, capture writing the wire log, the
// feeders, the sink — with two in-process plugins that map nothing, the
// input read once (its frames kept by the digest pass) and read again
// (retainBytes 0), alternately. host-cpu-ms is the process's CPU time
// (user + sys) per conversion. The input is ACPTAP_BENCH_V1LOG, or a
// synthetic log of ACPTAP_CONVERT_BENCH_MB (default 8) MiB.
//
//	go test -run '^$' -bench ConvertHost -benchtime 8x ./host/logimport/
func BenchmarkConvertHost(b *testing.B) {
	in := os.Getenv("ACPTAP_BENCH_V1LOG")
	if in == "" {
		mib := 8
		if v := os.Getenv(BenchEnv); v != "" {
			fmt.Sscan(v, &mib)
		}
		in = filepath.Join(b.TempDir(), "v1.jsonl")
		writeSyntheticLog(b, in, int64(mib)<<20)
	}
	var cpu, wall [2]time.Duration
	var n [2]int
	for i := 0; b.Loop(); i++ {
		k := i % 2
		b.StopTimer()
		root := b.TempDir()
		st, err := store.Open(root)
		if err != nil {
			b.Fatal(err)
		}
		opts := Options{Store: st, From: FromACPv1Log, Pipeline: pipeline.Options{
			Revisions: map[string][]string{FromACPv1Log: {"acpv1", "aep"}},
			Launch: func(_ context.Context, name string) (*pipeline.Plugin, error) {
				return &pipeline.Plugin{Name: name, Info: nopInfo(name), Mapper: nopMapper{name}}, nil
			},
		}}
		b.StartTimer()
		func() {
			defer func(r int) { retainBytes = r }(retainBytes)
			if k == 0 {
				retainBytes = 0
			}
			c0, t0 := selfCPU(), time.Now()
			res, err := Convert(context.Background(), in, opts)
			if err != nil || res.MappingErr != nil {
				b.Fatalf("%v %v", err, res.MappingErr)
			}
			wall[k] += time.Since(t0)
			cpu[k] += selfCPU() - c0
			n[k]++
		}()
	}
	for k, name := range []string{"read-twice", "read-once"} {
		if n[k] > 0 {
			b.ReportMetric(float64(cpu[k].Milliseconds())/float64(n[k]), name+"-host-cpu-ms")
			b.ReportMetric(float64(wall[k].Milliseconds())/float64(n[k]), name+"-wall-ms")
		}
	}
}

func nopInfo(name string) sdk.Info {
	return sdk.Info{Name: name, Version: "1", Inputs: []string{FromACPv1Log}, Outputs: []sdk.Format{sdk.FormatASR}, Capabilities: []sdk.Capability{"record"}}
}

type nopMapper struct{ name string }

func (m nopMapper) Info(context.Context) (sdk.Info, error) { return nopInfo(m.name), nil }
func (m nopMapper) Start(context.Context, sdk.StartRequest) (sdk.Session, error) {
	return nopSession{}, nil
}

type nopSession struct{}

func (nopSession) Map(context.Context, []sdk.Frame) ([]sdk.Output, error) { return nil, nil }
func (nopSession) Finish(context.Context, string) ([]sdk.Output, error)   { return nil, nil }

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
