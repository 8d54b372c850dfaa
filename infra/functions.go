package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// The functions, their routes and their environment are described once,
// in shared/wiring/lambdas, which localdev's processes mode reads too; the
// names below are that package's, under the names this app's code and
// tests use.
type (
	Function   = lambdas.Function
	MediaRoute = lambdas.HTTPRoute
)

var (
	Functions   = lambdas.Functions
	MediaRoutes = lambdas.MediaRoutes
)

const (
	DBName                  = lambdas.DBName
	DBUser                  = lambdas.DBUser
	DBPort                  = lambdas.DBPort
	DBIdleTimeout           = lambdas.DBIdleTimeout
	DBConnectTimeout        = lambdas.DBConnectTimeout
	MigrateDBConnectTimeout = lambdas.MigrateDBConnectTimeout
	DBMaxConns              = lambdas.DBMaxConns
	HostHeader              = lambdas.HostHeader
)

// Settings of the stack's own resources, shared with its tests.
const (
	// IdleSessionTimeoutMs is the cluster's idle_session_timeout: the
	// server closes a connection idle this long, so connections left open
	// by frozen Lambda environments cannot keep Aurora from pausing
	// (lambdas.DBIdleTimeout, the pool's, is below it).
	IdleSessionTimeoutMs = 60000
	// FanoutMaxEventAge bounds how long an undelivered batch is retried
	// (asynchronous invoke, two retries): a live event older than this is
	// stale; the client's next REQ reads it from storage.
	FanoutMaxEventAgeMinutes = 5
	FanoutRetryAttempts      = 2
)

// checkZip makes sure dir/<name>.zip is a Lambda zip for provided.al2023: a
// file named bootstrap with its exec bit, so a deploy never ships a zip
// that cannot start.
func checkZip(dir, name string) (string, error) {
	p := filepath.Join(dir, name+".zip")
	zr, err := zip.OpenReader(p)
	if err != nil {
		return "", fmt.Errorf("function %s: %w (run `make build`)", name, err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name == "bootstrap" {
			if f.Mode().Perm()&0o111 == 0 {
				return "", fmt.Errorf("function %s: bootstrap in %s is not executable", name, p)
			}
			return p, nil
		}
	}
	return "", fmt.Errorf("function %s: %s has no bootstrap at its root", name, p)
}

// zipSHA256 is the hex SHA-256 of a function zip: a property of the
// migrate custom resource, so new migrations (embedded in the zip) make
// CloudFormation send an Update and migrate runs again.
func zipSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Deployed is the functions a stack with s deploys: all but the $connect
// authorizer unless s serves several hostnames.
func Deployed(s Settings) []Function { return lambdas.Deployed(len(s.Hostnames) > 0) }
