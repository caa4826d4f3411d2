package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Upstream's environment convention for a Trusted Server file
// (IABTechLab/trusted-server docs/guide/configuration.md, "Environment
// Variable Overrides"; crates/trusted-server-core/src/settings.rs:25-28,
// 2682-2700): TRUSTED_SERVER__SECTION__SUBSECTION__FIELD, upper case,
// segments joined by "__", each naming a key of the TOML hierarchy. The
// environment is added after the file, so a variable wins over the file's
// value. Arrays take a JSON array, a comma-separated list, or one variable
// per element with a numeric segment (`__0`); tables take a JSON object
// (settings.rs:3208-3331, vec_from_seq_or_map and map_from_obj_or_str).
//
// Upstream's deployed path (EdgeZero v0.0.4's overlay, run by `ts config
// push`) changes only keys the file already has; ssatd also creates a
// missing key, as settings.rs's own loader does, so that the example
// file's advice of setting TRUSTED_SERVER__CREATIVE_OPPORTUNITIES__SLOT to
// a JSON array works on a file that has no slots.
const (
	tsEnvPrefix    = "TRUSTED_SERVER"
	tsEnvSeparator = "__"
)

// tsEnv applies the TRUSTED_SERVER__ variables of environ to tree, the
// parsed file, converting each value to what its key holds so that the
// decoder checks it like a file value, and records each variable as where
// its key was set.
func (d *decoder) tsEnv(tree map[string]any, environ []string) {
	var names []string
	vars := map[string]string{}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, tsEnvPrefix+tsEnvSeparator) {
			if _, dup := vars[name]; !dup {
				names = append(names, name)
			}
			vars[name] = value
		}
	}
	// Sorted, so that BIDDERS__0 comes before BIDDERS__1.
	slices.Sort(names)
	for _, name := range names {
		segs := strings.Split(strings.TrimPrefix(name, tsEnvPrefix+tsEnvSeparator), tsEnvSeparator)
		d.tsSetEnv(tree, segs, name, vars[name])
	}
}

// tsSetEnv walks the schema and tree along segs and sets the value.
func (d *decoder) tsSetEnv(tree map[string]any, segs []string, name, raw string) {
	t := reflect.TypeFor[tsSettings]()
	var node any = tree
	var set func(v any)
	key := ""
	for i, seg := range segs {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		seg = strings.ToLower(seg)
		switch {
		case t.Kind() == reflect.Struct || t.Kind() == reflect.Map || t.Kind() == reflect.Interface:
			m, ok := node.(map[string]any)
			if !ok {
				m = map[string]any{}
				set(m)
			}
			if t.Kind() == reflect.Struct {
				f, ok := tomlFields(t)[seg]
				if !ok {
					d.tsUnknownVar(name, seg, key, t)
					return
				}
				t = t.Field(f).Type
			} else if t.Kind() == reflect.Map {
				t = t.Elem()
			}
			key = joinKey(key, tomlKey(seg))
			node = m[seg]
			set = func(v any) { m[seg] = v }
		case t.Kind() == reflect.Slice && i < len(segs):
			idx, err := strconv.Atoi(seg)
			if err != nil || idx < 0 || idx > 1000 {
				d.problems = append(d.problems, &located{where: name, err: fmt.Errorf("%s: %q is not an element index", key, seg)})
				return
			}
			list, _ := node.([]any)
			for len(list) <= idx {
				var empty any
				if k := t.Elem().Kind(); k == reflect.Struct || k == reflect.Map {
					empty = map[string]any{}
				}
				list = append(list, empty)
			}
			set(list)
			t = t.Elem()
			key = fmt.Sprintf("%s[%d]", key, idx)
			node = list[idx]
			set = func(v any) { list[idx] = v }
		default:
			d.problems = append(d.problems, &located{where: name, err: fmt.Errorf("%s: unknown variable: %s holds a single value", name, key)})
			return
		}
	}
	d.src.env[key] = name
	if err := tsJSONSyntax(t, raw); err != nil {
		d.failed = append(d.failed, key)
		d.problems = append(d.problems, &located{where: name, err: fmt.Errorf("%s: %w", key, err)})
		return
	}
	set(envValue(t, raw))
}

// tsJSONSyntax refuses a value meant as JSON (it begins with '[' or '{')
// for a table or a list of tables that does not parse, saying where, since
// read as a comma list its pieces would be quoted back as strings. The
// error never holds the text, which may carry the table's secrets.
func tsJSONSyntax(t reflect.Type, raw string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	elem := t
	if t.Kind() == reflect.Slice {
		elem = t.Elem()
	}
	s := strings.TrimSpace(raw)
	if k := elem.Kind(); (k != reflect.Struct && k != reflect.Map) || s == "" || (s[0] != '[' && s[0] != '{') {
		return nil
	}
	var v any
	err := json.Unmarshal([]byte(s), &v)
	if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
		return fmt.Errorf("the value is not valid JSON (at byte %d)", se.Offset)
	}
	if err != nil {
		return errors.New("the value is not valid JSON")
	}
	return nil
}

// tsUnknownVar reports a variable that names no key, with the nearest key
// of that table.
func (d *decoder) tsUnknownVar(name, seg, parent string, in reflect.Type) {
	msg := "unknown variable"
	if best := nearest(seg, slices.Sorted(maps.Keys(tomlFields(in))), len(seg)/3+1); best != "" {
		parts := []string{tsEnvPrefix}
		if parent != "" {
			for _, p := range strings.Split(parent, ".") {
				parts = append(parts, strings.ToUpper(p))
			}
		}
		parts = append(parts, strings.ToUpper(best))
		msg += "; did you mean " + strings.Join(parts, tsEnvSeparator) + "?"
	}
	d.problems = append(d.problems, fmt.Errorf("%s: %s", name, msg))
}

// envValue converts a variable's text to the value a TOML file would hold
// for a key of type t. Text that does not convert stays a string, which the
// decoder then reports as found where something else is wanted.
func envValue(t reflect.Type, raw string) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := strings.TrimSpace(raw)
	switch t.Kind() {
	case reflect.Bool:
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	case reflect.Int, reflect.Int64:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	case reflect.Float64:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	case reflect.Slice:
		if v, ok := jsonValue(s); ok {
			if _, isList := v.([]any); isList {
				return v
			}
		}
		// "[a, b]" that is not JSON, or "a,b": a list of words
		// (settings.rs:3291-3329).
		inner := s
		if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
			inner = s[1 : len(s)-1]
		}
		var out []any
		for _, p := range strings.Split(inner, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, envValue(t.Elem(), p))
			}
		}
		return out
	case reflect.Struct, reflect.Map, reflect.Interface:
		if v, ok := jsonValue(s); ok {
			return v
		}
	}
	return raw
}

// jsonValue decodes JSON text into the values go-toml produces: int64 for
// integers, float64 for other numbers.
func jsonValue(s string) (any, bool) {
	if s == "" || (s[0] != '[' && s[0] != '{') {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return nil, false
	}
	return fromJSON(v), true
}

func fromJSON(v any) any {
	switch t := v.(type) {
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return n
		}
		f, _ := t.Float64()
		return f
	case []any:
		for i := range t {
			t[i] = fromJSON(t[i])
		}
	case map[string]any:
		for k := range t {
			t[k] = fromJSON(t[k])
		}
	}
	return v
}

// tsEnvNames lists the TRUSTED_SERVER__ variables of environ, sorted.
func tsEnvNames(environ []string) []string {
	var names []string
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, tsEnvPrefix+tsEnvSeparator) && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// ignoredEnvWarnings says that TRUSTED_SERVER__ variables beside a file
// in ssatd's format are not read (a publisher who ran `ssatd config
// convert` and kept the deployment's variables would otherwise lose them
// without a word). Not an error: the same environment may serve a Trusted
// Server next to ssatd. Names only, never values.
func (s Source) ignoredEnvWarnings() []string {
	if len(s.ignoredEnv) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s set, but the configuration is in ssatd's format, which reads no %s%s variable: set the key in the file or by its SSATD_ variable (docs/trusted-server.md, \"Environment\")",
		strings.Join(s.ignoredEnv, ", "), tsEnvPrefix, tsEnvSeparator)}
}
