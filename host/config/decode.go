package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/v2"
)

// decode unmarshals the merged layers into c with strict types: the only
// conversions are from strings (the environment's one type) to numbers,
// booleans and durations, and from integral floats to integers.
func decode(k *koanf.Koanf, c *Config) error {
	dc := &mapstructure.DecoderConfig{TagName: "koanf", ErrorUnused: true, DecodeHook: convert}
	if err := k.UnmarshalWithConf("", c, koanf.UnmarshalConf{DecoderConfig: dc}); err != nil {
		return decodeError(err)
	}
	return nil
}

var durationType = reflect.TypeFor[time.Duration]()

func convert(from, to reflect.Value) (any, error) {
	switch {
	case to.Type() == durationType && from.Type() != durationType:
		if from.Kind() != reflect.String {
			return nil, fmt.Errorf("%v is not a duration: write it as a string such as \"30s\"", from.Interface())
		}
		d, err := time.ParseDuration(strings.TrimSpace(from.String()))
		if err != nil {
			return nil, fmt.Errorf("%q is not a duration (such as \"30s\")", from.String())
		}
		return d, nil
	case from.Kind() == reflect.String && to.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(from.String()))
		if err != nil {
			return nil, fmt.Errorf("%q is not a boolean", from.String())
		}
		return b, nil
	case from.Kind() == reflect.String && to.Kind() == reflect.Int:
		n, err := strconv.Atoi(strings.TrimSpace(from.String()))
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", from.String())
		}
		return n, nil
	case from.CanFloat() && to.Kind() == reflect.Int:
		f := from.Float()
		if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
			return nil, fmt.Errorf("%v is not an integer", f)
		}
		return int(f), nil
	}
	return from.Interface(), nil
}

// decodeError turns mapstructure's report into one "key: problem" line per
// field, sorted.
func decodeError(err error) error {
	var lines []string
	var walk func(error)
	walk = func(e error) {
		var de *mapstructure.DecodeError
		switch {
		case errors.As(e, &de) && !isJoined(e):
			inner := de.Unwrap()
			for {
				var d2 *mapstructure.DecodeError
				if !errors.As(inner, &d2) {
					break
				}
				de, inner = d2, d2.Unwrap()
			}
			lines = append(lines, fieldKey(de.Name())+": "+inner.Error())
		case isJoined(e):
			for _, sub := range e.(interface{ Unwrap() []error }).Unwrap() {
				walk(sub)
			}
		case errors.Unwrap(e) != nil:
			walk(errors.Unwrap(e))
		default:
			lines = append(lines, e.Error())
		}
	}
	walk(err)
	slices.Sort(lines)
	return fmt.Errorf("config: %s", strings.Join(lines, "; "))
}

func isJoined(e error) bool {
	_, ok := e.(interface{ Unwrap() []error })
	return ok
}

var indexPart = regexp.MustCompile(`\[([^\]]*)\]`)

// fieldKey turns mapstructure's "plugins[x].sha256" into "plugins.x.sha256".
func fieldKey(name string) string {
	return indexPart.ReplaceAllStringFunc(name, func(m string) string {
		return "." + keyPath(m[1:len(m)-1])
	})
}
