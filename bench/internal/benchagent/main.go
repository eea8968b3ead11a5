// Command benchagent is the agent side of acptap's benchmarks (see
// bench/doc.go). It is built by the benchmarks and started either directly,
// behind cat, or as `acptap record -- benchagent MODE`.
//
//	benchagent sink           answer initialize and session/new, then read stdin to EOF and
//	                          discard it; print "eof <bytes> <unix ns>" on stderr
//	benchagent source TURNS [RATE]
//	                          answer initialize, session/new and session/prompt, write TURNS
//	                          turns of session/update (acpgen), at most RATE updates/s when
//	                          given, print "done <bytes> <unix ns>" on stderr (bytes: all it
//	                          wrote), then read stdin to EOF
//	benchagent echo           answer initialize and session/new, then copy stdin to stdout as it
//	                          arrives
//	benchagent stamp          print "stamp <unix ns>" on stderr first thing, then exit
//	benchagent keep FILE      not an agent but a hop in acptap's place: copy stdin to stdout
//	                          64 KiB at a time, as cat, and keep a copy of every read in FILE
//	                          (on tmpfs: memory) before forwarding it, as acptap's queue does,
//	                          with one write of the file each; the file starts over every
//	                          256 MiB (acptap's default queue bound), its memory given back
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/acptap/acptap/bench/internal/acpgen"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchagent sink|source TURNS|echo|stamp")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "stamp":
		fmt.Fprintf(os.Stderr, "stamp %d\n", time.Now().UnixNano())
	case "keep":
		keep(os.Args[2])
	case "echo":
		in := bufio.NewReaderSize(os.Stdin, 64<<10)
		handshake(in, 2)
		buf := make([]byte, 64<<10)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				if _, werr := os.Stdout.Write(buf[:n]); werr != nil {
					os.Exit(1)
				}
			}
			if err != nil {
				return
			}
		}
	case "sink":
		in := bufio.NewReaderSize(os.Stdin, 64<<10)
		handshake(in, 2)
		n := int64(in.Buffered())
		in.Discard(in.Buffered())
		n += drain(os.Stdin)
		fmt.Fprintf(os.Stderr, "eof %d %d\n", n, time.Now().UnixNano())
	case "source":
		turns, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchagent source: bad TURNS:", err)
			os.Exit(2)
		}
		var rate float64
		if len(os.Args) > 3 {
			rate, _ = strconv.ParseFloat(os.Args[3], 64)
		}
		in := bufio.NewReaderSize(os.Stdin, 64<<10)
		handshake(in, 3)
		n, err := acpgen.NewStream().WriteTurnsPaced(os.Stdout, turns, rate)
		n += int64(len(acpgen.InitializeResponse) + len(acpgen.NewSessionResponse) + len(acpgen.PromptResponse))
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchagent source: write:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "done %d %d\n", n, time.Now().UnixNano())
		in.Discard(in.Buffered())
		drain(os.Stdin)
	default:
		fmt.Fprintf(os.Stderr, "benchagent: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}

// handshake reads n lines (initialize, session/new[, session/prompt]) and
// answers each.
func handshake(in *bufio.Reader, n int) {
	answers := [][]byte{acpgen.InitializeResponse, acpgen.NewSessionResponse, acpgen.PromptResponse}
	for i := range n {
		if _, err := in.ReadSlice('\n'); err != nil {
			fmt.Fprintln(os.Stderr, "benchagent: handshake:", err)
			os.Exit(1)
		}
		if i < len(answers) {
			if _, err := os.Stdout.Write(answers[i]); err != nil {
				os.Exit(1)
			}
		}
	}
}

// drain reads r to EOF with large reads and returns the byte count.
func drain(r io.Reader) int64 {
	buf := make([]byte, 1<<20)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if err != nil {
			return n
		}
	}
}

// keep is the "keep FILE" hop: cat with one kept copy of every byte.
func keep(path string) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchagent keep:", err)
		os.Exit(2)
	}
	const wrap = 256 << 20
	buf := make([]byte, 64<<10)
	var off int64
	for {
		n, err := os.Stdin.Read(buf)
		if n > 0 {
			if off+int64(n) > wrap {
				if terr := f.Truncate(0); terr != nil {
					os.Exit(1)
				}
				off = 0
			}
			if _, werr := f.WriteAt(buf[:n], off); werr != nil {
				os.Exit(1)
			}
			off += int64(n)
			if _, werr := os.Stdout.Write(buf[:n]); werr != nil {
				os.Exit(1)
			}
		}
		if err != nil {
			return
		}
	}
}
