package config

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/caarlos0/env/v11"
)

// applyEnv parses one section at a time: caarlos0/env reports a bad value
// by Go field name only, and names such as GzipLevel repeat across
// sections, so the section is needed to name the offending variable.
func (d *decoder) applyEnv(c *Config, environ []string) {
	vars := env.ToMap(environ)
	cv := reflect.ValueOf(c).Elem()
	ct := cv.Type()
	for i := range ct.NumField() {
		sf := ct.Field(i)
		if sf.Tag.Get("env") == "-" {
			continue
		}
		prefix := EnvPrefix + sf.Tag.Get("envPrefix")
		section := cv.Field(i)
		sectionKey := sf.Tag.Get("toml")
		err := env.ParseWithOptions(section.Addr().Interface(), env.Options{
			Environment: vars,
			Prefix:      prefix,
			// OnSet is called for every field, set or not.
			OnSet: func(name string, _ any, _ bool) {
				if _, set := vars[name]; !set {
					return
				}
				if f, ok := envField(section.Type(), prefix, name); ok {
					d.src.env[sectionKey+"."+f.Tag.Get("toml")] = name
				}
			},
			FuncMap: envParsers(),
		})
		if err == nil {
			continue
		}
		var agg env.AggregateError
		if !errors.As(err, &agg) {
			d.problems = append(d.problems, fmt.Errorf("environment: %w", err))
			continue
		}
		for _, e := range agg.Errors {
			d.envProblem(e, prefix, sectionKey, section.Type(), vars)
		}
	}
}

// envField finds the field of a section that variable name sets.
func envField(sectionType reflect.Type, prefix, name string) (reflect.StructField, bool) {
	for i := range sectionType.NumField() {
		f := sectionType.Field(i)
		if tag := f.Tag.Get("env"); tag != "" && tag != "-" && prefix+tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// envProblem words a bad variable like a bad file value: the variable,
// the key, what was found and what is wanted.
func (d *decoder) envProblem(err error, prefix, sectionKey string, sectionType reflect.Type, vars map[string]string) {
	var pe env.ParseError
	if !errors.As(err, &pe) {
		d.problems = append(d.problems, fmt.Errorf("environment: %w", err))
		return
	}
	f, ok := sectionType.FieldByName(pe.Name)
	if !ok {
		d.problems = append(d.problems, fmt.Errorf("environment: %w", err))
		return
	}
	name := prefix + f.Tag.Get("env")
	key := sectionKey + "." + f.Tag.Get("toml")
	d.src.env[key] = name
	d.failed = append(d.failed, key)
	d.problems = append(d.problems, &located{where: name, err: &problem{
		key: key,
		err: fmt.Errorf("found %q, wants %s", vars[name], describeWant(f.Type)),
	}})
}
