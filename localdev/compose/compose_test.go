package compose

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/buzzrelay/relay/shared/testing/testkit"
	"github.com/buzzrelay/relay/shared/wiring/config"
)

type service struct {
	Image       string            `yaml:"image"`
	Entrypoint  []string          `yaml:"entrypoint"`
	NetworkMode string            `yaml:"network_mode"`
	WorkingDir  string            `yaml:"working_dir"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test     []string `yaml:"test"`
		Interval string   `yaml:"interval"`
		Timeout  string   `yaml:"timeout"`
		Retries  int      `yaml:"retries"`
	} `yaml:"healthcheck"`
	Restart string `yaml:"restart"`
}

type composeFile struct {
	Name string `yaml:"name"`
	Buzz struct {
		RelayPubkey string `yaml:"relay_pubkey"`
	} `yaml:"x-buzz"`
	Services map[string]service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
}

func load(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true) // a typo in a key is an error, as in docker compose
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return f
}

func TestServicesAndImages(t *testing.T) {
	f := load(t)
	var names []string
	for n := range f.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "kms migrate postgres relay s3" {
		t.Fatalf("services %v", names)
	}
	// Public images from Docker Hub, pinned to a tag (no registry host, no
	// latest).
	want := map[string]*regexp.Regexp{
		"postgres": regexp.MustCompile(`^postgres:1[4-9](\.\d+)?$`),
		"kms":      regexp.MustCompile(`^nsmithuk/local-kms:\d+(\.\d+)*$`),
		"migrate":  regexp.MustCompile(`^golang:1\.26(\.\d+)?-bookworm$`),
		"relay":    regexp.MustCompile(`^golang:1\.26(\.\d+)?-bookworm$`),
		"s3":       regexp.MustCompile(`^minio/minio:RELEASE\.\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z$`),
	}
	for n, s := range f.Services {
		if !want[n].MatchString(s.Image) {
			t.Errorf("%s: image %q", n, s.Image)
		}
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("%s: port %q is not bound to the loopback address", n, p)
			}
		}
	}
	for _, v := range []string{"pgdata", "gomod", "gocache", "media"} {
		if _, ok := f.Volumes[v]; !ok {
			t.Errorf("volume %s not declared", v)
		}
	}
}

func TestWiring(t *testing.T) {
	f := load(t)
	pg, kms, mig, relay := f.Services["postgres"], f.Services["kms"], f.Services["migrate"], f.Services["relay"]

	if pg.Healthcheck == nil || !strings.Contains(strings.Join(pg.Healthcheck.Test, " "), "pg_isready") {
		t.Error("postgres needs a pg_isready healthcheck for depends_on")
	}
	// Both Go services reach this Postgres with its credentials.
	for n, s := range map[string]service{"migrate": mig, "relay": relay} {
		u, err := url.Parse(s.Environment["DATABASE_URL"])
		if err != nil {
			t.Fatalf("%s: DATABASE_URL: %v", n, err)
		}
		pw, _ := u.User.Password()
		if u.Hostname() != "postgres" || u.Port() != "5432" || u.User.Username() != pg.Environment["POSTGRES_USER"] ||
			pw != pg.Environment["POSTGRES_PASSWORD"] || u.Path != "/"+pg.Environment["POSTGRES_DB"] {
			t.Errorf("%s: DATABASE_URL %s does not match the postgres service", n, u)
		}
		if s.WorkingDir != "/src" || !contains(s.Volumes, "..:/src") {
			t.Errorf("%s: the checkout must be mounted at /src (working_dir %q, volumes %v)", n, s.WorkingDir, s.Volumes)
		}
		// The command builds a package of this repository.
		if len(s.Command) != 3 || s.Command[0] != "go" || s.Command[1] != "run" {
			t.Errorf("%s: command %v", n, s.Command)
		} else if _, err := os.Stat(filepath.Join("../..", s.Command[2], "main.go")); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if mig.Environment["BUZZ_COMMUNITY"] != relay.Environment["BUZZ_COMMUNITY"] {
		t.Error("migrate must register the relay's community")
	}
	if mig.Restart != "no" {
		t.Error(`migrate is one-shot: restart "no"`)
	}
	if mig.DependsOn["postgres"].Condition != "service_healthy" {
		t.Error("migrate must wait for a healthy postgres")
	}
	for dep, cond := range map[string]string{"postgres": "service_healthy", "kms": "service_started", "migrate": "service_completed_successfully"} {
		if relay.DependsOn[dep].Condition != cond {
			t.Errorf("relay depends_on %s: %q, want %q", dep, relay.DependsOn[dep].Condition, cond)
		}
	}
	if relay.Command[2] != "./localdev" || relay.Environment["BUZZ_ADDR"] != "0.0.0.0:8080" || !contains(relay.Ports, "127.0.0.1:8080:8080") {
		t.Errorf("relay must serve localdev on 127.0.0.1:8080 like make dev: %v %v", relay.Command, relay.Ports)
	}
	if relay.Environment["BUZZ_PUBLIC_SCHEME"] != "http" {
		t.Error("relay: BUZZ_PUBLIC_SCHEME must be http behind the emulator")
	}

	// local-kms gets the committed seed, in the account and region the
	// ciphertext and key ARN name.
	if !contains(kms.Volumes, "./kms-seed.yaml:/init/seed.yaml:ro") || kms.Environment["KMS_SEED_PATH"] != "/init/seed.yaml" {
		t.Errorf("kms: seed not mounted: %v", kms.Volumes)
	}
	if _, err := os.Stat("../kms-seed.yaml"); err != nil {
		t.Error(err)
	}
	if kms.Environment["KMS_REGION"] != testkit.KMSRegion || kms.Environment["KMS_ACCOUNT_ID"] != testkit.KMSAccountID {
		t.Errorf("kms: region/account %v", kms.Environment)
	}
	if relay.Environment["AWS_ENDPOINT_URL_KMS"] != "http://kms:"+kms.Environment["PORT"] {
		t.Errorf("relay: AWS_ENDPOINT_URL_KMS %q does not reach the kms service", relay.Environment["AWS_ENDPOINT_URL_KMS"])
	}
	if relay.Environment["RELAY_SIGNER"] != "kms" || relay.Environment["RELAY_KMS_KEY_ID"] != testkit.KMSKeyARN {
		t.Errorf("relay: signer env %v", relay.Environment)
	}
}

// TestRelayKeyDecrypts starts local-kms with the same seed and builds the
// relay's signer from the compose environment: what `docker compose up`
// does at the relay's start.
func TestRelayKeyDecrypts(t *testing.T) {
	f := load(t)
	env := f.Services["relay"].Environment
	endpoint := testkit.StartKMS(t)
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	for _, k := range []string{"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_EC2_METADATA_DISABLED"} {
		t.Setenv(k, env[k])
	}
	t.Setenv("AWS_ENDPOINT_URL_KMS", endpoint) // the kms service, as seen from here
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := cfg.Signer(ctx)
	if err != nil {
		t.Fatalf("relay signer from compose env: %v", err)
	}
	if s.PublicKey() != f.Buzz.RelayPubkey {
		t.Fatalf("relay pubkey %s, compose.yaml says %s", s.PublicKey(), f.Buzz.RelayPubkey)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestMedia: issue 30's S3-compatible store. MinIO runs in the relay's
// network, so the endpoint the relay signs presigned URLs for
// (127.0.0.1:9000) is the one a browser on the host reaches too; the
// bucket exists before MinIO starts; the relay's credentials and region
// are MinIO's.
func TestMedia(t *testing.T) {
	f := load(t)
	s3, relay := f.Services["s3"], f.Services["relay"]
	env := relay.Environment
	if s3.NetworkMode != "service:relay" {
		t.Errorf("s3: network_mode %q, want service:relay (one address for the relay and the host)", s3.NetworkMode)
	}
	if len(s3.Ports) != 0 || !contains(relay.Ports, "127.0.0.1:9000:9000") {
		t.Errorf("MinIO's port is published by the relay service it shares a network with: s3 %v, relay %v", s3.Ports, relay.Ports)
	}
	u, err := url.Parse(env["AWS_ENDPOINT_URL_S3"])
	if err != nil || u.Scheme != "http" || u.Host != "127.0.0.1:9000" {
		t.Errorf("relay: AWS_ENDPOINT_URL_S3 %q, want http://127.0.0.1:9000", env["AWS_ENDPOINT_URL_S3"])
	}
	bucket := env["MEDIA_BUCKET"]
	if !regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`).MatchString(bucket) {
		t.Fatalf("relay: MEDIA_BUCKET %q is not an S3 bucket name", bucket)
	}
	ep := strings.Join(s3.Entrypoint, " ")
	if len(s3.Entrypoint) != 3 || s3.Entrypoint[0] != "sh" ||
		!strings.Contains(ep, "mkdir -p /data/"+bucket+" ") || !strings.Contains(ep, "exec minio server /data --address :"+u.Port()) {
		t.Errorf("s3: entrypoint %q must create /data/%s and serve /data on :%s", ep, bucket, u.Port())
	}
	if !contains(s3.Volumes, "media:/data") {
		t.Errorf("s3: volumes %v, want media:/data", s3.Volumes)
	}
	me := s3.Environment
	if env["AWS_ACCESS_KEY_ID"] != me["MINIO_ROOT_USER"] || env["AWS_SECRET_ACCESS_KEY"] != me["MINIO_ROOT_PASSWORD"] {
		t.Errorf("relay credentials %q/%q are not MinIO's root user", env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"])
	}
	// MinIO's own rules: a user of 3+ characters, a password of 8+.
	if len(me["MINIO_ROOT_USER"]) < 3 || len(me["MINIO_ROOT_PASSWORD"]) < 8 {
		t.Errorf("MinIO root credentials too short: %v", me)
	}
	if me["MINIO_SITE_REGION"] != env["AWS_REGION"] {
		t.Errorf("MinIO region %q, relay signs for %q", me["MINIO_SITE_REGION"], env["AWS_REGION"])
	}
	if s3.Healthcheck == nil || len(s3.Healthcheck.Test) == 0 {
		t.Error("s3: no healthcheck")
	}
}
