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
	if len(b) == 0 || len(b) > config.MaxBundleBytes {
		return nil, false, fmt.Errorf("bundle.file: %q is %d bytes, want 1 to %d", cfg.Bundle.File, len(b), config.MaxBundleBytes)
	}
	return b, true, nil
}
