package config

import (
	"net/url"
	"reflect"
	"strings"
)

const maskedSecret = "xxxxx"

// OriginForLog is the origin URL as log lines may show it: credentials are
// masked even though Validate refuses them, so that a Config built without
// Validate, or a future change to validation, cannot put a secret in a log.
func (p *PublisherConfig) OriginForLog() string {
	if p.Origin != nil {
		return maskURL(p.Origin.String())
	}
	return maskURL(p.OriginURL)
}

// maskURL hides what in a URL may be a secret: the password, or a lone
// user name (commonly a token), every query value (API keys are often
// passed as "?key=..."; the names stay, so an operator can tell which
// parameters are set) and the fragment. If the value does not parse, the
// parts cannot be located, so anything that might carry one is hidden
// whole.
func maskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.ContainsAny(raw, "@?#") {
			return maskedSecret
		}
		return raw
	}
	if u.User == nil && u.RawQuery == "" && u.Fragment == "" {
		return raw
	}
	if u.User != nil {
		if _, hasPassword := u.User.Password(); hasPassword {
			u.User = url.UserPassword(u.User.Username(), maskedSecret)
		} else {
			u.User = url.User(maskedSecret)
		}
	}
	u.RawQuery = maskQuery(u.RawQuery)
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = maskedSecret, ""
	}
	return u.String()
}

// maskQuery replaces each value of a raw query, and each parameter that
// has no name=value form, with maskedSecret.
func maskQuery(q string) string {
	if q == "" {
		return ""
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		if name, _, ok := strings.Cut(p, "="); ok {
			parts[i] = name + "=" + maskedSecret
		} else if p != "" {
			parts[i] = maskedSecret
		}
	}
	return strings.Join(parts, "&")
}

// secretKey says whether a configuration key holds a secret by its name,
// whatever its section: Trusted Server's publisher.proxy_secret,
// ec.passphrase, handlers[].password, ec.partners[].api_token and
// ts_pull_token (settings.rs:30-48, 271-327, 556-567), tinybird's token
// secrets, and any key named like them. Its value is never quoted in a
// problem.
func secretKey(key string) bool {
	name := key[strings.LastIndexByte(key, '.')+1:]
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	for _, w := range []string{"secret", "password", "passphrase", "token"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return strings.HasSuffix(name, "_key")
}

// isURL says whether a configured string is a URL that maskURL applies
// to: every key whose value is an absolute URL, whatever its name.
func isURL(s string) bool { return strings.Contains(s, "://") }

// withURLsMasked is a deep copy of c in which every string that is a URL
// is masked, in every section, list and table.
func (c *Config) withURLsMasked() Config {
	out := walkStrings(reflect.ValueOf(*c), func(s string) string {
		if isURL(s) {
			return maskURL(s)
		}
		return s
	})
	return out.Interface().(Config)
}

// LogReplacer replaces, in a log line, each form in which the secret
// parts of a configured URL can appear (the URL as written or as Go
// prints it, its query) with its masked form; nil when no configured URL
// has any. Log lines quote URLs the daemon builds from these, in errors
// of the HTTP client among others, so the masking is done on every line.
func (c *Config) LogReplacer() *strings.Replacer {
	seen := map[string]bool{}
	var pairs []string
	add := func(from, to string) {
		if from != to && from != "" && !seen[from] {
			seen[from] = true
			pairs = append(pairs, from, to)
		}
	}
	walkStrings(reflect.ValueOf(*c), func(s string) string {
		if !isURL(s) {
			return s
		}
		add(s, maskURL(s))
		if u, err := url.Parse(s); err == nil {
			add(u.String(), maskURL(s))
			if u.RawQuery != "" {
				add("?"+u.RawQuery, "?"+maskQuery(u.RawQuery))
			}
			if u.User != nil {
				add(u.User.String()+"@", maskedSecret+"@")
			}
		}
		return s
	})
	if len(pairs) == 0 {
		return nil
	}
	return strings.NewReplacer(pairs...)
}

// walkStrings returns a deep copy of v with f applied to every string in
// it: struct fields, slice elements, map values and interface values.
// Pointers are shared, not followed (the parsed forms that Validate adds
// are not configuration keys).
func walkStrings(v reflect.Value, f func(string) string) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		out := reflect.New(v.Type()).Elem()
		out.SetString(f(v.String()))
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if out.Field(i).CanSet() {
				out.Field(i).Set(walkStrings(v.Field(i), f))
			}
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(walkStrings(v.Index(i), f))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), walkStrings(it.Value(), f))
		}
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(walkStrings(v.Elem(), f))
		return out
	}
	return v
}
