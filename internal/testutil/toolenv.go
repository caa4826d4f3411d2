package testutil

// ToolEnv are the SSATD_ variables the test suite and CI read (.ci/run
// exports them, README's "Test it" documents them). They are no
// configuration keys, and ssatd does not know them: its check of SSATD_
// variables (internal/config, mayBeMeantFor) leaves alone a one-word name
// that begins with no word of a key, so each of these is one word and
// begins with none. TestToolEnvIsLeftAlone (internal/config) holds that;
// TestToolEnvListsEveryToolVariable (here) holds that the list is whole.
var ToolEnv = []string{
	StrictEnv, "SSATD_CORPUS", "SSATD_FUZZTIME", "SSATD_SCREENSHOTS",
	"SSATD_ACORN", "SSATD_REACT", "SSATD_SVELTEKIT", "SSATD_NUXT", "SSATD_REDIS",
}
