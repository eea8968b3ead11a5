package config

import (
	"reflect"
)

// The configuration's keys are Config's koanf tags and nothing else: the
// known-key set (schema) and the defaults layer are read from the struct,
// so a field added there is a key of the file, the environment and the
// flags, with its default, and no list beside it can fall behind.

// schema is the shape of the configuration.
var schema = keysOf(reflect.TypeFor[Config]())

// keysOf is the keys a value of type t takes: a struct its tagged fields, a
// map of structs or of plain values any key ("*"), and everything else —
// strings, numbers, durations, lists, an opaque map[string]any such as a
// plugin's config — is a leaf (nil) that takes any value there.
func keysOf(t reflect.Type) keys {
	switch t.Kind() {
	case reflect.Struct:
		k := keys{}
		for i := range t.NumField() {
			if name, ok := tagName(t.Field(i)); ok {
				k[name] = keysOf(t.Field(i).Type)
			}
		}
		return k
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return nil
		}
		return keys{"*": keysOf(t.Elem())}
	}
	return nil
}

// tagName is a field's key, if it has one ("-" and untagged fields are not
// configuration).
func tagName(f reflect.StructField) (string, bool) {
	name := f.Tag.Get("koanf")
	if !f.IsExported() || name == "" || name == "-" {
		return "", false
	}
	return name, true
}

// layer turns a configuration value into the nested map koanf merges, keyed
// by the koanf tags. A nil map is left out (it sets nothing); map keys are
// kept whole (revision keys hold dots, so the map is never unflattened).
func layer(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Struct:
		m := map[string]any{}
		for i := range v.NumField() {
			name, ok := tagName(v.Type().Field(i))
			if !ok {
				continue
			}
			f := v.Field(i)
			if f.Kind() == reflect.Map && f.IsNil() {
				continue
			}
			m[name] = layer(f)
		}
		return m
	case reflect.Map:
		if v.Type().Elem().Kind() == reflect.Interface {
			return v.Interface()
		}
		m := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			m[it.Key().String()] = layer(it.Value())
		}
		return m
	}
	return v.Interface()
}
