package consent

import (
	"errors"
	"fmt"
)

// ErrInvalidUSPrivacy wraps every us_privacy decoding failure.
var ErrInvalidUSPrivacy = errors.New("invalid us_privacy string")

// USPrivacy is the IAB US Privacy string (CCPA): version 1, then notice,
// opt-out of sale and LSPA flags, each 'Y', 'N' or '-'.
type USPrivacy struct {
	Notice, OptOutSale, LSPA byte // 'Y', 'N' or '-'
}

// DecodeUSPrivacy reads a 4-character US Privacy string, as upstream's
// decode_us_privacy (consent/us_privacy.rs): lower-case flags are
// accepted and kept upper-case.
func DecodeUSPrivacy(s string) (USPrivacy, error) {
	if len(s) != 4 {
		return USPrivacy{}, fmt.Errorf("%w: %d characters, want 4", ErrInvalidUSPrivacy, len(s))
	}
	if s[0] != '1' {
		return USPrivacy{}, fmt.Errorf("%w: version %q, want 1", ErrInvalidUSPrivacy, s[0])
	}
	var f [3]byte
	for i := range f {
		c := s[i+1]
		switch c {
		case 'Y', 'N', '-':
		case 'y', 'n':
			c -= 'a' - 'A'
		default:
			return USPrivacy{}, fmt.Errorf("%w: flag %q", ErrInvalidUSPrivacy, c)
		}
		f[i] = c
	}
	return USPrivacy{Notice: f[0], OptOutSale: f[1], LSPA: f[2]}, nil
}

// String is the 4-character form.
func (u USPrivacy) String() string { return string([]byte{'1', u.Notice, u.OptOutSale, u.LSPA}) }
