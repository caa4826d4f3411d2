package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/ssatd/ssatd/internal/config"
)

// configFlags parses the -config flag shared by serve and config check,
// and the command's own flags, which extra declares. code is the exit
// status when ok is false.
func configFlags(name string, args []string, stdout, stderr io.Writer, environ []string, extra ...func(*flag.FlagSet)) (path string, code int, ok bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "configuration file (TOML); default $SSATD_CONFIG")
	for _, f := range extra {
		f(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ssatd %s -config FILE\n", name)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), "\n"+envUsage)
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return "", code, false
	}
	if *file == "" {
		*file = lookupEnv(environ, "SSATD_CONFIG")
	}
	return *file, 0, true
}

// loadConfig parses -config and loads the file: the start of serve and
// config check. code is the exit status when cfg is nil: 0 after -h, 2
// for usage, 1 for a configuration that has problems (all of them printed).
func loadConfig(name string, args []string, stdout, stderr io.Writer, environ []string, extra ...func(*flag.FlagSet)) (cfg *config.Config, path string, code int) {
	path, code, ok := configFlags(name, args, stdout, stderr, environ, extra...)
	if !ok {
		return nil, "", code
	}
	cfg, err := config.Load(path, environ)
	if err != nil {
		printProblems(stderr, path, err)
		return nil, path, 1
	}
	return cfg, path, 0
}

// printProblems writes each configuration problem on its own line; with no
// file named, it says how to name one, since that is the likely mistake.
func printProblems(w io.Writer, path string, err error) {
	if path == "" {
		defer fmt.Fprint(w, "no configuration file was named: pass -config FILE or set SSATD_CONFIG\n")
	}
	var list *config.Errors
	if errors.As(err, &list) {
		fmt.Fprintf(w, "configuration %s has %d problem(s):\n", describe(path), len(list.List))
		for _, e := range list.List {
			fmt.Fprintf(w, "  - %v\n", e)
		}
		return
	}
	fmt.Fprintf(w, "configuration %s: %v\n", describe(path), err)
}

func describe(path string) string {
	if path == "" {
		return "(environment only)"
	}
	return fmt.Sprintf("%q", path)
}

func cmdConfigCheck(args []string, stdout, stderr io.Writer, environ []string) int {
	cfg, path, code := loadConfig("config check", args, stdout, stderr, environ)
	if cfg == nil {
		return code
	}
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	fmt.Fprintf(stdout, "# configuration %s is valid; effective settings (secrets masked):\n", describe(path))
	if err := cfg.WriteEffective(stdout); err != nil {
		fmt.Fprintf(stderr, "ssatd config check: %v\n", err)
		return 1
	}
	return 0
}
