// Package config reads the environment a function or the local server starts
// with. Everything is read once at cold start; a misconfiguration is an error
// returned before the first request, never a silent default.
package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
	"github.com/buzzrelay/relay/shared/service/ratelimit"
)

// Config is what every entry point needs.
type Config struct {
	// DatabaseURL is a pgx connection string (DATABASE_URL).
	DatabaseURL string
	// MaxConns bounds the pool (DB_MAX_CONNS, default 2: Lambda runs one
	// request per instance).
	MaxConns int32
	// SimpleProtocol selects QueryExecModeExec so the pool works behind
	// PgBouncer / RDS Proxy in transaction mode (DB_SIMPLE_PROTOCOL=1).
	SimpleProtocol bool
	// ConnectTimeout bounds each database connection attempt
	// (DB_CONNECT_TIMEOUT, Go duration, default 5s), so a paused Aurora
	// that takes longer to resume gets a "retry" answer, not a hung request.
	ConnectTimeout time.Duration
	// IdleTimeout is how long the pool keeps an unused connection
	// (DB_IDLE_TIMEOUT, default 30s); the pool keeps no minimum, so an idle
	// relay holds no connection and Aurora can pause.
	IdleTimeout time.Duration
	// DBAuth is how the pool authenticates when DATABASE_URL is not set:
	// "iam" (an RDS IAM auth token per connection) or "secret" (the Secrets
	// Manager secret DB_SECRET_ARN). DB_AUTH; default secret.
	DBAuth string
	// IAM is where DB_AUTH=iam connects (DB_HOST, DB_PORT default 5432,
	// DB_NAME, DB_USER).
	IAM IAMDatabase
	// DefaultCommunity serves hosts that have no community of their own
	// (BUZZ_COMMUNITY, default "default").
	DefaultCommunity string
	// WSManagementEndpoint is the API Gateway @connections endpoint
	// (WS_MANAGEMENT_ENDPOINT), empty for functions that do not post to
	// connections.
	WSManagementEndpoint string
	// PublicScheme is the scheme clients use for HTTP (https behind API
	// Gateway, http in localdev). BUZZ_PUBLIC_SCHEME, default https, or the
	// scheme of BUZZ_PUBLIC_URL.
	PublicScheme string
	// PublicHost is the host of BUZZ_PUBLIC_URL (empty when unset): clients
	// reach the relay there (e.g. through CloudFront), so NIP-98 `u`, the
	// NIP-42 `relay` tag and the community are matched against it instead
	// of the Host a request arrives with.
	PublicHost string
	// HostHeader (BUZZ_HOST_HEADER, lowercase) names the header CloudFront
	// copies the viewer's Host into when one deployment serves several
	// hostnames; empty: the Host header (or PublicHost) is used.
	HostHeader string
	// CommunityHost is BUZZ_COMMUNITY_HOST: the hostname(s) the default
	// community is registered at (migrate, localdev), comma-separated.
	CommunityHost string
	// DBIAMUser (DB_IAM_USER) is the database user migrate creates for IAM
	// auth; empty: none.
	DBIAMUser string
	// DBSecretARN (DB_SECRET_ARN) is the Secrets Manager secret the DSN is
	// built from when DATABASE_URL is not set; DBSSLMode (DB_SSLMODE,
	// checked when used, default require) its sslmode.
	DBSecretARN, DBSSLMode string
	// AWSRegion is AWS_REGION; InLambda is true when
	// AWS_LAMBDA_FUNCTION_NAME is set (the Lambda runtime sets it).
	AWSRegion string
	InLambda  bool
	// Key is the relay key's and the sealer's settings (signer.go).
	Key KeyConfig
	// Fanout is how large audiences are handed to the fan-out function.
	Fanout FanoutConfig
	// Push is push notifications (shared/service/push, docs/push.md).
	Push PushConfig
	// Workflows is Buzz's workflows (shared/service/workflow,
	// docs/workflows.md).
	Workflows WorkflowConfig
	// PushFunction (PUSH_FUNCTION, name or ARN) is the push function
	// $connect hands each accepted connection to (invoked asynchronously
	// at LAMBDA_ENDPOINT), which posts its NIP-42 challenge once the socket
	// is open; empty: the challenge goes out with the reply to the
	// connection's first message only.
	PushFunction string
	// Limits are the rate limits (RATE_*, shared/service/ratelimit).
	Limits ratelimit.Limits
	// Media is the Blossom media service (MEDIA_*, media.go).
	Media MediaConfig
	// LiveKitConf is NIP-29 LiveKit's server (LIVEKIT_*, livekit.go).
	LiveKitConf LiveKitConfig
	// GIFConf is Buzz's GIF proxy's KLIPY key (KLIPY_*, gifs.go).
	GIFConf GIFConfig
	// Session is where connections keep their idle state (SESSION_*,
	// session.go).
	Session SessionConfig
	// Charges are the emulated latencies of AWS calls (APIGW_COSTS=on,
	// S3_LATENCY, ..., AURORA_ROUND_TRIP: awssdk/charges.go); the pool
	// pays AuroraRoundTrip, awssdk.Load's clients the rest. Unset in a
	// deployment: none.
	Charges awssdk.Charges
	// Directory is where what each host serves is kept (DIRECTORY_*,
	// directory.go).
	Directory DirectoryConfig
}

// KeyConfig is RELAY_*: which relay key signs and what seals community keys.
type KeyConfig struct {
	Signer       string // RELAY_SIGNER: local (default) or kms
	SecretKey    string // RELAY_SECRET_KEY, hex
	KeyFile      string // RELAY_KEY_FILE
	Ciphertext   string // RELAY_KEY_CIPHERTEXT, base64
	SSMParameter string // RELAY_KEY_SSM_PARAMETER
	KMSKeyID     string // RELAY_KMS_KEY_ID
	SealKey      string // RELAY_SEAL_KEY, hex
	SealKeyFile  string // RELAY_SEAL_KEY_FILE
}

// PushConfig is PUSH_SENDER_FUNCTION, PUSH_GATEWAY_URL, PUSH_APP_PROFILES,
// PUSH_ALLOW_PRIVATE_CALLBACKS and PUSH_DIALER_FUNCTION.
type PushConfig struct {
	// SenderFunction (name or ARN) is the push sender (functions/
	// push-sender), invoked asynchronously at LAMBDA_ENDPOINT after each
	// commit of a community with subscriptions; empty: push is off (a
	// 30390 is refused restricted:, a 30350 stored as before).
	SenderFunction string
	// Gateway is the NIP-PL push gateway's delivery URL and Profiles its
	// app profiles ("id=apns,..."); without both, leases are refused.
	Gateway, Profiles string
	// AllowPrivate lets callbacks use http and private addresses: make
	// dev and the tests only.
	AllowPrivate bool
	// DialerFunction (PUSH_DIALER_FUNCTION, name or ARN) is the push
	// dialer (functions/push-dialer, outside the VPC): the sender invokes
	// it synchronously at LAMBDA_ENDPOINT for each try's request; empty:
	// the sender dials itself (the tests in process).
	DialerFunction string
}

// On reports whether push is on.
func (p PushConfig) On() bool { return p.SenderFunction != "" }

// WorkflowConfig is WORKFLOW_RUNNER_FUNCTION and
// WORKFLOW_ALLOW_PRIVATE_WEBHOOKS.
type WorkflowConfig struct {
	// RunnerFunction (name or ARN) is the workflow runner
	// (functions/workflow-runner), invoked asynchronously at
	// LAMBDA_ENDPOINT after a commit that may trigger a workflow, by a
	// webhook, and by the schedules; empty: definitions are checked and
	// stored, and nothing runs them.
	RunnerFunction string
	// AllowPrivate lets call_webhook reach http and private addresses:
	// local tests only.
	AllowPrivate bool
	// Schedules is the EventBridge Scheduler group the runner keeps one
	// schedule per schedule workflow in (WORKFLOW_SCHEDULE_GROUP) and the
	// role those schedules invoke it with (WORKFLOW_SCHEDULER_ROLE_ARN);
	// RunnerArn is the runner's ARN they target (WORKFLOW_RUNNER_ARN;
	// "": the invocation's own, in Lambda).
	ScheduleGroup, SchedulerRole, RunnerArn string
	// SchedulerEndpoint (AWS_ENDPOINT_URL_SCHEDULER) is the Scheduler
	// API's address: "" the region's; locally the emulator's.
	SchedulerEndpoint string
}

// FanoutConfig is FANOUT_* and LAMBDA_ENDPOINT.
type FanoutConfig struct {
	// Function (FANOUT_FUNCTION, name or ARN) takes audiences above
	// InlineMax; empty: every delivery is inline.
	Function string
	// InlineMax (FANOUT_INLINE_MAX) and BatchSize (FANOUT_BATCH_SIZE)
	// override shared/fanout's defaults when not 0.
	InlineMax, BatchSize int
	// LambdaEndpoint (LAMBDA_ENDPOINT) is where the function is invoked;
	// empty: the region's Lambda endpoint.
	LambdaEndpoint string
	// Self (AWS_LAMBDA_FUNCTION_NAME, set by Lambda) is the running
	// function's own name: the fan-out function invokes itself with the
	// other parts of an audience it splits, and cannot be given its own
	// name in its environment (the template would reference itself).
	Self string
}

// text is every plain string setting by its variable: each name is
// written once, here.
func (c *Config) text() map[string]*string {
	return map[string]*string{
		"DATABASE_URL":                &c.DatabaseURL,
		"BUZZ_COMMUNITY":              &c.DefaultCommunity,
		"WS_MANAGEMENT_ENDPOINT":      &c.WSManagementEndpoint,
		"BUZZ_PUBLIC_SCHEME":          &c.PublicScheme,
		"BUZZ_COMMUNITY_HOST":         &c.CommunityHost,
		"DB_IAM_USER":                 &c.DBIAMUser,
		"DB_SECRET_ARN":               &c.DBSecretARN,
		"DB_SSLMODE":                  &c.DBSSLMode,
		"AWS_REGION":                  &c.AWSRegion,
		"RELAY_SIGNER":                &c.Key.Signer,
		"RELAY_SECRET_KEY":            &c.Key.SecretKey,
		"RELAY_KEY_FILE":              &c.Key.KeyFile,
		"RELAY_KEY_CIPHERTEXT":        &c.Key.Ciphertext,
		"RELAY_KEY_SSM_PARAMETER":     &c.Key.SSMParameter,
		"RELAY_KMS_KEY_ID":            &c.Key.KMSKeyID,
		"RELAY_SEAL_KEY":              &c.Key.SealKey,
		"RELAY_SEAL_KEY_FILE":         &c.Key.SealKeyFile,
		"FANOUT_FUNCTION":             &c.Fanout.Function,
		"PUSH_FUNCTION":               &c.PushFunction,
		"PUSH_SENDER_FUNCTION":        &c.Push.SenderFunction,
		"PUSH_GATEWAY_URL":            &c.Push.Gateway,
		"PUSH_APP_PROFILES":           &c.Push.Profiles,
		"PUSH_DIALER_FUNCTION":        &c.Push.DialerFunction,
		"WORKFLOW_RUNNER_FUNCTION":    &c.Workflows.RunnerFunction,
		"WORKFLOW_SCHEDULE_GROUP":     &c.Workflows.ScheduleGroup,
		"WORKFLOW_SCHEDULER_ROLE_ARN": &c.Workflows.SchedulerRole,
		"WORKFLOW_RUNNER_ARN":         &c.Workflows.RunnerArn,
		"AWS_ENDPOINT_URL_SCHEDULER":  &c.Workflows.SchedulerEndpoint,
		"LAMBDA_ENDPOINT":             &c.Fanout.LambdaEndpoint,
		"AWS_LAMBDA_FUNCTION_NAME":    &c.Fanout.Self,
	}
}

// IAMDatabase is the database an IAM-authenticated pool connects to.
type IAMDatabase struct {
	Host, Port, Name, User string
}

// FromEnv loads the configuration from the process environment.
func FromEnv() (*Config, error) { return Load(os.Getenv) }

// Defaults of the pool timings.
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultIdleTimeout    = 30 * time.Second
)

// Load reads the configuration through getenv (tests pass a map lookup).
func Load(getenv func(string) string) (*Config, error) {
	c := &Config{
		MaxConns:       2,
		ConnectTimeout: DefaultConnectTimeout,
		IdleTimeout:    DefaultIdleTimeout,
		InLambda:       getenv("AWS_LAMBDA_FUNCTION_NAME") != "",
	}
	for name, p := range c.text() {
		*p = getenv(name)
	}
	if c.DefaultCommunity == "" {
		c.DefaultCommunity = "default"
	}
	if err := c.loadPublicURL(getenv("BUZZ_PUBLIC_URL")); err != nil {
		return nil, err
	}
	if c.PublicScheme == "" {
		c.PublicScheme = "https"
	}
	c.HostHeader = strings.ToLower(getenv("BUZZ_HOST_HEADER"))
	if c.HostHeader != "" && (c.PublicHost != "" || !headerRE.MatchString(c.HostHeader)) {
		return nil, fmt.Errorf("BUZZ_HOST_HEADER must be a header name such as x-buzz-host, without BUZZ_PUBLIC_URL (which pins one host), got %q", c.HostHeader)
	}
	if c.PublicScheme != "https" && c.PublicScheme != "http" {
		return nil, fmt.Errorf("BUZZ_PUBLIC_SCHEME must be http or https, got %q", c.PublicScheme)
	}
	if v := getenv("DB_MAX_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return nil, fmt.Errorf("DB_MAX_CONNS must be a whole number from 1 to 1000, got %q", v)
		}
		c.MaxConns = int32(n)
	}
	switch v := getenv("DB_SIMPLE_PROTOCOL"); v {
	case "", "0", "false":
	case "1", "true":
		c.SimpleProtocol = true
	default:
		return nil, fmt.Errorf("DB_SIMPLE_PROTOCOL must be 0 or 1, got %q", v)
	}
	var err error
	if c.ConnectTimeout, err = duration(getenv, "DB_CONNECT_TIMEOUT", DefaultConnectTimeout, 100*time.Millisecond, 2*time.Minute); err != nil {
		return nil, err
	}
	if c.IdleTimeout, err = duration(getenv, "DB_IDLE_TIMEOUT", DefaultIdleTimeout, 100*time.Millisecond, time.Hour); err != nil {
		return nil, err
	}
	c.IAM = IAMDatabase{Host: getenv("DB_HOST"), Port: getenv("DB_PORT"), Name: getenv("DB_NAME"), User: getenv("DB_USER")}
	if c.IAM.Port == "" {
		c.IAM.Port = "5432"
	}
	switch c.DBAuth = getenv("DB_AUTH"); c.DBAuth {
	case "":
		c.DBAuth = "secret"
	case "iam", "secret":
	default:
		return nil, fmt.Errorf("DB_AUTH must be iam or secret, got %q", c.DBAuth)
	}
	if e := c.WSManagementEndpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("WS_MANAGEMENT_ENDPOINT must be an http(s) URL, got %q", e)
		}
	}
	if c.Fanout.InlineMax, err = positive(getenv, "FANOUT_INLINE_MAX"); err != nil {
		return nil, err
	}
	if c.Fanout.BatchSize, err = positive(getenv, "FANOUT_BATCH_SIZE"); err != nil {
		return nil, err
	}
	if c.Limits, err = rateLimits(getenv); err != nil {
		return nil, fmt.Errorf("rate limits: %w", err)
	}
	if c.Media, err = loadMedia(getenv); err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	if c.LiveKitConf, err = loadLiveKit(getenv); err != nil {
		return nil, fmt.Errorf("livekit: %w", err)
	}
	if c.GIFConf, err = loadGIFs(getenv); err != nil {
		return nil, fmt.Errorf("gifs: %w", err)
	}
	c.Session = loadSession(getenv)
	switch v := getenv("WORKFLOW_ALLOW_PRIVATE_WEBHOOKS"); v {
	case "", "0", "false":
	case "1", "true":
		c.Workflows.AllowPrivate = true
	default:
		return nil, fmt.Errorf("WORKFLOW_ALLOW_PRIVATE_WEBHOOKS must be 0 or 1, got %q", v)
	}
	switch v := getenv("PUSH_ALLOW_PRIVATE_CALLBACKS"); v {
	case "", "0", "false":
	case "1", "true":
		c.Push.AllowPrivate = true
	default:
		return nil, fmt.Errorf("PUSH_ALLOW_PRIVATE_CALLBACKS must be 0 or 1, got %q", v)
	}
	if g := c.Push.Gateway; g != "" {
		if u, err := url.Parse(g); err != nil || (u.Scheme != "https" && !(u.Scheme == "http" && c.Push.AllowPrivate)) || u.Host == "" {
			return nil, fmt.Errorf("PUSH_GATEWAY_URL must be an https URL, got %q", g)
		}
	}
	if c.Charges, err = awssdk.ChargesFromEnv(getenv); err != nil {
		return nil, err
	}
	c.Directory = loadDirectory(getenv)
	return c, nil
}

// positive reads a positive whole number; unset is 0.
func positive(getenv func(string) string, key string) (int, error) {
	v := getenv(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s must be a positive integer, got %q", key, v)
	}
	return n, nil
}

var headerRE = regexp.MustCompile(`^x-[a-z0-9-]{1,60}$`)

// loadPublicURL reads BUZZ_PUBLIC_URL: an http(s) base URL without a path.
func (c *Config) loadPublicURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("BUZZ_PUBLIC_URL must be an http(s) base URL such as https://relay.example.com, got %q", v)
	}
	if c.PublicScheme != "" && c.PublicScheme != u.Scheme {
		return fmt.Errorf("BUZZ_PUBLIC_SCHEME %q contradicts BUZZ_PUBLIC_URL %q: set only BUZZ_PUBLIC_URL", c.PublicScheme, v)
	}
	c.PublicScheme = u.Scheme
	c.PublicHost = strings.ToLower(u.Host)
	return nil
}

// duration reads a Go duration variable bounded by lo and hi.
func duration(getenv func(string) string, key string, def, lo, hi time.Duration) (time.Duration, error) {
	v := getenv(key)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		return 0, fmt.Errorf("%s must be a Go duration from %s to %s (e.g. 5s), got %q", key, lo, hi, v)
	}
	return d, nil
}
