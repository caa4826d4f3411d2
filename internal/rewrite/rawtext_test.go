package rewrite

import "testing"

// A page that ends inside raw text or RCDATA (an unterminated <textarea>,
// <plaintext>, <title>, <script>) must not get the bids script at its end:
// it would show as the element's text, or run as part of its script.
func TestBidsNotInjectedIntoRawText(t *testing.T) {
	for _, tt := range []struct {
		name, in, want, skipped string
	}{
		{"unterminated textarea", "<head></head><body><textarea>abc", "<head>[HEAD]</head><body><textarea>abc", "textarea"},
		{"plaintext", "<head></head><body><PLAINTEXT>abc</body>", "<head>[HEAD]</head><body><PLAINTEXT>abc</body>", "plaintext"},
		{"unterminated title", "<head><title>t", "<head>[HEAD]<title>t", "title"},
		{"unterminated script", "<head></head><script>var a = 1;", "<head>[HEAD]</head><script>var a = 1;", "script"},
		{"self-closing syntax is still a start tag", "<head></head><textarea/>abc", "<head>[HEAD]</head><textarea/>abc", "textarea"},
		{"closed textarea", "<head></head><textarea>a</textarea>b", "<head>[HEAD]</head><textarea>a</textarea>b[BIDS]", ""},
		{"end tag of another element inside", "<head></head><textarea>a</p>b", "<head>[HEAD]</head><textarea>a</p>b", "textarea"},
		// The end tag is not complete, so the element is still open (the
		// bids would become the tag's attributes): found by FuzzDifferential.
		{"unfinished end tag of a script", "<head></head><sCript></sCript ", "<head>[HEAD]</head><sCript></sCript ", "script"},
		{"unfinished end tag of a title", "<head><title>t</title x='>", "<head>[HEAD]<title>t</title x='>", "title"},
		{"unfinished end tag of a script in its escaped text", "<head><script><!--</script a", "<head>[HEAD]<script><!--</script a", "script"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := testOpts()
			o.HeadPrepend = []byte("[HEAD]")
			o.BodyEnd = func() []byte { return []byte("[BIDS]") }
			got, st := run(t, tt.in, o)
			if got != tt.want || st.BodyEndSkipped != tt.skipped {
				t.Errorf("\n in: %s\ngot: %s (skipped %q)\nwant %s (skipped %q)", tt.in, got, st.BodyEndSkipped, tt.want, tt.skipped)
			}
		})
	}
}
