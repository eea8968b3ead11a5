package config

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// captureStd swaps os.Stdout and os.Stderr for pipes while f runs.
func captureStd(t *testing.T, f func()) (stdout, stderr string) {
	t.Helper()
	or, ow, _ := os.Pipe()
	er, ew, _ := os.Pipe()
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = ow, ew
	defer func() { os.Stdout, os.Stderr = oldOut, oldErr }()
	f()
	ow.Close()
	ew.Close()
	o, _ := io.ReadAll(or)
	e, _ := io.ReadAll(er)
	return string(o), string(e)
}

func TestNewLoggerFile(t *testing.T) {
	old := setUmask(0o277)
	defer setUmask(old)
	c := validConfig()
	c.Store = filepath.Join(t.TempDir(), "store")
	c.Log.File = ""
	c.Log.Level = "debug"
	stdout, stderr := captureStd(t, func() {
		log, closer, err := NewLogger(c, "acptap")
		if err != nil {
			t.Fatal(err)
		}
		log.Debug("hello", "conn", "c-1")
		log.Trace("hidden")
		closer.Close()
	})
	if stdout != "" || stderr != "" {
		t.Errorf("logger wrote to stdout %q / stderr %q", stdout, stderr)
	}
	path := filepath.Join(c.Store, "logs", "acptap.log")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	var rec map[string]any
	if len(lines) != 1 || json.Unmarshal(lines[0], &rec) != nil ||
		rec["@message"] != "hello" || rec["@module"] != "acptap" || rec["conn"] != "c-1" {
		t.Errorf("log file: %s", b)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, _ := os.Stat(p); fi.Mode().Perm() != want {
			t.Errorf("%s: mode %o, want %o", p, fi.Mode().Perm(), want)
		}
	}
}

func TestNewLoggerStderr(t *testing.T) {
	c := validConfig()
	c.Log.Stderr = true
	c.Log.File = filepath.Join(t.TempDir(), "unused.log")
	stdout, stderr := captureStd(t, func() {
		log, closer, err := NewLogger(c, "acptap")
		if err != nil {
			t.Fatal(err)
		}
		log.Info("to stderr")
		closer.Close()
	})
	if stdout != "" || !strings.Contains(stderr, "to stderr") {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
	if _, err := os.Stat(c.Log.File); err == nil {
		t.Error("log file created in stderr mode")
	}
}
