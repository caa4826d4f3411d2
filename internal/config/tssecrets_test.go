package config

import (
	"strings"
	"testing"
)

// A secret of the wrong kind (a passphrase written unquoted, a token set
// by a variable to JSON) is refused naming its key and the kind found,
// never its value.
func TestSecretOfTheWrongTypeIsNotQuoted(t *testing.T) {
	pub := "[publisher]\ndomain = \"news.test\"\ncookie_domain = \".news.test\"\norigin_url = \"https://origin.news.test\"\n"
	tests := []struct {
		name    string
		doc     string
		environ []string
		key     string
	}{
		{"proxy_secret unquoted", pub + "proxy_secret = 918273645\n", nil, "publisher.proxy_secret: found an integer, wants a string"},
		{"passphrase a boolean", tsMinimal + "\n[ec]\npassphrase = true\n", nil, "ec.passphrase: found a boolean"},
		{"handler password a number", tsMinimal + "\n[[handlers]]\npath = \"^/a\"\nusername = \"u\"\npassword = 918273.645\n", nil, "handlers[0].password: found a number"},
		{"partner token from a variable", tsMinimal, []string{`TRUSTED_SERVER__EC__PARTNERS=[{"name":"p","source_domain":"p.test","api_token":918273645}]`}, "ec.partners[0].api_token: found an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadTS(t, tt.doc, tt.environ...)
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), tt.key) {
				t.Errorf("the problem does not name %q: %v", tt.key, err)
			}
			for _, v := range []string{"918273", "true"} {
				if strings.Contains(err.Error(), v) {
					t.Errorf("the secret %q is quoted: %v", v, err)
				}
			}
		})
	}
	// A key that is not a secret still shows what was found.
	_, err := loadTS(t, tsMinimal+"\n[auction]\ntimeout_ms = \"fast\"\n")
	if err == nil || !strings.Contains(err.Error(), `found the string "fast"`) {
		t.Errorf("ordinary key: %v", err)
	}
}
