package main

import (
	"archive/zip"
	"fmt"
	"path/filepath"
)

// Function describes one Lambda of the relay and what it may touch.
type Function struct {
	Name string // directory under functions/ and zip name under the asset dir
	// Needs the relay key: gets the KMS key configuration and kms:Decrypt
	// on the one key. ingest, query and ws-message sign 39000-39006 and
	// 44100/44101 and serve NIP-11 self; ws-connect and ws-disconnect are
	// built with app.BuildWithoutKey and migrate signs nothing.
	Signs bool
	// Posts to WebSocket connections (fan-out, replies): gets
	// WS_MANAGEMENT_ENDPOINT and execute-api:ManageConnections on the stage.
	Posts   bool
	Memory  float64 // MB
	Timeout float64 // seconds
}

// Functions is every function the stack deploys. The HTTP API allows 30 s
// and the WebSocket API 29 s per integration; 28 s leaves room for an Aurora
// resume from 0 ACU (about 15 s) on the first request after a pause.
var Functions = []Function{
	{Name: "ingest", Signs: true, Posts: true, Memory: 512, Timeout: 28},
	{Name: "query", Signs: true, Memory: 512, Timeout: 28},
	{Name: "ws-connect", Memory: 256, Timeout: 28},
	{Name: "ws-message", Signs: true, Posts: true, Memory: 512, Timeout: 28},
	{Name: "ws-disconnect", Memory: 256, Timeout: 28},
	{Name: "migrate", Memory: 256, Timeout: 300},
}

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
