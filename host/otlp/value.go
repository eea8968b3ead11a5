package otlp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
)

// decodeEvent decodes one AEP event line, keeping numbers exact.
func decodeEvent(line []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var ev map[string]any
	if err := dec.Decode(&ev); err != nil {
		return nil, fmt.Errorf("aep event: %w", err)
	}
	if ev == nil {
		return nil, fmt.Errorf("aep event: not an object")
	}
	return ev, nil
}

// anyValue converts a decoded JSON value to an OTLP AnyValue: objects
// become key-value lists (keys sorted, so equal events give equal bytes),
// integers int, other numbers double.
func anyValue(v any) *commonpb.AnyValue {
	switch x := v.(type) {
	case nil:
		return &commonpb.AnyValue{}
	case string:
		return strValue(x)
	case bool:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: x}}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return intValue(n)
		}
		f, _ := x.Float64()
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
	case float64:
		if x == float64(int64(x)) {
			return intValue(int64(x))
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: x}}
	case int:
		return intValue(int64(x))
	case int64:
		return intValue(x)
	case []any:
		arr := &commonpb.ArrayValue{}
		for _, e := range x {
			arr.Values = append(arr.Values, anyValue(e))
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: arr}}
	case map[string]any:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: kvs(x)}}}
	default:
		return strValue(fmt.Sprint(x))
	}
}

func kvs(m map[string]any) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, &commonpb.KeyValue{Key: k, Value: anyValue(m[k])})
	}
	return out
}

func strValue(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

func intValue(n int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: n}}
}

func strAttr(k, v string) *commonpb.KeyValue { return &commonpb.KeyValue{Key: k, Value: strValue(v)} }
func intAttr(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: intValue(v)}
}

// attrs collects attributes, skipping empty strings.
type attrs []*commonpb.KeyValue

func (a *attrs) str(k, v string) {
	if v != "" {
		*a = append(*a, strAttr(k, v))
	}
}

func (a *attrs) int(k string, v int64) { *a = append(*a, intAttr(k, v)) }

func (a *attrs) any(k string, v any) { *a = append(*a, &commonpb.KeyValue{Key: k, Value: anyValue(v)}) }

func (a *attrs) strs(k string, vs ...string) {
	arr := &commonpb.ArrayValue{}
	for _, v := range vs {
		arr.Values = append(arr.Values, strValue(v))
	}
	*a = append(*a, &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: arr}}})
}

// str reads a string member.
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// obj reads an object member.
func obj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}

// num reads an integer member.
func num(m map[string]any, k string) (int64, bool) {
	switch x := m[k].(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case float64:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

// jsonText encodes a value as compact JSON text (content attributes).
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func boolAttr(k string, v bool) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v}}}
}
