package otlp

import (
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"

	"github.com/acptap/acptap/sdk/aep"
)

// severityOTLP is AEP-0005's severity table (the registry's otlp member).
var severityOTLP = map[string]struct {
	text string
	num  logspb.SeverityNumber
}{
	"debug":    {"DEBUG", logspb.SeverityNumber_SEVERITY_NUMBER_DEBUG},
	"info":     {"INFO", logspb.SeverityNumber_SEVERITY_NUMBER_INFO},
	"notice":   {"INFO2", logspb.SeverityNumber_SEVERITY_NUMBER_INFO2},
	"warning":  {"WARN", logspb.SeverityNumber_SEVERITY_NUMBER_WARN},
	"error":    {"ERROR", logspb.SeverityNumber_SEVERITY_NUMBER_ERROR},
	"critical": {"FATAL", logspb.SeverityNumber_SEVERITY_NUMBER_FATAL},
}

// Severity returns the AEP severity of a decoded event (default info).
func Severity(ev map[string]any) string {
	s := str(ev, "severity")
	if _, ok := severityOTLP[s]; !ok {
		return "info"
	}
	return s
}

func eventTime(ev map[string]any) time.Time {
	t, err := time.Parse(time.RFC3339Nano, str(ev, "time"))
	if err != nil {
		return time.Time{}
	}
	return t
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() || t.UnixNano() < 0 {
		return 0
	}
	return uint64(t.UnixNano())
}

// LogRecord projects one AEP event, already down-levelled, onto an OTLP
// LogRecord (AEP-0005 §3): event_name "dev.aep."+type, the severity table,
// the envelope as aep.* attributes, data members named gen_ai.* as
// attributes and the rest of data as the body. trace and span, when
// given, are the span the event belongs to; the event's own traceparent
// takes precedence. Times are the event's (observed time too), so the
// same event always projects to the same bytes.
func LogRecord(ev map[string]any, trace, span []byte) *logspb.LogRecord {
	sev := severityOTLP[Severity(ev)]
	ts := unixNano(eventTime(ev))
	lr := &logspb.LogRecord{
		TimeUnixNano: ts, ObservedTimeUnixNano: ts,
		SeverityNumber: sev.num, SeverityText: sev.text,
		EventName: EventNamePrefix + str(ev, "type"),
	}
	var a attrs
	a.str(AttrAEPAgentID, str(ev, "agent"))
	a.str(AttrAEPSessionID, str(ev, "session"))
	a.str(AttrAEPRunID, str(ev, "run"))
	a.str(AttrAEPStep, str(ev, "step"))
	a.str(AttrAEPEventID, str(ev, "id"))
	if n, ok := num(ev, "seq"); ok {
		a.int(AttrAEPSequence, n)
	}
	if n, ok := num(ev, "epoch"); ok {
		a.int(AttrAEPEpoch, n)
	}
	a.str(AttrAEPCausationID, str(ev, "cause"))
	capture := str(ev, "capture")
	if capture == "" {
		capture = aep.Metadata.String()
	}
	a.str(AttrAEPCapture, capture)
	a.str(AttrAEPSubject, str(ev, "subject"))
	a.str(AttrAEPSource, str(ev, "source"))
	if data := obj(ev, "data"); data != nil {
		rest := map[string]any{}
		for k, v := range data {
			if isGenAI(k) {
				continue
			}
			rest[k] = v
		}
		for _, kv := range kvs(data) {
			if isGenAI(kv.Key) {
				a = append(a, kv)
			}
		}
		if len(rest) > 0 {
			lr.Body = anyValue(rest)
		}
	}
	lr.Attributes = a
	if t, s := parseTraceparent(str(ev, "traceparent")); t != nil {
		trace, span = t, s
	}
	if trace != nil {
		lr.TraceId, lr.SpanId, lr.Flags = trace, span, 1
	}
	return lr
}

// resource is what every record of one AEP agent shares: service.name is
// the envelope's agent (AEP-0005).
func resource(agent string) *resourcepb.Resource {
	return &resourcepb.Resource{Attributes: []*commonpb.KeyValue{strAttr(AttrServiceName, agent)}}
}

func scope(version string) *commonpb.InstrumentationScope {
	return &commonpb.InstrumentationScope{Name: ScopeName, Version: version}
}

// ResourceLogs wraps one record with its resource and scope.
func ResourceLogs(agent, version string, lr *logspb.LogRecord) *logspb.ResourceLogs {
	return &logspb.ResourceLogs{Resource: resource(agent),
		ScopeLogs: []*logspb.ScopeLogs{{Scope: scope(version), LogRecords: []*logspb.LogRecord{lr}}}}
}
