package config

import (
	"fmt"
	"os"

	"github.com/ssatd/ssatd/internal/bundle"
)

// MaxBundleBytes bounds bundle.file: it is held in memory and sent whole.
const MaxBundleBytes = 16 << 20

// CheckBundleSize is the one size rule of bundle.file, checked when the
// configuration is validated and again on the bytes the guest reads at
// start-up (the file may have changed in between).
func CheckBundleSize(n int64) error {
	switch {
	case n == 0:
		return fmt.Errorf("is empty")
	case n > MaxBundleBytes:
		return fmt.Errorf("is %d bytes, over the %d byte limit", n, MaxBundleBytes)
	}
	return nil
}

// validateBundle checks that bundle.file, when set, is a readable regular
// file of a size that can be held in memory. The guest reads it once, at
// start-up.
func (c *Config) validateBundle(p *problems) {
	f := c.Bundle.File
	if c.Bundle.Dir != "" {
		if f != "" {
			p.addf("bundle.dir", "set with bundle.file: set one of them")
			return
		}
		c.validateBundleDir(p)
		return
	}
	if f == "" {
		return
	}
	st, err := os.Stat(f)
	switch {
	case err != nil:
		p.addf("bundle.file", "cannot be read: %v", err)
	case !st.Mode().IsRegular():
		p.addf("bundle.file", "%q is not a regular file", f)
	default:
		if err := CheckBundleSize(st.Size()); err != nil {
			p.addf("bundle.file", "%q %v", f, err)
		}
	}
}

// validateBundleDir checks that bundle.dir holds the modules a bundle is
// made of (tsjs-core at least) and that the largest bundle it can make,
// every module joined, fits the size rule. The guest reads it again at
// start-up (LoadBundleDir).
func (c *Config) validateBundleDir(p *problems) {
	if _, err := LoadBundleDir(c.Bundle.Dir); err != nil {
		p.addf("bundle.dir", "%v", err)
	}
}

// LoadBundleDir reads bundle.dir's modules and checks each module and the
// whole set against the size rule.
func LoadBundleDir(dir string) (*bundle.Modules, error) {
	m, err := bundle.LoadModules(dir)
	if err != nil {
		return nil, err
	}
	if err := CheckBundleSize(m.Size()); err != nil {
		return nil, fmt.Errorf("%q: its modules together %w", dir, err)
	}
	return m, nil
}
