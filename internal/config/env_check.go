package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/caarlos0/env/v11"
)

// otherEnvVars are SSATD_ variables that are not configuration keys: the
// command line reads the first four, the test suite and CI the others.
var otherEnvVars = []string{
	"SSATD_CONFIG", FormatEnv, "SSATD_LOG_FORMAT", "SSATD_LOG_LEVEL",
	"SSATD_CORPUS", "SSATD_FUZZTIME", "SSATD_SCREENSHOTS", "SSATD_STRICT",
	"SSATD_ACORN", "SSATD_REACT", "SSATD_SVELTEKIT", "SSATD_NUXT", "SSATD_REDIS_URL",
}

// envNames lists every SSATD_ variable that sets a configuration key, as
// applyEnv reads them.
func envNames() []string {
	params, err := env.GetFieldParamsWithOptions(&Config{}, env.Options{Prefix: EnvPrefix})
	if err != nil {
		// The struct tags are fixed at build time; TestEnvNames pins them.
		panic(fmt.Sprintf("config: environment names: %v", err))
	}
	names := make([]string, 0, len(params))
	for _, p := range params {
		names = append(names, p.Key)
	}
	return names
}

// unknownEnvVars reports SSATD_ variables that name no key, the way
// decodeTOML reports unknown TOML keys: a misspelt override would
// otherwise be ignored and the daemon would run with a value the operator
// did not choose.
func unknownEnvVars(environ []string) []error {
	known := append(envNames(), otherEnvVars...)
	var problems []error
	seen := map[string]bool{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || slices.Contains(known, name) || seen[name] {
			continue
		}
		seen[name] = true
		hint := ""
		// Within a small edit distance: a typo, a missing underscore or a
		// missing section.
		if s := nearest(name, known, 4); s != "" {
			hint = "; did you mean " + s + "?"
		}
		// Worded like an unknown TOML key ("line 2: server.listn: unknown
		// key; did you mean ..."), with the variable in place of the line.
		problems = append(problems, fmt.Errorf("%s: unknown variable%s", name, hint))
	}
	return problems
}

// envParsers replaces the env package's parser for int, which stops at 32
// bits, with one for the full range of int, as TOML already allows.
func envParsers() map[reflect.Type]env.ParserFunc {
	return map[reflect.Type]env.ParserFunc{
		reflect.TypeFor[int](): func(v string) (any, error) {
			n, err := strconv.ParseInt(v, 10, strconv.IntSize)
			return int(n), err
		},
	}
}
