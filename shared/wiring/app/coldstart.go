package app

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
)

// ColdStartMessage is the message of the line ColdStart logs.
const ColdStartMessage = "cold start"

// ColdStart is a function main's logger (Logger), after it logged, once per
// cold start, the binary the process started from: its path, the main
// package it was built from, the VCS revision and platform Go recorded in
// it, and the function it serves (AWS_LAMBDA_FUNCTION_NAME). localdev's
// processes mode checks these lines: each route's function ran from its
// own binary.
func ColdStart() *slog.Logger {
	log := Logger()
	exe, err := os.Executable()
	if err != nil {
		exe = "unknown: " + err.Error()
	}
	attrs := []any{"function", os.Getenv("AWS_LAMBDA_FUNCTION_NAME"), "executable", exe,
		"goos", runtime.GOOS, "goarch", runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		attrs = append(attrs, "main", bi.Path, "go", bi.GoVersion)
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision", "vcs.modified", "-tags":
				attrs = append(attrs, s.Key, s.Value)
			}
		}
	}
	log.Info(ColdStartMessage, attrs...)
	return log
}
