package config

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/pelletier/go-toml/v2"
)

// NativeTOML is c in ssatd's own format, with only the keys whose values
// differ from ssatd's defaults: what `ssatd config convert` writes for a
// Trusted Server file. Unlike WriteEffective it masks nothing, since the
// output is a configuration file to use: [[handlers]] credentials are
// written as they are.
func (c *Config) NativeTOML() ([]byte, error) {
	// The defaults as Validate completes them (a slot's div_id, the
	// preset's compute keys), so that those are not written either.
	def := Defaults()
	def.Publisher.Domain, def.Publisher.OriginURL = c.Publisher.Domain, c.Publisher.OriginURL
	_ = def.Validate()
	// [ec] holds secrets (the passphrase, the partners' tokens), and a
	// partner is invalid without its token: the section is left out, and
	// config convert says so (SecretsLeftOut).
	noSecrets := *c
	noSecrets.EC = ECConfig{}
	got, err := asTable(&noSecrets)
	if err != nil {
		return nil, err
	}
	base, err := asTable(def)
	if err != nil {
		return nil, err
	}
	// The required keys are always written.
	delete(asMap(base["publisher"]), "domain")
	delete(asMap(base["publisher"]), "origin_url")
	var out bytes.Buffer
	// Sections in Config's order, one table each.
	root := reflect.TypeFor[Config]()
	for i := range root.NumField() {
		name := root.Field(i).Tag.Get("toml")
		sect, ok := got[name].(map[string]any)
		if !ok {
			continue
		}
		diff := differing(sect, asMap(base[name]))
		if len(diff) == 0 {
			continue
		}
		b, err := toml.Marshal(map[string]any{name: diff})
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", name, err)
		}
		out.Write(b)
		out.WriteString("\n")
	}
	if err := writeHandlers(&out, c.Handlers); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// writeHandlers writes [[handlers]] with their credentials, which the
// converted file needs to ask them: an array of tables, not one table.
func writeHandlers(out *bytes.Buffer, hs []HandlerConfig) error {
	if len(hs) == 0 {
		return nil
	}
	type plain struct {
		Path     string `toml:"path"`
		Username string `toml:"username"`
		Password string `toml:"password"`
	}
	ps := make([]plain, len(hs))
	for i, h := range hs {
		ps[i] = plain{h.Path, h.Username.Expose(), h.Password.Expose()}
	}
	b, err := toml.Marshal(map[string]any{"handlers": ps})
	if err != nil {
		return fmt.Errorf("write handlers: %w", err)
	}
	out.Write(b)
	return nil
}

// asTable is c as the TOML tables WriteEffective would print, read back.
func asTable(c *Config) (map[string]any, error) {
	b, err := toml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	var m map[string]any
	if err := toml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode config: %w", err)
	}
	return m, nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// differing keeps the keys of got whose values are not those of base; a
// table is compared key by key, anything else whole.
func differing(got, base map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		g, b := got[k], base[k]
		if gm, ok := g.(map[string]any); ok {
			if d := differing(gm, asMap(b)); len(d) > 0 {
				out[k] = d
			}
			continue
		}
		if !reflect.DeepEqual(g, b) {
			out[k] = g
		}
	}
	return out
}

// SecretsLeftOut names the sections NativeTOML leaves out because they
// hold secrets, each with what the operator does instead.
func (c *Config) SecretsLeftOut() []string {
	if c.EC.Passphrase == "" {
		return nil
	}
	return []string{"[ec]: the passphrase and the partners' api_token are secrets and are not written; add [ec] to the converted file, or set SSATD_EC_PASSPHRASE"}
}
