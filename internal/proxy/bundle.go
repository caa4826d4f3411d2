package proxy

import (
	"fmt"
	"os"

	"github.com/ssatd/ssatd/internal/config"
)

// bundleOf is the bundle pages load: bundle.file when configured, read
// once here, else the one the caller built in.
func bundleOf(cfg *config.Config, builtIn []byte) (b []byte, user bool, err error) {
	if cfg.Bundle.File == "" {
		return builtIn, false, nil
	}
	b, err = os.ReadFile(cfg.Bundle.File)
	if err != nil {
		return nil, false, fmt.Errorf("bundle.file: %w", err)
	}
	if err := config.CheckBundleSize(int64(len(b))); err != nil {
		return nil, false, fmt.Errorf("bundle.file: %q %w", cfg.Bundle.File, err)
	}
	return b, true, nil
}
