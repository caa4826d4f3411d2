package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// The TOML file is read in two steps so that one wrong value does not hide
// the others: go-toml parses the document into plain values (only a syntax
// error stops here), then decode walks those values against Config and
// records every unknown key and every value of the wrong type, each with
// its key path and line, what was found and what is wanted.

// located puts where a problem was written (a file line or an environment
// variable) in front of it.
type located struct {
	where string
	err   error
}

func (e *located) Error() string { return e.where + ": " + e.err.Error() }

func (e *located) Unwrap() error { return e.err }

// sources records where each key was set, so that every problem, including
// those found by Validate, can point at the line or the variable to fix.
type sources struct {
	lines map[string]int    // key path -> line in the file
	env   map[string]string // key path -> environment variable
	// names maps a native key that a Trusted Server file sets to the
	// upstream key it came from, so that Validate's problems name the key
	// the publisher wrote (tsmap.go).
	names map[string]string
}

// where returns the location of key or of its nearest parent that has one:
// a missing required key is shown at its section's header.
func (s *sources) where(key string) string {
	for k := key; k != ""; k = parentKey(k) {
		if name, ok := s.env[k]; ok {
			return name
		}
		if line, ok := s.lines[k]; ok {
			return fmt.Sprintf("line %d", line)
		}
	}
	return ""
}

// name is the key a problem about native key shows: the upstream key it
// came from, or, when the [ssatd] table of a Trusted Server file set it
// (and no SSATD_ variable), the key as that table spells it.
func (s *sources) name(key string) string {
	if up, ok := s.names[key]; ok {
		return up
	}
	if _, ok := s.env[key]; ok {
		return key
	}
	for k := key; k != ""; k = parentKey(k) {
		if _, ok := s.lines["ssatd."+k]; ok {
			return "ssatd." + key
		}
	}
	return key
}

// parentKey drops the last ".name" or "[i]" of a key path.
func parentKey(k string) string {
	i := strings.LastIndexAny(k, ".[")
	if i < 0 {
		return ""
	}
	return k[:i]
}

// locate prefixes err with where key was set, when known.
func (s *sources) locate(key string, err error) error {
	if w := s.where(key); w != "" {
		return &located{where: w, err: err}
	}
	return err
}

// decoder fills a Config from the values go-toml parsed.
type decoder struct {
	src      *sources
	problems []error
	// failed holds the keys whose values could not be used; Validate's
	// complaints about them (the default left in place) would be noise.
	failed []string
	// root is the type of the whole document, where a misplaced top-level
	// key is looked for: Config, or a Trusted Server file's (tsschema.go).
	root reflect.Type
}

func newDecoder() *decoder {
	return &decoder{src: &sources{lines: map[string]int{}, env: map[string]string{}, names: map[string]string{}}, root: reflect.TypeFor[Config]()}
}

// file fills c from the TOML document data. It returns false only for a
// syntax error, after which nothing in the file can be trusted.
func (d *decoder) file(data []byte, c *Config) bool {
	var tree map[string]any
	if err := toml.Unmarshal(data, &tree); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			err = fmt.Errorf("line %d, column %d: %s", line, col, strings.TrimPrefix(de.Error(), "toml: "))
		} else {
			err = fmt.Errorf("toml: %w", err)
		}
		d.problems = append(d.problems, err)
		return false
	}
	indexLines(data, d.src.lines)
	d.table(reflect.ValueOf(c).Elem(), tree, "")
	return true
}

func (d *decoder) fail(key string, format string, args ...any) {
	d.failed = append(d.failed, key)
	d.problems = append(d.problems, d.src.locate(key, &problem{key: key, err: fmt.Errorf(format, args...)}))
}

// covers reports whether key is, contains or lies under a key that failed
// to decode.
func (d *decoder) covers(key string) bool {
	for _, f := range d.failed {
		if within(key, f) || within(f, key) {
			return true
		}
	}
	return false
}

// within reports whether key is outer or lies under it.
func within(key, outer string) bool {
	return key == outer || strings.HasPrefix(key, outer+".") || strings.HasPrefix(key, outer+"[")
}

func joinKey(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// table decodes m into the struct dst, in file order so that problems are
// listed as the operator reads the file.
func (d *decoder) table(dst reflect.Value, m map[string]any, path string) {
	fields := tomlFields(dst.Type())
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		la, lb := d.src.lines[joinKey(path, tomlKey(a))], d.src.lines[joinKey(path, tomlKey(b))]
		return cmp.Or(cmp.Compare(la, lb), strings.Compare(a, b))
	})
	for _, name := range names {
		key := joinKey(path, tomlKey(name))
		i, ok := fields[name]
		if !ok {
			d.unknown(key, name, m[name], dst.Type())
			continue
		}
		d.value(dst.Field(i), m[name], key)
	}
}

// tomlFields maps each TOML key of struct type t to its field index.
func tomlFields(t reflect.Type) map[string]int {
	out := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if name != "" && name != "-" {
			out[name] = i
		}
	}
	return out
}

var durationType = reflect.TypeFor[Duration]()

// value decodes v into dst, recording a problem when the types disagree.
func (d *decoder) value(dst reflect.Value, v any, key string) {
	t := dst.Type()
	if t == durationType {
		d.duration(dst, v, key)
		return
	}
	switch t.Kind() {
	case reflect.String:
		if s, ok := v.(string); ok {
			dst.SetString(s)
			return
		}
	case reflect.Bool:
		if b, ok := v.(bool); ok {
			dst.SetBool(b)
			return
		}
	case reflect.Int, reflect.Int64:
		if n, ok := v.(int64); ok {
			if dst.OverflowInt(n) {
				d.fail(key, "found %s, which is too large", describeFoundAt(key, n))
				return
			}
			dst.SetInt(n)
			return
		}
	case reflect.Float64:
		// TOML keeps 1 and 1.0 apart; a number key takes either.
		switch n := v.(type) {
		case float64:
			dst.SetFloat(n)
			return
		case int64:
			dst.SetFloat(float64(n))
			return
		}
	case reflect.Struct:
		if m, ok := v.(map[string]any); ok {
			d.table(dst, m, key)
			return
		}
	case reflect.Slice:
		if list, ok := v.([]any); ok {
			d.slice(dst, list, key)
			return
		}
	case reflect.Map:
		// Maps keyed by string (slot targeting and bidders, endpoint
		// headers): each entry decodes into the element type; Validate
		// checks what the values mean.
		if m, ok := v.(map[string]any); ok && t.Key().Kind() == reflect.String {
			out := reflect.MakeMapWithSize(t, len(m))
			for k, e := range m {
				ev := reflect.New(t.Elem()).Elem()
				d.value(ev, e, joinKey(key, tomlKey(k)))
				out.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
			}
			dst.Set(out)
			return
		}
	case reflect.Interface:
		dst.Set(reflect.ValueOf(v))
		return
	case reflect.Pointer:
		// An optional key (a Trusted Server Option<T>): nil when absent. A
		// table type with defaults gets them before the file's keys.
		if dst.IsNil() {
			dst.Set(reflect.New(t.Elem()))
			if df, ok := dst.Interface().(defaulter); ok {
				df.setDefaults()
			}
		}
		d.value(dst.Elem(), v, key)
		return
	}
	d.wrongType(key, v, t)
}

// duration decodes a Duration written as a string ("1.5s").
func (d *decoder) duration(dst reflect.Value, v any, key string) {
	s, ok := v.(string)
	if !ok {
		d.wrongType(key, v, durationType)
		return
	}
	dur, err := parseDuration(s)
	if err != nil {
		d.fail(key, "%w", err)
		return
	}
	dst.Set(reflect.ValueOf(Duration{dur}))
}

// wrongType records that v, at key, is not of the type t wants.
func (d *decoder) wrongType(key string, v any, t reflect.Type) {
	found := describeFoundAt(key, v)
	// A string where a table or tables are wanted is most often a
	// variable's JSON that did not parse, whose text may hold any secret
	// of the table (TRUSTED_SERVER__EC='{"passphrase":…'): not quoted.
	if _, ok := v.(string); ok && holdsKeys(t) {
		found = "a string"
	}
	d.fail(key, "found %s, wants %s", found, describeWant(t))
}

// holdsKeys says whether t is a table or an array of tables in TOML terms.
func holdsKeys(t reflect.Type) bool {
	if k := t.Kind(); k == reflect.Slice || k == reflect.Array {
		t = t.Elem()
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
}

// slice replaces dst (a default such as bots.user_agents is replaced, not
// extended) with the decoded elements of list.
func (d *decoder) slice(dst reflect.Value, list []any, key string) {
	out := reflect.MakeSlice(dst.Type(), len(list), len(list))
	for i, e := range list {
		d.value(out.Index(i), e, fmt.Sprintf("%s[%d]", key, i))
	}
	dst.Set(out)
}

// unknown reports a key Config does not have, with the nearest known key
// of the same table, or the same name in another section, as a suggestion.
func (d *decoder) unknown(key, name string, v any, in reflect.Type) {
	msg := "unknown key"
	if _, ok := v.(map[string]any); ok {
		msg = "unknown table"
	}
	if s := suggest(name, parentKey(key), in, d.root); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	d.problems = append(d.problems, d.src.locate(key, &problem{key: key, err: errors.New(msg)}))
}

// defaulter is a table type that sets its own defaults when an optional
// table is first written.
type defaulter interface{ setDefaults() }

func suggest(name, parent string, in, root reflect.Type) string {
	// Within a third of the name's length: "listn" finds "listen", while
	// "x" finds nothing.
	if best := nearest(name, slices.Sorted(maps.Keys(tomlFields(in))), len(name)/3+1); best != "" {
		return joinKey(parent, best)
	}
	if parent != "" {
		return ""
	}
	// A top-level key that belongs in a section, e.g. domain outside
	// [publisher].
	for i := range root.NumField() {
		sect := root.Field(i)
		st := sect.Type
		if st.Kind() == reflect.Pointer {
			st = st.Elem()
		}
		if st.Kind() != reflect.Struct {
			continue
		}
		if _, ok := tomlFields(st)[name]; ok {
			return sect.Tag.Get("toml") + "." + name
		}
	}
	return ""
}

// nearest returns the candidate closest to name by edit distance, the
// first of equals, when that distance is below limit; else "".
func nearest(name string, candidates []string, limit int) string {
	best := ""
	for _, c := range candidates {
		if d := editDistance(name, c); d < limit {
			best, limit = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// parseDuration accepts what time.ParseDuration accepts, and says what a
// duration looks like instead of quoting the time package.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("found %q, wants %s", s, describeWant(durationType))
	}
	return d, nil
}

// describeFoundAt is describeFound, without the value itself when key
// holds a secret (secretKey): a passphrase written unquoted, or set by a
// variable to the wrong kind of value, must not reach the error output.
func describeFoundAt(key string, v any) string {
	if !secretKey(key) {
		return describeFound(v)
	}
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return describeFound(v)
}

// describeFound names a parsed TOML value for an operator.
func describeFound(v any) string {
	switch t := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", t)
	case int64:
		return fmt.Sprintf("the integer %d", t)
	case float64:
		return fmt.Sprintf("the number %v", t)
	case bool:
		return fmt.Sprintf("%t", t)
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

// describeWant names what a Config field accepts, in TOML terms.
func describeWant(t reflect.Type) string {
	if t == durationType {
		return `a duration string with a unit, such as "15s", "500ms" or "1m30s"`
	}
	switch t.Kind() {
	case reflect.Pointer:
		return describeWant(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Interface:
		return "a value"
	case reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "a table"
	case reflect.Slice:
		return "an array of " + plural(t.Elem())
	}
	return "a value of another type"
}

func plural(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "strings"
	case reflect.Int, reflect.Int64:
		return "integers"
	case reflect.Struct:
		return "tables"
	case reflect.Slice:
		return "arrays of " + plural(t.Elem())
	}
	return "values"
}

// indexLines records the line of every key, table header and array element
// in data, under the key paths decode uses ("a.b[2].c").
func indexLines(data []byte, lines map[string]int) {
	var p unstable.Parser
	p.Reset(data)
	lineOf := func(r unstable.Range) int {
		return bytes.Count(data[:r.Offset], []byte("\n")) + 1
	}
	record := func(key string, r unstable.Range) {
		if _, seen := lines[key]; !seen && r.Length > 0 {
			lines[key] = lineOf(r)
		}
	}
	arrays := map[string]int{} // array-of-tables path -> elements so far
	// headerPath resolves a table header: a part that names an array of
	// tables refers to its last element.
	headerPath := func(n *unstable.Node) (string, unstable.Range) {
		path := ""
		var r unstable.Range
		it := n.Key()
		for it.Next() {
			path = joinKey(path, tomlKey(string(it.Node().Data)))
			r = it.Node().Raw
			record(path, r)
			if count, ok := arrays[path]; ok && !it.IsLast() {
				path = fmt.Sprintf("%s[%d]", path, count-1)
			}
		}
		return path, r
	}
	var keyValue func(n *unstable.Node, prefix string)
	keyValue = func(n *unstable.Node, prefix string) {
		key := prefix
		it := n.Key()
		for it.Next() {
			key = joinKey(key, tomlKey(string(it.Node().Data)))
			record(key, it.Node().Raw)
		}
		indexValue(n.Value(), key, record, keyValue)
	}
	prefix := ""
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table:
			path, r := headerPath(n)
			record(path, r)
			prefix = path
		case unstable.ArrayTable:
			path, r := headerPath(n)
			arrays[path]++
			prefix = fmt.Sprintf("%s[%d]", path, arrays[path]-1)
			record(path, r)
			record(prefix, r)
		case unstable.KeyValue:
			keyValue(n, prefix)
		}
	}
}

// indexValue records the elements of arrays and the keys of inline tables.
func indexValue(v *unstable.Node, key string, record func(string, unstable.Range), keyValue func(*unstable.Node, string)) {
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if it.Node().Kind == unstable.KeyValue {
				keyValue(it.Node(), key)
			}
		}
	case unstable.Array:
		i := 0
		it := v.Children()
		for it.Next() {
			e := it.Node()
			if e.Kind == unstable.Comment {
				continue
			}
			elem := fmt.Sprintf("%s[%d]", key, i)
			record(elem, e.Raw)
			indexValue(e, elem, record, keyValue)
			i++
		}
	}
}
