package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Function describes one Lambda of the relay and what it may touch.
type Function struct {
	Name string // directory under functions/ and zip name under the asset dir
	// Needs the relay key: gets the KMS key configuration and kms:Decrypt
	// on the one key. ingest, query and ws-message sign 39000-39006 and
	// 44100/44101 and serve NIP-11 self; ws-connect and ws-disconnect are
	// built without a key (app.ConnectParts, app.DisconnectParts)
	// and migrate signs nothing.
	Signs bool
	// Posts to WebSocket connections (fan-out, replies): gets
	// WS_MANAGEMENT_ENDPOINT and execute-api:ManageConnections on the stage.
	Posts bool
	// Manages serves NIP-86 (POST /): its addcommunity seals a new
	// community's relay key, so it also gets kms:Encrypt (same condition).
	Manages bool
	// Authorizer is the $connect authorizer (functions/ws-authorize),
	// deployed only when the stack serves several hostnames (-c hostnames):
	// it hands the addressed host to every event of a connection.
	Authorizer bool
	// Migrate is the deploy-time function (the migrate custom resource's
	// handler): master secret, kms:Encrypt, never on a request path.
	Migrate bool
	// EgressCheck is the deploy-time EgressCheck custom resource's
	// handler: it opens TLS to every AWS endpoint the functions call, from
	// their subnets with their security group, before migrate runs and
	// before the stages serve (egress.go). No grant beyond its VPC
	// network interfaces; never on a request path.
	EgressCheck bool
	// NoDB: the function never opens the database ($connect registers
	// nothing; the first message does), so it gets no database settings
	// and no grant.
	NoDB bool
	// Dispatches hands audiences above FANOUT_INLINE_MAX to the fan-out
	// function (asynchronous invoke): gets FANOUT_FUNCTION and
	// lambda:InvokeFunction on it. Built after the fan-out function.
	Dispatches bool
	// Fanout is the fan-out function itself: invoked asynchronously by the
	// dispatchers with a whole audience, it splits a large one and invokes
	// itself with the other parts (lambda:InvokeFunction on its own ARN),
	// loads the part it is given, re-checks access and posts.
	Fanout  bool
	Memory  float64 // MB
	Timeout float64 // seconds
}

// Functions is every function the stack deploys. The HTTP API allows 30 s
// and the WebSocket API 29 s per integration; 28 s leaves room for an Aurora
// resume from 0 ACU (about 15 s) on the first request after a pause.
var Functions = []Function{
	{Name: "fanout", Fanout: true, Posts: true, Memory: 512, Timeout: 60},
	{Name: "ingest", Signs: true, Posts: true, Dispatches: true, Memory: 512, Timeout: 28},
	{Name: "query", Signs: true, Manages: true, Memory: 512, Timeout: 28},
	{Name: "ws-connect", NoDB: true, Memory: 256, Timeout: 28},
	{Name: "ws-authorize", NoDB: true, Authorizer: true, Memory: 128, Timeout: 10},
	{Name: "ws-message", Signs: true, Posts: true, Dispatches: true, Memory: 512, Timeout: 28},
	{Name: "ws-disconnect", Memory: 256, Timeout: 28},
	{Name: "migrate", Migrate: true, Memory: 256, Timeout: 300},
	{Name: "egresscheck", EgressCheck: true, NoDB: true, Memory: 128, Timeout: 120},
}

// DeployTime: CloudFormation runs the function (a custom resource's
// handler) during a deployment; it serves no route, so it has no reserved
// concurrency and waits for no migration.
func (f Function) DeployTime() bool { return f.Migrate || f.EgressCheck }

// Database settings shared by the stack and its tests.
const (
	DBName = "buzz"
	// DBUser is the role the request-path functions log in as with IAM
	// auth; migrate creates it (DB_IAM_USER) and grants it rds_iam.
	DBUser = "buzz_relay"
	DBPort = 5432
	// IdleSessionTimeoutMs is the cluster's idle_session_timeout: the
	// server closes a connection idle this long, so connections left open
	// by frozen Lambda environments cannot keep Aurora from pausing.
	IdleSessionTimeoutMs = 60000
	// DBIdleTimeout is the pool's MaxConnIdleTime (DB_IDLE_TIMEOUT), below
	// IdleSessionTimeoutMs so an awake pool closes first.
	DBIdleTimeout = "30s"
	// DBConnectTimeout bounds one connection attempt on the request path
	// (DB_CONNECT_TIMEOUT); a resuming Aurora answers 503 + Retry-After
	// sooner than the 28 s function timeout. Migrate waits for a resume.
	DBConnectTimeout        = "5s"
	MigrateDBConnectTimeout = "60s"
	DBMaxConns              = 2
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
func Deployed(s Settings) []Function {
	var out []Function
	for _, f := range Functions {
		if f.Authorizer && len(s.Hostnames) == 0 {
			continue
		}
		out = append(out, f)
	}
	return out
}
