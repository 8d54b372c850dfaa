package testkit

// The local KMS: github.com/nsmithuk/local-kms started as a plain process,
// so the KMS signer is exercised against a real KMS API implementation (no
// Docker, no AWS account). The binary is installed with `go install` at the
// pinned KMSVersion when it is not on PATH or in GOBIN / GOPATH/bin.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
)

// KMSModule and KMSVersion pin the emulator (the module has no tagged
// release; this pseudo-version builds with Go 1.26). Keep localdev/kms.sh
// in step.
const (
	KMSModule  = "github.com/nsmithuk/local-kms"
	KMSVersion = "v0.0.0-20260228092603-2a5e92d09ab6"
)

// Seed key and alias defined in localdev/kms-seed.yaml.
const (
	KMSKeyID     = "6e9741a4-87fd-47ab-92a6-a2097aef63f6"
	KMSAlias     = "alias/buzz-relay"
	KMSRegion    = "eu-west-2"
	KMSAccountID = "111122223333"
)

// KMSKeyARN is the ARN local-kms gives the seeded key.
const KMSKeyARN = "arn:aws:kms:" + KMSRegion + ":" + KMSAccountID + ":key/" + KMSKeyID

var kmsStartedRE = regexp.MustCompile(`Local KMS started on [0-9.]*:(\d+)`)

// KMSSeedFile returns the absolute path of localdev/kms-seed.yaml, found by
// walking up from the working directory to the module root.
func KMSSeedFile() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "localdev", "kms-seed.yaml")
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("seed file: %w", err)
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("module root (go.mod) not found above the working directory")
		}
		dir = parent
	}
}

// KMSBinary returns the path of the local-kms executable, installing it with
// `go install KMSModule@KMSVersion` when it cannot be found.
func KMSBinary(ctx context.Context) (string, error) {
	if p, err := exec.LookPath("local-kms"); err == nil {
		return p, nil
	}
	bin, err := goBin(ctx)
	if err != nil {
		return "", err
	}
	p := filepath.Join(bin, "local-kms")
	if runtime.GOOS == "windows" {
		p += ".exe"
	}
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	cmd := exec.CommandContext(ctx, "go", "install", KMSModule+"@"+KMSVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w\n%s", KMSModule, KMSVersion, err, out)
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("local-kms not at %s after go install: %w", p, err)
	}
	return p, nil
}

func goBin(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOBIN GOPATH: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) >= 1 && strings.TrimSpace(lines[0]) != "" {
		return strings.TrimSpace(lines[0]), nil
	}
	if len(lines) >= 2 && strings.TrimSpace(lines[1]) != "" {
		gopath := strings.Split(strings.TrimSpace(lines[1]), string(os.PathListSeparator))[0]
		return filepath.Join(gopath, "bin"), nil
	}
	return "", errors.New("neither GOBIN nor GOPATH is set")
}

// StartKMS starts local-kms on a free loopback port for the test, with a
// data folder of its own, and returns its endpoint; it stops with the test.
func StartKMS(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	endpoint, stop, err := RunKMS(ctx, filepath.Join(t.TempDir(), "kms-data"))
	if err != nil {
		t.Fatalf("local-kms: %v", err)
	}
	t.Cleanup(stop)
	return endpoint
}

// RunKMS starts local-kms on a free loopback port with its data in
// dataDir and returns its endpoint and what stops it (for a TestMain; a
// test calls StartKMS).
func RunKMS(ctx context.Context, dataDir string) (endpoint string, stop func(), err error) {
	bin, err := KMSBinary(ctx)
	if err != nil {
		return "", nil, err
	}
	seed, err := KMSSeedFile()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"PORT=0",
		"KMS_REGION="+KMSRegion,
		"KMS_ACCOUNT_ID="+KMSAccountID,
		"KMS_SEED_PATH="+seed,
		"KMS_DATA_PATH="+dataDir,
	)
	// logrus writes to stderr; read it for the bound port, then keep draining.
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, fmt.Errorf("stderr: %w", err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start: %w", err)
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	portc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if m := kmsStartedRE.FindStringSubmatch(line); m != nil && !sent {
				portc <- m[1]
				sent = true
			}
		}
		if !sent {
			close(portc)
		}
	}()
	var port string
	select {
	case p, ok := <-portc:
		if !ok {
			return "", nil, errors.New("exited before listening")
		}
		port = p
	case <-time.After(30 * time.Second):
		return "", nil, errors.New("did not report its port within 30s")
	}
	addr := net.JoinHostPort("127.0.0.1", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return "", nil, fmt.Errorf("not reachable on %s: %w", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr, stop, nil
}

// IsolateKMS points the AWS SDK of the test process at local-kms at endpoint,
// away from the machine's AWS files and instance metadata, with dummy
// credentials and the seed key's region.
func IsolateKMS(t testing.TB, endpoint string) {
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	t.Setenv("AWS_REGION", KMSRegion)
	t.Setenv("AWS_ENDPOINT_URL_KMS", endpoint)
}

// KMSClient is a KMS client for local-kms at endpoint, with dummy credentials.
func KMSClient(endpoint string) *kms.Client {
	return kms.New(kms.Options{Region: KMSRegion, BaseEndpoint: aws.String(endpoint),
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local"}, nil
		}))})
}
