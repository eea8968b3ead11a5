package logimport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/acptap/acptap/host/captured"
	"github.com/acptap/acptap/host/pipeline"
	"github.com/acptap/acptap/host/store"
	"github.com/acptap/acptap/host/storesink"
	"github.com/acptap/acptap/host/wire"
	"github.com/acptap/acptap/internal/private"
	"github.com/acptap/acptap/sdk"
)

// FromACPv1Log is the only input kind so far: stored ACP v1 logs. It is also
// the revision the pipeline is forced to (config: revisions."acp-v1-log").
const FromACPv1Log = "acp-v1-log"

// Froms lists the supported --from values.
var Froms = []string{FromACPv1Log}

// DefaultMaxLine bounds one input line, as the tee bounds a captured line.
const DefaultMaxLine = captured.DefaultMaxLine

// DefaultSkipExamples is how many skipped lines a Result names.
const DefaultSkipExamples = 5

// ConnectionPrefix starts the connection ID of a converted ACP v1 log.
const ConnectionPrefix = "v1-"

// Options configure Convert.
type Options struct {
	Store *store.Store
	// From is the input kind (FromACPv1Log).
	From string
	// Force converts an input again whose wire log exists: the old wire log
	// and every output file the conversion rewrites are moved aside
	// (<file>.prev-<unix nanoseconds>), as acptap rebuild does.
	Force bool
	// Pipeline is the template of each conversion's pipeline (revisions,
	// plugins, logger, limits). Convert sets WirePath, Connection, Agent,
	// Mode, ForceRevision, Sink, Sessions and Source.
	Pipeline pipeline.Options
	// MaxLine bounds an input line (0: DefaultMaxLine); longer lines are
	// skipped. While a plain (not gzip) stream is spooled, a line longer
	// than it stops the conversion: an endless input without LF
	// (/dev/zero) is not spooled to the end of the disk.
	MaxLine int
	// MaxSpool bounds the bytes spooled from standard input or a pipe
	// (0: DefaultMaxSpool); a longer input is an error. Files are not
	// spooled.
	MaxSpool int64
	// SkipExamples is how many skipped lines the Result names (0:
	// DefaultSkipExamples).
	SkipExamples int
	// Stdin is read for the input "-".
	Stdin io.Reader
	// Progress, when set, is updated while an input is read.
	Progress *Progress
}

// Progress is what a progress display reads while Convert runs. Counters
// are per input; Reset starts a new one.
type Progress struct {
	name    atomic.Pointer[string]
	Size    atomic.Int64 // the input's size in bytes (as stored: compressed)
	Read    atomic.Int64 // bytes read so far
	Lines   atomic.Int64 // input lines read
	Frames  atomic.Int64 // wire entries written
	Outputs atomic.Int64 // ASR records and AEP events the plugins produced
	// Mapped is about how far the plugins are: the wire seq of the latest
	// frame the slowest plugin produced an output for.
	Mapped atomic.Int64
	// Mapping is set once the input is read: the plugins are finishing.
	Mapping atomic.Bool
	Started atomic.Int64 // unix nanoseconds when reading began
}

// Reset starts counting a new input.
func (p *Progress) Reset(name string, size int64) {
	p.name.Store(&name)
	p.Size.Store(size)
	p.Read.Store(0)
	p.Lines.Store(0)
	p.Frames.Store(0)
	p.Outputs.Store(0)
	p.Mapped.Store(0)
	p.Mapping.Store(false)
	p.Started.Store(time.Now().UnixNano())
}

// Name is the input being converted.
func (p *Progress) Name() string {
	if n := p.name.Load(); n != nil {
		return *n
	}
	return ""
}

// Result is what one input gave.
type Result struct {
	// Input is the argument as given; Source what the wire header records.
	Input  string
	Source wire.Source
	// Connection and WirePath name the wire log.
	Connection string
	WirePath   string
	// Existed is set when the wire log existed and Force was not: nothing
	// was converted.
	Existed bool
	// Interrupted is set when reading stopped early (the context ended).
	Interrupted bool
	// Wrote is set once the wire log is created.
	Wrote bool

	Lines, Blank int
	// Frames counts wire entries by direction; Gaps the gap entries copied
	// from a wire log; Synthesized the frames the converter made (the
	// initialize exchange of an updates input).
	FramesC2A, FramesA2C, Gaps, Synthesized int
	Times                                   map[TimeKind]int

	SkippedLines int
	SkipReasons  map[string]int
	SkipExamples []Skip

	Revision string
	Plugins  []string
	Sessions []string
	// ASRStreams counts stream headers; ASRTypes records by type;
	// AEPTypes events by type.
	ASRStreams int
	ASRTypes   map[string]int
	AEPTypes   map[string]int
	// Losses are the loss categories the streams declared, sorted.
	Losses      []string
	Diagnostics map[string]int
	Streams     []string
	// Replaced lists the files Force moved aside.
	Replaced []string
	// MappingErr reports outputs that could not be written, or a plugin that
	// gave up before the end of the wire log.
	MappingErr error
}

// Frames is the number of frames written.
func (r *Result) Frames() int { return r.FramesC2A + r.FramesA2C }

// ASRRecords is the number of ASR records (headers excluded).
func (r *Result) ASRRecords() int { return sum(r.ASRTypes) }

// AEPEvents is the number of AEP events.
func (r *Result) AEPEvents() int { return sum(r.AEPTypes) }

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// ErrNotReadable wraps the errors of an input that could not be converted
// (not found, unreadable, not an ACP v1 log, no ACP line at all).
var ErrNotReadable = errors.New("input not converted")

// outputBuffer is how many bytes of lines each output file gathers before
// a write (storesink.Sink.Buffer; the files are complete when Convert
// returns): a session is observed before its first output, and only the
// lines observed then are read as its prior streams. 0 writes each line at
// once (tests compare).
var outputBuffer = 64 << 10

// convertFeederDepth is how many batches a feeder's live queue holds in a
// conversion (the pipeline's default, 64, is for a recording's bursts).
var convertFeederDepth = 8

// offlineBatch is the least frames a batch of the conversion holds
// (pipeline.OfflineBatchFrames; 0: the configured batch_frames, as before:
// tests compare).
var offlineBatch = pipeline.OfflineBatchFrames

// prelaunchPlugins off: the pipeline launches its plugins when it starts
// (tests compare).
var prelaunchPlugins = true

// liveKept off: a conversion from kept frames queues convertFeederDepth
// batches per feeder, as one read again does (tests compare).
var liveKept = true

// Connection names the wire log of an input with the given SHA-256.
func Connection(sum []byte) string {
	return ConnectionPrefix + hex.EncodeToString(sum)[:12]
}

// Convert converts one input ("-": standard input). It returns an error
// wrapping ErrNotReadable when the input could not be converted; mapping
// problems are in Result.MappingErr. Cancelling ctx stops reading; what was
// read is still mapped.
func Convert(ctx context.Context, input string, opts Options) (*Result, error) {
	if opts.From == "" {
		opts.From = FromACPv1Log
	}
	if !slices.Contains(Froms, opts.From) {
		return nil, fmt.Errorf("unsupported input kind %q", opts.From)
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	if opts.SkipExamples <= 0 {
		opts.SkipExamples = DefaultSkipExamples
	}
	res := &Result{Input: input, Times: map[TimeKind]int{}, SkipReasons: map[string]int{},
		ASRTypes: map[string]int{}, AEPTypes: map[string]int{}}
	notReadable := func(err error) error {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == input {
			err = pe.Err // "LOG: no such file or directory", not "LOG: stat LOG: …"
		}
		return fmt.Errorf("%w: %s: %w", ErrNotReadable, input, err)
	}

	// A store that holds no converted wire log cannot hold this input's:
	// the input's hash then comes from the one pass below that reads its
	// frames, rather than from a read of its own first (which lets an input
	// converted before be found before anything else is read).
	hashFirst := retainBytes <= 0 || hasConverted(opts.Store)
	path, sum, whole, size, cleanup, err := prepare(ctx, input, opts, hashFirst)
	if errors.Is(err, context.Canceled) || (err == nil && ctx.Err() != nil) {
		cleanup()
		res.Interrupted = true // while spooling: nothing was written
		return res, nil
	}
	if err != nil {
		return res, notReadable(err)
	}
	defer cleanup()
	res.Source = wire.Source{Mode: wire.SourceModeConvert, From: opts.From, Path: sourcePath(input)}
	var exists bool
	// identify names the connection by the input's hash and says whether
	// the store holds it already (done: nothing more to do, or an error).
	identify := func(sum []byte) (done bool, err error) {
		res.Source.SHA256 = hex.EncodeToString(sum)
		res.Connection = Connection(sum)
		res.WirePath = opts.Store.WirePath(res.Connection)
		_, statErr := os.Stat(res.WirePath)
		exists = statErr == nil
		if exists {
			// The same connection ID is the same input, unless 48 bits of
			// SHA-256 collided.
			if r, err := wire.Open(res.WirePath); err == nil {
				h := r.Header()
				r.Close()
				if h.Source == nil || h.Source.SHA256 != res.Source.SHA256 {
					return true, notReadable(fmt.Errorf("%s exists but was not converted from this input", res.WirePath))
				}
			}
			if !opts.Force {
				res.Existed = true
				return true, nil
			}
		}
		return false, nil
	}
	if sum != nil {
		if done, err := identify(sum); done {
			return res, err
		}
	}

	if opts.Pipeline.Launch != nil && prelaunchPlugins {
		// The plugins start while the input is detected and digested (the
		// pipeline's revision is forced: these are the ones it attaches).
		pre := prelaunch(context.WithoutCancel(ctx), opts.Pipeline.Launch, opts.Pipeline.Revisions[opts.From])
		defer pre.close()
		opts.Pipeline.Launch = pre.Launch
	}
	format, gz, wireHdr, err := detect(path, opts.MaxLine)
	if err != nil {
		return res, notReadable(err)
	}
	res.Source.Format, res.Source.Gzip = string(format), gz
	once, err := readOnce(path, format, opts.MaxLine, retainBytes, whole)
	if err != nil {
		return res, notReadable(err)
	}
	switch {
	case sum == nil:
		sum = once.sum
		if done, err := identify(sum); done {
			return res, err
		}
	case !bytes.Equal(sum, once.sum):
		return res, notReadable(changedErr(sum, once.sum))
	}
	frames := once.frames
	res.Source.FramesSHA256 = frames
	if !exists {
		// Other bytes, the same frames (the gzip of a log converted before,
		// its frames in another layout): the same connection.
		if conn, wirePath, ok := sameFrames(opts.Store, frames); ok {
			res.Connection, res.WirePath, exists = conn, wirePath, true
			if !opts.Force {
				res.Existed = true
				return res, nil
			}
		}
	}
	if wireHdr != nil && wireHdr.Connection != "" {
		if _, err := os.Stat(opts.Store.WirePath(wireHdr.Connection)); err == nil {
			return res, notReadable(fmt.Errorf("this store already holds connection %s (%s): `acptap rebuild` maps it again",
				wireHdr.Connection, opts.Store.WirePath(wireHdr.Connection)))
		}
	}

	if ctx.Err() != nil {
		res.Interrupted = true // before anything was written
		return res, nil
	}

	sink := storesink.New(opts.Store, opts.Pipeline.Logger)
	sink.Buffer = outputBuffer
	var sessions pipeline.SessionStore = storesink.Sessions{St: opts.Store}
	if exists {
		old, err := oldSessions(res.WirePath)
		if err != nil {
			return res, fmt.Errorf("%s: read the wire log being replaced: %w", input, err)
		}
		backup := fmt.Sprintf("%s.prev-%d", res.WirePath, time.Now().UnixNano())
		if err := os.Rename(res.WirePath, backup); err != nil {
			return res, fmt.Errorf("%s: move the old wire log aside: %w", input, err)
		}
		res.Replaced = append(res.Replaced, backup)
		sink.ReplaceExisting = true
		sessions = &replayedSessions{old: old, store: storesink.Sessions{St: opts.Store}, sink: sink}
	}
	counter := newCountingSink(sink, opts.Progress)

	po := opts.Pipeline
	po.WirePath, po.Connection, po.Agent = res.WirePath, res.Connection, nil
	po.Mode, po.ForceRevision = sdk.ModeConvert, opts.From
	po.BatchFrames = max(batchOf(opts), offlineBatch)
	if po.FeederDepth == 0 {
		// Capture reads a log faster than the plugins map it: a feeder
		// soon catches up from the wire log whatever its live queue, which
		// meanwhile holds copies of the lines (the plugins, started before
		// the pipeline, take live batches from the first one).
		po.FeederDepth = convertFeederDepth
		if once.kept != nil && liveKept {
			// The frames are in memory already, within retainBytes: a queue
			// that can hold all of them (a batch holds one at least) keeps
			// the feeders live, with no second decode of the wire log, for
			// the memory the kept frames took.
			po.FeederDepth = max(po.FeederDepth, once.nkept+1)
		}
	}
	po.Sink, po.Sessions = counter, sessions
	src := res.Source
	po.Source = &src
	p := pipeline.New(po)
	items := make(chan captured.Item, 1024)
	if err := p.Start(context.WithoutCancel(ctx), items); err != nil {
		return res, fmt.Errorf("%s: %w", input, err)
	}
	res.Wrote = true

	var readErr error
	if once.kept != nil {
		feedKept(ctx, once, size, opts, res, items)
	} else {
		readErr = feed(ctx, path, format, size, sum, opts, res, items)
	}
	close(items)
	// The wire log is written to its end once capture is done; its
	// writeback starts then, beside the plugins' mapping, so that the
	// synced close at the end (p.Wait) has little left to wait for.
	early := make(chan struct{})
	go func() {
		defer close(early)
		<-p.CaptureDone()
		if f, err := os.OpenFile(res.WirePath, os.O_WRONLY, 0); err == nil {
			f.Sync() // an error is the close's to report
			f.Close()
		}
	}()
	stats, werr := p.Wait()
	<-early
	serr := sink.Close()

	res.Revision, res.Plugins, res.Sessions = stats.Revision, stats.Plugins, stats.Sessions
	counter.fill(res)
	res.Diagnostics = sink.Diagnostics()
	res.Streams = sink.Streams()
	res.Replaced = storesink.PruneBackups(append(res.Replaced, sink.Replaced()...))
	var errs []error
	for _, e := range []error{werr, serr} {
		if e != nil {
			errs = append(errs, e)
		}
	}
	if sink.GaveUp() {
		errs = append(errs, errors.New("a plugin gave up before the end of the wire log (see the log)"))
	}
	res.MappingErr = errors.Join(errs...)
	if readErr != nil {
		return res, notReadable(readErr)
	}
	return res, nil
}

func sourcePath(input string) string {
	if input == "-" {
		return "-"
	}
	if abs, err := filepath.Abs(input); err == nil {
		return abs
	}
	return input
}

// DefaultMaxSpool bounds what Convert spools of a stream (Options.MaxSpool).
const DefaultMaxSpool = 4 << 30

// prepare returns a regular file holding the input (standard input and
// other streams are spooled to a temporary file in the store first), its
// SHA-256 and size, and a cleanup. Spooling stops when ctx ends (the error
// wraps context.Canceled).
//
// Without hash, a regular file is not read: its sum is nil and its size
// the one it has now (standard input and other streams are hashed as they
// are spooled, whatever hash says). With hash, a file the digest pass
// would read whole (readWhole) is read whole here, and whole holds its
// bytes, hashed: the pass digests them instead of reading the file again.
func prepare(ctx context.Context, input string, opts Options, hash bool) (path string, sum []byte, whole *wholeInput, size int64, cleanup func(), err error) {
	cleanup = func() {}
	var src io.Reader
	if input == "-" {
		if opts.Stdin == nil {
			return "", nil, nil, 0, cleanup, errors.New("no standard input")
		}
		src = opts.Stdin
	} else {
		fi, err := os.Stat(input)
		if err != nil {
			return "", nil, nil, 0, cleanup, err
		}
		if fi.IsDir() {
			return "", nil, nil, 0, cleanup, errors.New("is a directory")
		}
		if fi.Mode().IsRegular() && !hash {
			return input, nil, nil, fi.Size(), cleanup, nil
		}
		if fi.Mode().IsRegular() {
			whole, err := hashWhole(input, min(retainBytes, opts.MaxLine))
			if err != nil {
				return "", nil, nil, 0, cleanup, err
			}
			if whole != nil {
				return input, whole.sum, whole, int64(len(whole.data)), cleanup, nil
			}
			sum, size, err := hashFile(input)
			return input, sum, nil, size, cleanup, err
		}
		f, err := os.Open(input) // a pipe or device: read it once
		if err != nil {
			return "", nil, nil, 0, cleanup, err
		}
		defer f.Close()
		src = f
	}
	dir := filepath.Join(opts.Store.Root(), "tmp")
	if err := private.MkdirAll(dir); err != nil {
		return "", nil, nil, 0, cleanup, fmt.Errorf("spool: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "convert-input-*")
	if err != nil {
		return "", nil, nil, 0, cleanup, fmt.Errorf("spool: %w", err)
	}
	cleanup = func() { os.Remove(tmp.Name()) }
	h := sha256.New()
	size, err = spool(ctx, io.MultiWriter(tmp, h), src, opts)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return "", nil, nil, 0, func() {}, fmt.Errorf("spool: %w", err)
	}
	return tmp.Name(), h.Sum(nil), nil, size, cleanup, nil
}

// spool copies src to dst, stopping with an error when ctx ends, when
// more than opts.MaxSpool bytes came, or when a plain (not gzip) input has
// a line longer than opts.MaxLine.
func spool(ctx context.Context, dst io.Writer, src io.Reader, opts Options) (int64, error) {
	maxSpool := opts.MaxSpool
	if maxSpool <= 0 {
		maxSpool = DefaultMaxSpool
	}
	if f, ok := src.(*os.File); ok {
		// A pipe that sends nothing would hold Read past a signal.
		stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Now()) })
		defer stop()
	}
	buf := make([]byte, 256<<10)
	var n, lineStart int64
	line := 1
	gz := false
	for {
		if err := ctx.Err(); err != nil {
			return n, fmt.Errorf("spool: interrupted after %d bytes: %w", n, context.Canceled)
		}
		k, rerr := src.Read(buf)
		chunk := buf[:k]
		if n == 0 && k >= 2 && chunk[0] == 0x1f && chunk[1] == 0x8b {
			gz = true // lines are bounded when the decompressed input is read
		}
		if !gz {
			for off := 0; ; {
				i := bytes.IndexByte(chunk[off:], '\n')
				if i < 0 {
					break
				}
				line++
				off += i + 1
				lineStart = n + int64(off)
			}
			if n+int64(k)-lineStart > int64(opts.MaxLine) {
				return n, fmt.Errorf("line %d: longer than %d bytes (the line bound); not converted", line, opts.MaxLine)
			}
		}
		if n+int64(k) > maxSpool {
			return n, fmt.Errorf("spool: the input is longer than %d bytes, the bound for standard input and pipes; convert it from a file", maxSpool)
		}
		if _, err := dst.Write(chunk); err != nil {
			return n, err
		}
		n += int64(k)
		if errors.Is(rerr, io.EOF) {
			return n, nil
		}
		if errors.Is(rerr, os.ErrDeadlineExceeded) && ctx.Err() != nil {
			return n, fmt.Errorf("spool: interrupted after %d bytes: %w", n, context.Canceled)
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

func hashFile(path string) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, 0, err
	}
	return h.Sum(nil), n, nil
}

// detect reads the start of the input: its layout, whether it is gzip,
// and a wire log's header.
func detect(path string, maxLine int) (Format, bool, *wire.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, nil, err
	}
	defer f.Close()
	r, gz, err := decompress(f)
	if err != nil {
		return "", gz, nil, err
	}
	s := NewScanner(r, "", maxLine)
	if err := s.Detect(); err != nil {
		return "", gz, nil, err
	}
	return s.Format(), gz, s.WireHeader, nil
}

// feed reads the input and hands its entries to the pipeline. It checks
// that the bytes still hash to sum.
func feed(ctx context.Context, path string, format Format, size int64, sum []byte, opts Options,
	res *Result, items chan<- captured.Item) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	prog := opts.Progress
	if prog == nil {
		prog = &Progress{}
	}
	prog.Reset(res.Input, size)
	defer prog.Mapping.Store(true)
	h := sha256.New()
	raw := io.TeeReader(countingReader{r: f, n: &prog.Read}, h)
	r, _, err := decompress(raw)
	if err != nil {
		return err
	}
	s := NewScanner(r, format, opts.MaxLine)
	s.OnSkip = func(sk Skip) { res.skipped(sk, opts.SkipExamples) }
	// Entries go to the pipeline in bursts of a batch: capture takes what is
	// ready, so a burst becomes one batch for the plugins, where entry by
	// entry would cost each plugin one call per entry.
	burst := make([]Frame, 0, batchOf(opts))
	send := func() bool {
		for _, fr := range burst {
			select {
			case <-ctx.Done():
				res.Interrupted = true
				return false
			case items <- fr.Item:
			}
			res.sent(fr, prog)
		}
		burst = burst[:0]
		return true
	}
	lines := 0
	for {
		fr, err := s.Next()
		if s.Lines != lines {
			lines = s.Lines
			prog.Lines.Store(int64(lines))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			res.Lines, res.Blank = s.Lines, s.Blank
			send()
			return fmt.Errorf("read error after line %d: %w (the wire log holds the lines before it; --force converts the input again)", s.Lines, err)
		}
		burst = append(burst, fr)
		if len(burst) == cap(burst) && !send() {
			res.Lines, res.Blank = s.Lines, s.Blank
			return nil
		}
	}
	if !send() {
		res.Lines, res.Blank = s.Lines, s.Blank
		return nil
	}
	res.Lines, res.Blank = s.Lines, s.Blank
	if _, err := io.Copy(io.Discard, raw); err != nil {
		return err
	}
	if got := h.Sum(nil); hex.EncodeToString(got) != hex.EncodeToString(sum) {
		return changedErr(sum, got)
	}
	return nil
}

func changedErr(before, after []byte) error {
	return fmt.Errorf("the input changed while it was converted (sha256 %s before, %s after): "+
		"convert it again with --force once it is complete", hex.EncodeToString(before)[:12], hex.EncodeToString(after)[:12])
}

// hasConverted says whether the store's wire directory holds a converted
// wire log (or cannot be listed).
func hasConverted(st *store.Store) bool {
	logs, err := filepath.Glob(filepath.Join(store.WireDir(st.Root()), ConnectionPrefix+"*.jsonl"))
	return err != nil || len(logs) > 0
}

// feedKept hands the pipeline the frames the digest pass kept (readOnce),
// as feed does those it reads: the same entries in the same bursts, the
// same counts. A frame is dropped from once as it is sent.
func feedKept(ctx context.Context, once *onceRead, size int64, opts Options, res *Result, items chan<- captured.Item) {
	prog := opts.Progress
	if prog == nil {
		prog = &Progress{}
	}
	prog.Reset(res.Input, size)
	defer prog.Mapping.Store(true)
	prog.Read.Store(size)
	for _, sk := range once.skips {
		res.skipped(sk, opts.SkipExamples)
	}
	res.Lines, res.Blank = once.lines, once.blank
	prog.Lines.Store(int64(once.lines))
	for c, chunk := range once.kept {
		once.kept[c] = nil
		for i := range chunk {
			fr := chunk[i]
			chunk[i] = Frame{}
			select {
			case <-ctx.Done():
				res.Interrupted = true
				return
			case items <- fr.Item:
			}
			res.sent(fr, prog)
		}
	}
}

// skipped counts a skipped input line, keeping up to examples of them.
func (res *Result) skipped(sk Skip, examples int) {
	res.SkippedLines++
	res.SkipReasons[reasonKind(sk.Reason)]++
	if len(res.SkipExamples) < examples {
		res.SkipExamples = append(res.SkipExamples, sk)
	}
}

// sent counts a frame handed to the pipeline.
func (res *Result) sent(fr Frame, prog *Progress) {
	prog.Frames.Add(1)
	switch {
	case fr.Item.Gap != nil:
		res.Gaps++
	case fr.Item.Dir == sdk.C2A:
		res.FramesC2A++
	default:
		res.FramesA2C++
	}
	if fr.Input == 0 {
		res.Synthesized++
	}
	if fr.Item.Gap == nil {
		res.Times[fr.Time]++
	}
}

func batchOf(opts Options) int {
	if n := opts.Pipeline.BatchFrames; n > 0 {
		return n
	}
	return 256
}

// reasonKind groups skip reasons for the summary: the reason up to its
// first detail.
func reasonKind(reason string) string {
	for _, prefix := range []string{"line of ", "method ", "a response ", "trace entry with dir", "not a wire-log entry"} {
		if len(reason) >= len(prefix) && reason[:len(prefix)] == prefix {
			switch prefix {
			case "line of ":
				return "line longer than the limit"
			case "method ":
				return "method not in the ACP v1 table (direction unknown)"
			case "a response ":
				return "response to no request seen (direction unknown)"
			case "trace entry with dir":
				return "trace entry with an unknown dir"
			default:
				return "not a wire-log entry"
			}
		}
	}
	return reason
}

// oldSessions reads the session entries of a wire log being replaced: what
// the store knew of each session when the input was first converted.
func oldSessions(path string) (map[string]wire.Session, error) {
	r, err := wire.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := map[string]wire.Session{}
	for {
		e, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, wire.ErrTornTail) {
				return out, nil
			}
			return out, err
		}
		if e.Type == wire.TypeSession {
			if _, ok := out[e.Session.ID]; !ok {
				out[e.Session.ID] = e.Session
			}
		}
	}
}

// replayedSessions answers for the sessions of a conversion done again:
// what the store knew when the input was first converted (so the session's
// connection count is not raised twice, and the streams continue from the
// same lines), and the store for sessions that conversion did not see.
type replayedSessions struct {
	old   map[string]wire.Session
	store storesink.Sessions
	sink  *storesink.Sink
}

func (r *replayedSessions) Observe(id string) (wire.Session, error) {
	s, ok := r.old[id]
	if !ok {
		return r.store.Observe(id)
	}
	r.sink.Continue(s)
	return s, nil
}

func (r *replayedSessions) Prior(id, plugin string, n int) ([][]byte, error) {
	return r.store.Prior(id, plugin, n)
}
