package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
)

// configKeys lists every key the configuration decodes, as dotted paths;
// a key inside an array of tables is written "auction.openrtb[].name".
// Maps (targeting, bidders, headers) are leaves.
func configKeys(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := name
		if prefix != "" {
			key = prefix + "." + name
		}
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Struct && ft != reflect.TypeFor[config.Duration]():
			out = append(out, configKeys(ft, key)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, configKeys(ft.Elem(), key+"[]")...)
		default:
			out = append(out, key)
		}
	}
	return out
}

// readmeDefaults reads the key tables of README.md's "Configuration"
// section: key -> the default cell, as written.
func readmeDefaults(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Configuration\n")
	if !ok {
		t.Fatal(`README.md has no "## Configuration" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	out := map[string]string{}
	table := "" // the section a "### `[server]`" heading names, for bare keys
	sc := bufio.NewScanner(strings.NewReader(section))
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "### `["); ok {
			table = ""
			if name, rest, _ := strings.Cut(h, "]`"); !strings.Contains(rest, "`") {
				table = name
			}
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		parent := table
		for _, k := range strings.Split(cells[1], ",") {
			k = strings.Trim(strings.TrimSpace(k), "`")
			if strings.Contains(k, ".") {
				parent = k[:strings.LastIndex(k, ".")]
			} else if parent != "" {
				k = parent + "." + k
			}
			out[k] = strings.TrimSpace(cells[2])
		}
	}
	return out
}

// defaultValues flattens config.Defaults(), as `config check` prints it,
// to dotted keys.
func defaultValues(t *testing.T) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	if err := config.Defaults().WriteEffective(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := toml.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		tbl, ok := v.(map[string]any)
		if !ok {
			out[prefix] = v
			return
		}
		for k, sub := range tbl {
			if prefix != "" {
				k = prefix + "." + k
			}
			walk(k, sub)
		}
	}
	walk("", m)
	return out
}

// sameDefault reports whether a README default cell states v.
func sameDefault(cell string, v any) bool {
	s := strings.Trim(cell, "`")
	switch v := v.(type) {
	case string:
		if s == "required" {
			return v == ""
		}
		if d, err := time.ParseDuration(v); err == nil {
			got, err := time.ParseDuration(strings.Trim(s, `"`))
			return err == nil && got == d
		}
		return s == strconv.Quote(v)
	case int64:
		return s == strconv.FormatInt(v, 10)
	case float64:
		f, err := strconv.ParseFloat(s, 64)
		return err == nil && f == v
	case bool:
		return s == strconv.FormatBool(v)
	case []any:
		if len(v) == 0 {
			return s == "[]"
		}
		for _, e := range v {
			if !strings.Contains(s, fmt.Sprint(e)) {
				return false
			}
		}
		return true
	}
	return false
}

// TestREADMEDocumentsEveryKeyWithItsDefault catches a configuration key
// that README.md's tables leave out, or whose stated default is not
// config.Defaults(); and a key configs/example.toml never sets.
func TestREADMEDocumentsEveryKeyWithItsDefault(t *testing.T) {
	keys := configKeys(reflect.TypeFor[config.Config](), "")
	readme := readmeDefaults(t)
	defaults := defaultValues(t)
	for _, k := range keys {
		cell, ok := readme[k]
		if !ok {
			t.Errorf("README.md: no row for %s", k)
			continue
		}
		if strings.Contains(k, "[]") {
			continue // an array element's key has no default of its own
		}
		v, ok := defaults[k]
		if !ok {
			t.Errorf("config.Defaults() as printed lacks %s", k)
			continue
		}
		if k == "server.max_concurrent_pages" {
			// Sized to the machine, so the README states the rule.
			if want := 8 * runtime.GOMAXPROCS(0); v != int64(want) || !strings.Contains(cell, "8 × cores") {
				t.Errorf("README.md: %s default %q; config.Defaults() has %v, want 8 × GOMAXPROCS = %d", k, cell, v, want)
			}
			continue
		}
		if !sameDefault(cell, v) {
			t.Errorf("README.md: %s default %s, config.Defaults() has %#v", k, cell, v)
		}
	}
	for k := range readme {
		if !slices.Contains(keys, k) {
			t.Errorf("README.md documents %s, which is no configuration key", k)
		}
	}

	data, err := os.ReadFile("../../configs/example.toml")
	if err != nil {
		t.Fatal(err)
	}
	var example map[string]any
	if err := toml.Unmarshal(data, &example); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k == "server.max_concurrent_pages" {
			// Sized to the machine: the example leaves it commented out, so
			// that a copy of the file keeps the machine's default.
			if setSomewhere(example, strings.Split(k, ".")) || !strings.Contains(string(data), "\n# max_concurrent_pages = ") {
				t.Errorf("configs/example.toml must list %s commented out, not set it", k)
			}
			continue
		}
		if !setSomewhere(example, strings.Split(k, ".")) {
			t.Errorf("configs/example.toml never sets %s", k)
		}
	}
	// example.toml promises "its default or an example value": where it
	// sets another value than the default, its comment names the default.
	comments := exampleComments(string(data))
	for k, v := range defaults {
		got, ok := lookup(example, k)
		if !ok || fmt.Sprint(got) == fmt.Sprint(v) || isTables(got) {
			continue
		}
		if c := comments[k]; !strings.Contains(c, "Default") && !strings.Contains(c, "required") {
			t.Errorf("configs/example.toml sets %s = %v, not the default %v, and its comment does not say so: %q", k, got, v, c)
		}
	}
}

// isTables reports whether v is an array of tables (slots, bids), whose
// elements are examples with no default.
func isTables(v any) bool {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return false
	}
	_, ok = list[0].(map[string]any)
	return ok
}

// exampleComments maps each key of a plain table in a commented TOML file
// to the comment lines just above it.
func exampleComments(text string) map[string]string {
	out := map[string]string{}
	table, comment := "", ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#"):
			comment += line + "\n"
			continue
		case strings.HasPrefix(line, "[["):
			table = "" // array elements are examples, not defaults
		case strings.HasPrefix(line, "["):
			table = strings.Trim(line, "[]")
		case table != "" && strings.Contains(line, "="):
			key, _, _ := strings.Cut(line, "=")
			out[table+"."+strings.TrimSpace(key)] = comment
		}
		comment = ""
	}
	return out
}

// setSomewhere reports whether the dotted path is set in m; a "name[]"
// part matches when any element of the array of tables sets the rest.
func setSomewhere(m map[string]any, path []string) bool {
	name, isArray := strings.CutSuffix(path[0], "[]")
	v, ok := m[name]
	if !ok {
		return false
	}
	if len(path) == 1 {
		return true
	}
	if !isArray {
		sub, ok := v.(map[string]any)
		return ok && setSomewhere(sub, path[1:])
	}
	list, _ := v.([]any)
	for _, e := range list {
		if sub, ok := e.(map[string]any); ok && setSomewhere(sub, path[1:]) {
			return true
		}
	}
	return false
}

// TestExampleRecipeMatchesREADME catches the two copies of the own-origin
// recipe (README.md, "In front of your own origin", and the head of
// configs/example.toml) drifting apart, as when a step is added to one.
func TestExampleRecipeMatchesREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## In front of your own origin\n")
	if !ok {
		t.Fatal(`README.md has no "## In front of your own origin" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var fromREADME []string
	for _, line := range strings.Split(section, "\n") {
		if cmd, ok := strings.CutPrefix(line, "    "); ok && !strings.HasPrefix(cmd, "#") {
			fromREADME = append(fromREADME, cmd)
		}
	}
	example, err := os.ReadFile("../../configs/example.toml")
	if err != nil {
		t.Fatal(err)
	}
	var fromExample []string
	for _, line := range strings.Split(string(example), "\n") {
		if cmd, ok := strings.CutPrefix(line, "#   "); ok {
			fromExample = append(fromExample, cmd)
		}
	}
	if len(fromREADME) == 0 || !slices.Equal(fromREADME, fromExample) {
		t.Errorf("the recipes differ\nREADME.md:\n%s\nconfigs/example.toml:\n%s",
			strings.Join(fromREADME, "\n"), strings.Join(fromExample, "\n"))
	}
	// Each background job is stopped at the end, by its job number.
	jobs := 0
	for _, cmd := range fromREADME {
		if strings.HasSuffix(cmd, "&") {
			jobs++
		}
	}
	want := "kill"
	for j := jobs; j > 0; j-- {
		want += " %" + strconv.Itoa(j)
	}
	if last := fromREADME[len(fromREADME)-1]; last != want {
		t.Errorf("the recipe ends with %q; with %d background jobs it should end with %q", last, jobs, want)
	}
}

// TestREADMEMetricsAreRegistered catches a metric name in README.md or
// docs/ that the daemon does not expose (renamed, or never registered), with the
// OpenRTB endpoint metrics of configs/example.toml included. A labelled
// metric has no samples until its first event, so the names are checked
// against the registry itself: registering a probe under a name that is
// already taken fails.
func TestREADMEMetricsAreRegistered(t *testing.T) {
	var text []byte
	docs, _ := filepath.Glob("../../docs/*.md")
	for _, file := range append([]string{"../../README.md"}, docs...) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text = append(text, data...)
	}
	names := map[string]bool{}
	for _, f := range strings.FieldsFunc(string(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '_' || r >= '0' && r <= '9')
	}) {
		if strings.HasPrefix(f, "ssatd_") {
			for _, series := range []string{"_bucket", "_sum", "_count"} {
				f = strings.TrimSuffix(f, series) // a histogram's series
			}
			names[f] = true
		}
	}
	if len(names) < 15 {
		t.Fatalf("found only %d metric names in README.md and docs/: %v", len(names), names)
	}
	cfg, err := config.Load("../../configs/example.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDaemon(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	taken := func(name string) bool {
		probe := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: "a probe of the name"})
		return d.metrics.Register(probe) != nil
	}
	if taken("ssatd_no_such_metric_total") {
		t.Fatal("the probe finds a name that is not registered")
	}
	for name := range names {
		if !taken(name) {
			t.Errorf("README.md or docs/ names %s, which the daemon does not register", name)
		}
	}
}

// TestREADMECommandLineListsEveryCommand catches a command, or a flag of
// the top-level usage, that README.md's "Command line" leaves out: it
// lacked `verify` and `serve -ready-file`.
func TestREADMECommandLineListsEveryCommand(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Command line\n")
	if !ok {
		t.Fatal(`README.md has no "## Command line" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, commands, _ := strings.Cut(usage, "commands:\n")
	commands, _, _ = strings.Cut(commands, "\n\n")
	n := 0
	for _, line := range strings.Split(commands, "\n") {
		if !strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "   ") {
			continue // a continuation line of the one before
		}
		fields := strings.Fields(line)
		name := fields[0]
		if name == "config" {
			name += " " + fields[1]
		}
		n++
		if !strings.Contains(section, "ssatd "+name+" ") && !strings.Contains(section, "ssatd "+name+"\n") {
			t.Errorf("README's Command line has no `ssatd %s`", name)
		}
		for _, f := range fields[1:] {
			flag := strings.Trim(f, "[]|.")
			if strings.HasPrefix(flag, "-") && !strings.Contains(section, flag+" ") && !strings.Contains(section, flag+"]") {
				t.Errorf("README's Command line does not name %s of `%s`", flag, name)
			}
		}
	}
	if n < 10 {
		t.Fatalf("read %d commands from the usage text; the test no longer parses it", n)
	}
}
