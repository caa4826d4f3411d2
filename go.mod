module github.com/ssatd/ssatd

go 1.26.8

require (
	github.com/andybalholm/brotli v1.3.0
	github.com/caarlos0/env/v11 v11.4.2
	github.com/go-chi/chi/v5 v5.5.0
	github.com/klauspost/compress v1.20.4
	github.com/pelletier/go-toml/v2 v2.4.3
	go.uber.org/zap v1.28.0
	golang.org/x/net v0.62.0
	golang.org/x/sync v0.25.0
)

require go.uber.org/multierr v1.10.0 // indirect
