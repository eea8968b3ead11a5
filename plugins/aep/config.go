package aep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/acptap/acptap/sdk/aep"
)

// Config is the plugin's configuration section (plugins.aep.config; JSON,
// empty means defaults):
//
//	{"host": "laptop",                          // source host (default: the hostname)
//	 "capture": {"default": "metadata",          // ceilings per AEP category …
//	             "attention": "redacted",        // … (session, run, tool, attention, x)
//	             "deltas": "redacted"},          // … and for delta chunks
//	 "deltas": true,                             // chunk events (default: AEP_ACP_DELTAS)
//	 "redact": {"names": ["GITHUB_TOKEN"],       // env variables whose values are secrets; also object keys
//	            "values": ["s3cr3t"],            // literal secret values
//	            "home": "/home/me",              // default: $HOME
//	            "pii": true},                    // rule (d), default true
//	 "connectionLane": false}                    // events outside any session go to session "acp-conn-<connection>"
//
// Start folds the environment into what the config leaves unset: the
// hostname, $HOME, AEP_ACP_DELTAS, and the values of the redact.names
// variables. The environment is therefore an input like the config: a
// rebuild reproduces the live events byte for byte when it runs with the
// same config and environment (pin host, redact.home and deltas in the
// config to make it independent of the machine).
type Config struct {
	Host           string            `json:"host,omitempty"`
	Capture        map[string]string `json:"capture,omitempty"`
	Deltas         *bool             `json:"deltas,omitempty"`
	Redact         RedactConfig      `json:"redact,omitzero"`
	ConnectionLane bool              `json:"connectionLane,omitempty"`
}

// RedactConfig configures the AEP-0003 §9.4 pipeline.
type RedactConfig struct {
	Names  []string `json:"names,omitempty"`
	Values []string `json:"values,omitempty"`
	Home   string   `json:"home,omitempty"`
	PII    *bool    `json:"pii,omitempty"`
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("aep: bad config")

// Categories are the capture-ceiling keys besides "default".
var Categories = []string{"session", "run", "tool", "attention", "x", "deltas"}

// DeltasEnv is the environment variable of the deltas opt-in.
const DeltasEnv = "AEP_ACP_DELTAS"

func parseConfig(raw []byte) (Config, error) {
	var c Config
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	for k, v := range c.Capture {
		if k != "default" && !slices.Contains(Categories, k) {
			return Config{}, fmt.Errorf("%w: capture.%s: not a category (default, %s)", ErrConfig, k, strings.Join(Categories, ", "))
		}
		if _, err := aep.ParseLevel(v); err != nil {
			return Config{}, fmt.Errorf("%w: capture.%s: %w", ErrConfig, k, err)
		}
	}
	return c, nil
}

// env is what resolve reads of the environment (tests substitute it).
type env interface {
	Getenv(string) string
	Hostname() (string, error)
}

type osEnv struct{}

func (osEnv) Getenv(k string) string    { return os.Getenv(k) }
func (osEnv) Hostname() (string, error) { return os.Hostname() }

// settings are the resolved config a connection maps with.
type settings struct {
	host     string
	ceilings map[string]aep.Level
	deltas   bool
	redactor aep.Redactor
	lane     bool
}

// resolve applies defaults and folds in the environment.
func (c Config) resolve(e env) settings {
	s := settings{host: c.Host, lane: c.ConnectionLane, ceilings: map[string]aep.Level{
		"default": aep.Metadata, "attention": aep.Redacted, "deltas": aep.Redacted,
	}}
	if s.host == "" {
		if h, err := e.Hostname(); err == nil && h != "" {
			s.host = h
		} else {
			s.host = "localhost"
		}
	}
	for k, v := range c.Capture {
		s.ceilings[k], _ = aep.ParseLevel(v)
	}
	if c.Deltas != nil {
		s.deltas = *c.Deltas
	} else {
		switch strings.ToLower(strings.TrimSpace(e.Getenv(DeltasEnv))) {
		case "1", "true", "yes", "on":
			s.deltas = true
		}
	}
	r := aep.Redactor{Home: c.Redact.Home, Secrets: append([]string(nil), c.Redact.Values...),
		SecretKeys: append([]string(nil), c.Redact.Names...)}
	if r.Home == "" {
		r.Home = e.Getenv("HOME")
	}
	for _, n := range c.Redact.Names {
		if v := e.Getenv(n); v != "" {
			r.Secrets = append(r.Secrets, v)
		}
	}
	if c.Redact.PII != nil {
		r.NoPII = !*c.Redact.PII
	}
	s.redactor = r
	return s
}

// ceiling returns the capture ceiling of an AEP category.
func (s settings) ceiling(category string) aep.Level {
	if l, ok := s.ceilings[category]; ok {
		return l
	}
	return s.ceilings["default"]
}
