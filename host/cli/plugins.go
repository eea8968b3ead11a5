package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/acptap/acptap/host/pluginhost"
	"github.com/acptap/acptap/sdk"
)

type pluginReport struct {
	Name         string           `json:"name"`
	Version      string           `json:"version,omitempty"`
	Kind         string           `json:"kind"`
	Path         string           `json:"path"`
	SHA256       string           `json:"sha256,omitempty"`
	Pinned       bool             `json:"pinned"`
	Inputs       []string         `json:"inputs,omitempty"`
	Outputs      []sdk.Format     `json:"outputs,omitempty"`
	Capabilities []sdk.Capability `json:"capabilities,omitempty"`
	Revisions    []string         `json:"revisions,omitempty"`
	// ClaimedRevisions are the revisions the plugin maps because it claims
	// them (Inputs) and the revisions table does not name them.
	ClaimedRevisions []string `json:"claimedRevisions,omitempty"`
	Starts           bool     `json:"starts"`
	Error            string   `json:"error,omitempty"`
}

func runPlugins(env *Env, args []string) int {
	var c common
	fs := newFlagSet(env, "plugins", "[flags]",
		"Lists every plugin acptap can find (built-ins and acptap-plugin-<name> binaries on the plugin\n"+
			"path), starts each one out of process to ask what it claims, and reports its checksum and\n"+
			"the revisions it is configured for (REVISIONS; \"(claimed)\": the revisions table does not name\n"+
			"the revision, so the plugins that claim it map it). Exits 1 when a configured plugin does not start.")
	c.register(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	cfg, err := c.load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap plugins: %s\n", oneLine(err))
		return ExitFailure
	}
	cat, err := catalog(env, cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "acptap plugins: %s\n", oneLine(err))
		return ExitFailure
	}
	usedBy := map[string][]string{}
	for rev, names := range revisions(cfg) {
		for _, n := range names {
			usedBy[n] = append(usedBy[n], rev)
		}
	}
	names := cat.All()
	for n := range usedBy {
		if !contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	failed := false
	var reports []pluginReport
	for _, n := range names {
		r := probePlugin(cat, n)
		r.Revisions = usedBy[n]
		sort.Strings(r.Revisions)
		if pc, ok := cfg.Plugins[n]; !ok || !pc.Disabled {
			for _, in := range r.Inputs {
				if _, configured := cfg.Revisions[in]; !configured {
					r.ClaimedRevisions = append(r.ClaimedRevisions, in)
				}
			}
		}
		if !r.Starts && len(r.Revisions) > 0 {
			failed = true
		}
		reports = append(reports, r)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(reports)
	} else {
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tVERSION\tKIND\tCLAIMS\tOUTPUTS\tCAPABILITIES\tREVISIONS\tSTARTS\tSHA256\tPATH")
		for _, r := range reports {
			revs := r.Revisions
			for _, c := range r.ClaimedRevisions {
				revs = append(revs, c+" (claimed)")
			}
			starts := "yes"
			if !r.Starts {
				starts = "no: " + r.Error
			}
			sum := r.SHA256
			if len(sum) > 12 {
				sum = sum[:12]
			}
			if r.Pinned {
				sum += " (pinned)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, dash(r.Version), r.Kind,
				dash(strings.Join(r.Inputs, ",")), dash(joinNames(r.Outputs)), dash(joinNames(r.Capabilities)),
				dash(strings.Join(revs, ",")), starts, dash(sum), r.Path)
		}
		tw.Flush()
	}
	if failed {
		return ExitFailure
	}
	return ExitOK
}

func probePlugin(cat *pluginhost.Catalog, name string) pluginReport {
	r := pluginReport{Name: name, Kind: "external"}
	spec, err := cat.Resolve(name)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if spec.Builtin {
		r.Kind = "built-in"
	}
	r.Path, r.Pinned = spec.Path, spec.SHA256 != ""
	spec.Hash = true // the report shows the checksum of the binary started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	inst, err := pluginhost.Launch(ctx, spec, hclog.NewNullLogger())
	if err != nil {
		r.SHA256, _ = pluginhost.FileSHA256(spec.Path)
		r.Error = err.Error()
		return r
	}
	defer inst.Kill()
	r.SHA256, r.Starts = inst.SHA256, true
	r.Version, r.Inputs, r.Outputs, r.Capabilities = inst.Info.Version, inst.Info.Inputs, inst.Info.Outputs, inst.Info.Capabilities
	return r
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// joinNames joins typed names (formats, capabilities) with commas.
func joinNames[T ~string](xs []T) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(x))
	}
	return b.String()
}
