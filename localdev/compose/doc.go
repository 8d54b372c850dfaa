// Package compose holds the checks of localdev/compose.yaml (Docker is not
// available in CI, so the file is loaded and verified by Go tests) and, in
// migrate/, the one-shot migration command that compose runs.
package compose
