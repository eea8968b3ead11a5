package aep

import (
	"regexp"
	"strings"
)

// The redaction floor outside AEP events. The host applies it where a
// secret can land outside the MCP scrubbing rule (ASR-712): the agent's
// argv in the wire-log header and in acptap.log, the URLs of MCP servers,
// and the _meta members of client-to-agent lines. These functions apply
// rule (a) only, the secret patterns, plus credentials in URLs; never the
// home-directory or PII rules, which would change paths and text the
// recording must keep.

var (
	// urlUserinfo is the password of a URL's userinfo: scheme://user:pass@.
	urlUserinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@"']*):([^/\s@"']+)@`)
	// urlSecretParam is a query or fragment parameter named for a secret.
	urlSecretParam = regexp.MustCompile(`(?i)([?&#;](?:[a-z0-9_.\-]*[_\-.])?(?:api[_\-]?key|apikey|key|token|access[_\-]?token|refresh[_\-]?token|id[_\-]?token|secret|client[_\-]?secret|password|passwd|pass|pwd|auth|sig|signature|credentials?|code)=)([^&#\s"']+)`)
	// argvSecretName is a flag or environment name that holds a secret:
	// --api-key, --openai-api-key, --github-token, OPENAI_API_KEY, ….
	argvSecretName = regexp.MustCompile(`(?i)(?:^|[-_.])(?:password|passwd|pass|pwd|secret|api[-_]?key|apikey|token|auth|authorization|credentials?|private[-_]?key|access[-_]?key)$`)
)

// RedactSecrets replaces the secret patterns of rule (a) and the
// credentials of URLs (the password of user:pass@, the values of query
// parameters named for a secret: api_key, token, sig, …) with
// RedactedSecret. A string with nothing to redact is returned as it is.
func RedactSecrets(s string) string {
	if strings.Contains(s, "@") {
		s = urlUserinfo.ReplaceAllString(s, "${1}:"+RedactedSecret+"@")
	}
	if strings.Contains(s, "=") {
		s = urlSecretParam.ReplaceAllString(s, "${1}"+RedactedSecret)
	}
	return secretPatterns(s)
}

// RedactArgv returns a copy of a command line with its secrets replaced:
// the value of a flag named for a secret (--api-key=V, or V as the next
// argument after --api-key), of NAME=V where NAME is (OPENAI_API_KEY=V),
// and whatever RedactSecrets finds in each argument. The program name and
// other arguments stay. nil stays nil.
func RedactArgv(argv []string) []string {
	if argv == nil {
		return nil
	}
	out := make([]string, len(argv))
	next := false // the previous argument was a secret flag without a value
	for i, a := range argv {
		if next {
			out[i], next = RedactedSecret, false
			continue
		}
		name, _, hasValue := strings.Cut(a, "=")
		flag := strings.HasPrefix(a, "-")
		if i > 0 && argvSecretName.MatchString(strings.TrimLeft(name, "-")) && strings.TrimLeft(name, "-") != "" {
			switch {
			case hasValue:
				out[i] = name + "=" + RedactedSecret
				continue
			case flag:
				next = true
			}
		}
		out[i] = RedactSecrets(a)
	}
	return out
}

// IsSecretKey reports whether an object key names a credential (password,
// token, api_key, authorization, …): Value drops the values of such keys.
func IsSecretKey(k string) bool { return Redactor{}.isSecretKey(k) }
