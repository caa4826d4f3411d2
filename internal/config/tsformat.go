package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Format names the layout of a configuration file.
type Format string

// The formats Load reads: ssatd's own, and upstream Trusted Server's
// trusted-server.toml (tsschema.go), whose keys are mapped onto ssatd's
// (tsmap.go).
const (
	FormatSSATD         Format = "ssatd"
	FormatTrustedServer Format = "trusted-server"
)

// FormatEnv chooses the format instead of detecting it ("ssatd" or
// "trusted-server"); the -config-format flag sets it.
const FormatEnv = "SSATD_CONFIG_FORMAT"

// Source says what a configuration was read from.
type Source struct {
	Format Format
	// NotEmulated lists what a Trusted Server file configures that ssatd
	// accepts and does not do, one entry per section or key.
	NotEmulated []NotEmulated
	// ignoredEnv names the TRUSTED_SERVER__ variables set beside a file
	// in ssatd's format, which reads none of them.
	ignoredEnv []string
	// names maps a native key a Trusted Server file set to the upstream
	// key it came from (decoder.alias).
	names map[string]string
}

// upstreamNames rewrites, in each warning, a native key that a Trusted
// Server file set to the key the file has (auction.openrtb[0].timeout_ms
// to integrations.prebid.timeout_ms), whole keys only.
func (s Source) upstreamNames(warnings []string) []string {
	if len(s.names) == 0 {
		return warnings
	}
	// Longest first, so that a key is not rewritten inside a longer one.
	natives := slices.SortedFunc(maps.Keys(s.names), func(a, b string) int { return len(b) - len(a) })
	keyByte := func(b byte) bool {
		return b == '_' || b == '.' || b == '[' || b == ']' || ('a' <= b && b <= 'z') || ('0' <= b && b <= '9')
	}
	for i, w := range warnings {
		var out strings.Builder
		for j := 0; j < len(w); {
			k := ""
			if j == 0 || !keyByte(w[j-1]) {
				for _, n := range natives {
					if strings.HasPrefix(w[j:], n) && (j+len(n) == len(w) || !keyByte(w[j+len(n)])) {
						k = n
						break
					}
				}
			}
			if k == "" {
				out.WriteByte(w[j])
				j++
				continue
			}
			out.WriteString(s.names[k])
			j += len(k)
		}
		warnings[i] = out.String()
	}
	return warnings
}

// NotEmulated is a section or key of a Trusted Server file that ssatd
// accepts and does not act on, with what the publisher will miss.
type NotEmulated struct {
	Key  string
	Miss string
}

func (n NotEmulated) String() string { return fmt.Sprintf("[%s]: %s", n.Key, n.Miss) }

// Top-level keys found in one format only. A valid Trusted Server file
// always has [publisher] cookie_domain and proxy_secret (settings.rs:30-48),
// which ssatd's [publisher] lacks, so the publisher table alone tells the
// formats apart when no section does.
var (
	tsOnlyKeys     = []string{"integrations", "response_headers", "rewrite", "cache", "proxy", "image_optimizer", "tinybird", "ssatd"}
	nativeOnlyKeys = []string{"server", "compression", "platform", "delivery", "bots", "compute", "geo", "bundle", "tracing", "store"}
	tsPublisherKey = []string{"cookie_domain", "proxy_secret", "max_buffered_body_bytes"}
)

// detectFormat reads the format of data: the one chosen, else the one
// whose keys the file uses. A file with keys of both is refused: the
// operator says which it is.
func detectFormat(data []byte, chosen string) (Format, error) {
	switch Format(chosen) {
	case FormatSSATD, FormatTrustedServer:
		return Format(chosen), nil
	case "":
	default:
		return "", fmt.Errorf("%s: must be %q or %q, got %q", FormatEnv, FormatSSATD, FormatTrustedServer, chosen)
	}
	var tree map[string]any
	if toml.Unmarshal(data, &tree) != nil {
		// The native loader reports the syntax error with its line.
		return FormatSSATD, nil
	}
	var ts, native []string
	for _, k := range slices.Sorted(maps.Keys(tree)) {
		switch {
		case slices.Contains(tsOnlyKeys, k):
			ts = append(ts, k)
		case slices.Contains(nativeOnlyKeys, k):
			native = append(native, k)
		}
	}
	if pub, ok := tree["publisher"].(map[string]any); ok {
		for _, k := range tsPublisherKey {
			if _, ok := pub[k]; ok {
				ts = append(ts, "publisher."+k)
			}
		}
	}
	if len(ts) == 0 && len(native) == 0 {
		ts = tsSectionKeys(tree)
	}
	switch {
	case len(ts) > 0 && len(native) > 0:
		return "", fmt.Errorf("the file has keys of both formats (Trusted Server: %s; ssatd: %s): put ssatd's settings in an [ssatd] table of a Trusted Server file, or pass -config-format", strings.Join(ts, ", "), strings.Join(native, ", "))
	case len(ts) > 0:
		return FormatTrustedServer, nil
	}
	return FormatSSATD, nil
}

// tsSectionKeys lists the keys of the sections both formats have
// (publisher, auction, consent, creative_opportunities, debug) that only
// Trusted Server knows, leaving out any a native key is a likely typo of
// (auction.providers for provider). Upstream's guide has cookie_domain and
// proxy_secret come from TRUSTED_SERVER__PUBLISHER__* variables
// (docs/guide/configuration.md:199-207), so a file without them is told
// by such keys as creative_opportunities.gam_network_id.
func tsSectionKeys(tree map[string]any) []string {
	var out []string
	tsT, nativeT := reflect.TypeFor[tsSettings](), reflect.TypeFor[Config]()
	tsF, nativeF := tomlFields(tsT), tomlFields(nativeT)
	for _, sect := range slices.Sorted(maps.Keys(tree)) {
		m, ok := tree[sect].(map[string]any)
		ti, inTS := tsF[sect]
		ni, inNative := nativeF[sect]
		if !ok || !inTS || !inNative {
			continue
		}
		tsKeys, nativeKeys := tomlFields(structOf(tsT.Field(ti).Type)), tomlFields(structOf(nativeT.Field(ni).Type))
		names := slices.Sorted(maps.Keys(nativeKeys))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			_, ts := tsKeys[k]
			_, nat := nativeKeys[k]
			if ts && !nat && nearest(k, names, len(k)/3+1) == "" {
				out = append(out, sect+"."+k)
			}
		}
	}
	return out
}

// structOf is t without its pointers; a struct, or a type with no fields.
func structOf(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return reflect.TypeFor[struct{}]()
	}
	return t
}

// trustedServerFile fills c from a Trusted Server file: the file over
// upstream's defaults, then upstream's TRUSTED_SERVER__ variables over the
// file (tsenv.go), then the keys ssatd acts on mapped onto c (tsmap.go),
// then the file's [ssatd] table over those. It returns false only for a
// syntax error.
func (d *decoder) trustedServerFile(data []byte, c *Config, environ []string) bool {
	var tree map[string]any
	if err := toml.Unmarshal(data, &tree); err != nil {
		return d.file(data, c) // reports the syntax error
	}
	indexLines(data, d.src.lines)
	d.root = reflect.TypeFor[tsSettings]()
	d.tsEnv(tree, environ)
	ts := tsDefaults()
	d.table(reflect.ValueOf(ts).Elem(), tree, "")
	d.tsRequired(tree)
	c.Source.Format = FormatTrustedServer
	c.Source.NotEmulated = d.tsMap(ts, tree, c)
	c.Source.names = d.src.names
	d.root = reflect.TypeFor[Config]()
	if len(ts.SSATD) > 0 {
		d.ssatdTable(ts.SSATD, c)
	}
	return true
}

// tsRequired reports the keys upstream requires (no serde default) that the
// file and the environment left out.
func (d *decoder) tsRequired(tree map[string]any) {
	need := func(m map[string]any, path string, keys ...string) {
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				key := joinKey(path, k)
				d.failed = append(d.failed, key)
				d.problems = append(d.problems, d.src.locate(key, &problem{key: key, err: fmt.Errorf("is required by Trusted Server")}))
			}
		}
	}
	pub, _ := tree["publisher"].(map[string]any)
	// settings.rs:30-48.
	need(pub, "publisher", "domain", "cookie_domain", "origin_url", "proxy_secret")
	co, ok := tree["creative_opportunities"].(map[string]any)
	if !ok {
		return
	}
	// creative_opportunities.rs:220-223, 524-539, 903-908.
	need(co, "creative_opportunities", "gam_network_id")
	slots, _ := co["slot"].([]any)
	for i, s := range slots {
		sm, ok := s.(map[string]any)
		if !ok {
			continue
		}
		key := fmt.Sprintf("creative_opportunities.slot[%d]", i)
		need(sm, key, "id", "page_patterns", "formats")
		formats, _ := sm["formats"].([]any)
		for j, f := range formats {
			if fm, ok := f.(map[string]any); ok {
				need(fm, fmt.Sprintf("%s.formats[%d]", key, j), "width", "height")
			}
		}
	}
}

// ssatdTable decodes the [ssatd] table into c, as a native file's keys.
// A key that the Trusted Server keys already set is refused, so that each
// setting has one place.
func (d *decoder) ssatdTable(m map[string]any, c *Config) {
	for _, k := range tsMappedNativeKeys {
		section, name, _ := strings.Cut(k, ".")
		sm, ok := m[section].(map[string]any)
		if _, set := sm[name]; ok && set {
			key := "ssatd." + k
			d.problems = append(d.problems, d.src.locate(key, &problem{key: key, err: fmt.Errorf("is set by the Trusted Server keys (%s); set it there", tsMappedFrom[k])}))
			delete(sm, name)
		}
	}
	d.table(reflect.ValueOf(c).Elem(), m, "ssatd")
	// Validate names native keys; point them at the [ssatd] lines.
	for k, line := range d.src.lines {
		if rest, ok := strings.CutPrefix(k, "ssatd."); ok {
			if _, set := d.src.lines[rest]; !set {
				d.src.lines[rest] = line
			}
		}
	}
}

// lookupEnv is the value of key in environ (os.Environ form); the last
// setting wins, as in a shell.
func lookupEnv(environ []string, key string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
