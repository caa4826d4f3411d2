package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/caarlos0/env/v11"
)

// commandEnvVars are the SSATD_ variables the command line reads that are
// not configuration keys.
var commandEnvVars = []string{"SSATD_CONFIG", FormatEnv, "SSATD_LOG_FORMAT", "SSATD_LOG_LEVEL"}

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
// did not choose. What it checks is mayBeMeantFor's rule.
func unknownEnvVars(environ []string) []error {
	known := append(envNames(), commandEnvVars...)
	words := knownWords(known)
	var problems []error
	seen := map[string]bool{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || slices.Contains(known, name) || seen[name] || !mayBeMeantFor(name, words) {
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

// knownWords are the words (between underscores, after the prefix) of the
// known names.
func knownWords(known []string) []string {
	var words []string
	for _, n := range known {
		for w := range strings.SplitSeq(strings.TrimPrefix(n, EnvPrefix), "_") {
			if !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	return words
}

// mayBeMeantFor reports whether name (SSATD_…, not a known one) could be
// meant as a known name, so that it is an error and not another tool's.
// Every key is SSATD_<SECTION>_<KEY>: a name with an underscore after the
// prefix has a key's shape and is always checked. A one-word name
// (SSATD_WORD) has not: it is checked only when WORD begins with a word
// of a known name, as in a dropped underscore (SSATD_SERVERLISTEN,
// SSATD_LOGLEVEL) or a dropped section (SSATD_LISTEN). Other one-word
// names belong to other tools, such as the test suite's SSATD_CORPUS and
// SSATD_STRICT (internal/testutil's ToolEnv), which ssatd leaves alone
// without having to know them.
func mayBeMeantFor(name string, words []string) bool {
	word := strings.TrimPrefix(name, EnvPrefix)
	if strings.Contains(word, "_") {
		return true
	}
	return slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(word, w) })
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
