package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"

	"github.com/buzzrelay/relay/shared/domain/owner"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// Settings are the synth-time choices, read from CDK context (cdk.json or
// `cdk synth -c key=value`). A profile gives every choice a default; any
// -c key still overrides it. Deploy-time knobs (Aurora capacity) are
// CloudFormation parameters instead, see NewRelayStack.
type Settings struct {
	// Profile is "community" (default: costs nothing idle beyond storage,
	// the key and the master secret) or "managed" (NAT gateway, deletion
	// protection, retained data, long logs, alarms).
	Profile string
	// Community names the relay (BUZZ_COMMUNITY) and is the KMS encryption
	// context of its key: context "community", default "default".
	Community string
	// StackName, default "BuzzRelay-<community with . as ->".
	StackName string
	// AssetDir holds <fn>.zip for every function (make build writes
	// ../build): context "assetDir", relative to infra/.
	AssetDir string
	// Egress is how functions in the VPC reach KMS, Secrets Manager and
	// the WebSocket management API: "ipv6" (dual-stack VPC, egress-only
	// internet gateway, no hourly charge), "nat-gateway" or "nat-instance".
	Egress string
	// KMSEndpoint adds a KMS interface endpoint so key traffic never leaves
	// the VPC (context "kmsEndpoint": true; costs extra, see docs/deploy.md).
	KMSEndpoint bool
	// DBAuth is how the request-path functions log in to Postgres: "iam"
	// (default: a token signed locally, rds-db:connect on DBUser) or
	// "secret" (read the master secret from Secrets Manager).
	DBAuth string
	// RelayKeyRevision (context "relayKeyRevision", default "1") is a
	// property of the migrate custom resource and RELAY_KEY_REVISION of
	// the signing functions: changing it after a key rotation re-runs
	// migrate (which returns the stored ciphertext) and restarts them.
	RelayKeyRevision string
	// KeyRotation turns on the yearly rotation of the KMS key material
	// (context "keyRotation"; managed: true, community: false, since each
	// of the first two rotations adds $1/month to an idle bill).
	KeyRotation bool
	// RetainData keeps the Aurora cluster itself when the stack is
	// deleted or it is replaced (RetainExceptOnCreate: a failed first
	// create still removes it). Context "retainData"; managed: true.
	// Without it the cluster leaves a final snapshot. Either way the KMS
	// key and the master secret are kept, since the data needs them.
	RetainData bool
	// LogRetention for every function's log group (context
	// "logRetentionDays"; community 7, managed 90).
	LogRetention awslogs.RetentionDays
	// LogLevel is LOG_LEVEL of the functions (default "info").
	LogLevel string
	// Alarms creates the SNS topic and the CloudWatch alarms (context
	// "alarms"; managed: true). AlarmEmail, when set, subscribes to it.
	Alarms     bool
	AlarmEmail string
	// DeletionProtection of the Aurora cluster (context
	// "deletionProtection"; managed: true).
	DeletionProtection bool
	// Stage throttles (steady requests per second and burst) of the HTTP
	// API and of the WebSocket API (messages, $connect included).
	HTTPRate, HTTPBurst, WSRate, WSBurst float64
	// ReservedConcurrency, when > 0, is reserved for (and caps) every
	// request-path function: it bounds the database connections, see
	// docs/deploy.md "Connection budget".
	ReservedConcurrency int
	// BudgetUSD, when > 0, creates a monthly AWS Budgets cost budget that
	// notifies the alarm topic (and AlarmEmail) at 80% actual and 100%
	// forecast (context "budgetUSD"; community 10, managed 100).
	BudgetUSD float64
	// DBAwakeHours (context "dbAwakeHours", default 6): the db-awake-hours
	// alarm fires when Aurora stayed awake for whole hours on more than
	// this many of the last 24 (alarms.go).
	DBAwakeHours int
	// Domain and CertificateArn (an ACM certificate in us-east-1 for it):
	// a CloudFront distribution serves both APIs on https://Domain and
	// wss://Domain, and BUZZ_PUBLIC_URL is https://Domain.
	Domain, CertificateArn string
	// PushGateway (-c pushGateway=https://...) and PushProfiles (-c
	// pushProfiles=buzz-ios-production=apns) turn NIP-PL leases on
	// (docs/push.md); NIP-9a is always served.
	PushGateway, PushProfiles string
	// LiveKitSecret (-c livekitSecret=arn:aws:secretsmanager:...) is the
	// complete ARN of a Secrets Manager secret the operator made with the
	// LiveKit server's {"url", "api_key", "api_secret"}: NIP-29 LiveKit
	// rooms are served (docs/configuration.md). Empty: off.
	LiveKitSecret string
	// GIFs (-c gifs=true) deploys Buzz's GIF proxy: a Secrets Manager
	// secret holding the KLIPY key (its value the NoEcho parameter
	// KlipyApiKey, given once with --parameters and kept by later
	// deploys), read by the function that serves /gifs/* at cold start,
	// and the /gifs/* routes. Off (the default): no secret, no route, and
	// NIP-11 does not advertise GIFs.
	GIFs bool
	// RelayKMSKey (-c relayKmsKey=arn:aws:kms:...) is the complete ARN of
	// a KMS key a deleted stack of this community left behind: the stack
	// uses it instead of creating a key, so a database restored from that
	// stack's snapshot (the DbRestoreSnapshot parameter) opens its relay
	// keys. Empty: the stack creates its key (docs/deploy.md, "Backups and
	// restore").
	RelayKMSKey string
	// Hostnames (-c hostnames=a.example.com,*.example.org) are more names
	// the distribution answers on, one community each (registered with
	// `localdev/community add`); the certificate must cover them. The
	// functions then read the addressed host from HostHeader (CloudFront's
	// router copies the viewer's Host into it) instead of BUZZ_PUBLIC_URL,
	// and a $connect authorizer carries it to every WebSocket event.
	Hostnames []string
	// Owner (context "owner", `make deploy OWNER=...`: an npub or 64 hex
	// characters, kept as hex) becomes the default community's first
	// NIP-86 operator through the migrate custom resource's Owner
	// property, while the community has none; later changes are NIP-86
	// calls (addoperator, removeoperator). "" names none.
	Owner string
	// Media deploys the media bucket, its routes and grants (context
	// "media", default true; false leaves MEDIA_BUCKET unset: media off).
	// The limits below are the functions' MEDIA_* variables (context
	// mediaMaxBytes, mediaDirectMaxBytes, mediaKeyBytesPerDay,
	// mediaCommunityBytesStored, mediaPresignTTL; defaults in media.go).
	Media                                                   bool
	MediaMaxBytes, MediaDirectMaxBytes, MediaKeyBytesPerDay int64
	MediaCommunityBytesStored                               int64
	MediaPresignTTL                                         string
}

// Slug is the community in the characters every AWS name accepts.
func (s Settings) Slug() string { return strings.ReplaceAll(s.Community, ".", "-") }

// KeyAlias is the KMS alias of the relay key's KMS key. Alias names are
// unique in an account and region, so it is named by the stack, never by
// the community alone: two stacks of one community (a staging copy, -c
// stackName) must not collide. Budgets are named the same way (plus the
// region: budget names are unique in the whole account).
func (s Settings) KeyAlias() string { return "alias/" + s.StackName + "/relay-key" }

// PublicURL is BUZZ_PUBLIC_URL: empty without a domain, or with several
// hostnames (each request's own host is then used).
func (s Settings) PublicURL() string {
	if s.Domain == "" || len(s.Hostnames) > 0 {
		return ""
	}
	return "https://" + s.Domain
}

// throttlesJSON holds the stage throttles' defaults, the one copy both
// this stack and the localdev emulator (APIGW_THROTTLES=on) read.
//
//go:embed throttles.json
var throttlesJSON []byte

// defaultThrottles are throttles.json's values by context key.
var defaultThrottles = func() map[string]float64 {
	m := map[string]float64{}
	if err := json.Unmarshal(throttlesJSON, &m); err != nil {
		panic("infra: throttles.json: " + err.Error())
	}
	return m
}()

// profiles are the defaults of each profile, as context values.
var profiles = map[string]map[string]string{
	"community": {
		"egress": "ipv6", "deletionProtection": "false", "retainData": "false", "keyRotation": "false",
		"logRetentionDays": "7", "alarms": "false", "media": "true", "budgetUSD": "10",
	},
	"managed": {
		"egress": "nat-gateway", "deletionProtection": "true", "retainData": "true", "keyRotation": "true",
		"logRetentionDays": "90", "alarms": "true", "media": "true", "budgetUSD": "100",
	},
}

var (
	communityRE     = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,40}[a-z0-9])?$`)
	domainRE        = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)
	kmsKeyRE        = regexp.MustCompile(`^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[0-9a-f-]{36}$`)
	livekitSecretRE = regexp.MustCompile(`^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$`)
	certRE          = regexp.MustCompile(`^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate/[0-9a-f-]{36}$`)
	emailRE         = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
	retention       = map[int]awslogs.RetentionDays{
		1: awslogs.RetentionDays_ONE_DAY, 3: awslogs.RetentionDays_THREE_DAYS, 5: awslogs.RetentionDays_FIVE_DAYS,
		7: awslogs.RetentionDays_ONE_WEEK, 14: awslogs.RetentionDays_TWO_WEEKS, 30: awslogs.RetentionDays_ONE_MONTH,
		60: awslogs.RetentionDays_TWO_MONTHS, 90: awslogs.RetentionDays_THREE_MONTHS, 180: awslogs.RetentionDays_SIX_MONTHS,
		365: awslogs.RetentionDays_ONE_YEAR,
	}
)

// SettingsFrom reads and checks the context of node (the App).
func SettingsFrom(node constructs.Node) (Settings, error) {
	raw := func(key string) (string, bool) {
		v := node.TryGetContext(&key)
		if v == nil {
			return "", false
		}
		return fmt.Sprint(v), true
	}
	profile, _ := raw("profile")
	if profile == "" {
		profile = "community"
	}
	defaults, ok := profiles[profile]
	if !ok {
		return Settings{}, fmt.Errorf("context profile must be community or managed, got %q", profile)
	}
	str := func(key, def string) string {
		if v, ok := raw(key); ok {
			return v
		}
		if v, ok := defaults[key]; ok {
			return v
		}
		return def
	}
	boolean := func(key string) (bool, error) {
		v := str(key, "false")
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("context %s must be true or false, got %q", key, v)
		}
		return b, nil
	}
	number := func(key string, def, min, max float64) (float64, error) {
		v := str(key, strconv.FormatFloat(def, 'f', -1, 64))
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < min || f > max {
			return 0, fmt.Errorf("context %s must be a number from %g to %g, got %q", key, min, max, v)
		}
		return f, nil
	}
	s := Settings{
		Profile:          profile,
		Community:        str("community", "default"),
		AssetDir:         str("assetDir", "../build"),
		Egress:           str("egress", ""),
		DBAuth:           str("dbAuth", "iam"),
		RelayKeyRevision: str("relayKeyRevision", "1"),
		LogLevel:         str("logLevel", "info"),
		AlarmEmail:       str("alarmEmail", ""),
		Domain:           str("domain", ""),
		PushGateway:      str("pushGateway", ""),
		PushProfiles:     str("pushProfiles", ""),
		LiveKitSecret:    str("livekitSecret", ""),
		CertificateArn:   str("certificateArn", ""),
		RelayKMSKey:      str("relayKmsKey", ""),
	}
	if s.RelayKMSKey != "" && !kmsKeyRE.MatchString(s.RelayKMSKey) {
		return Settings{}, fmt.Errorf("context relayKmsKey must be a KMS key's complete ARN (arn:aws:kms:<region>:<account>:key/<id>, the retained key `make destroy` listed), got %q", s.RelayKMSKey)
	}
	for _, h := range strings.Split(str("hostnames", ""), ",") {
		if h = strings.TrimSpace(h); h != "" {
			s.Hostnames = append(s.Hostnames, h)
		}
	}
	if s.LiveKitSecret != "" && !livekitSecretRE.MatchString(s.LiveKitSecret) {
		return Settings{}, fmt.Errorf("context livekitSecret must be a Secrets Manager secret's complete ARN, got %q", s.LiveKitSecret)
	}
	if !communityRE.MatchString(s.Community) {
		return s, fmt.Errorf("context community %q: use lower-case letters, digits, '.' and '-' (at most 42)", s.Community)
	}
	s.StackName = str("stackName", "BuzzRelay-"+s.Slug())
	var err error
	if s.Owner, err = owner.Parse(str("owner", "")); err != nil {
		return s, fmt.Errorf("context owner: %w", err)
	}
	switch s.Egress {
	case "ipv6", "nat-gateway", "nat-instance":
	default:
		return s, fmt.Errorf("context egress must be ipv6, nat-gateway or nat-instance, got %q", s.Egress)
	}
	switch s.DBAuth {
	case "iam", "secret":
	default:
		return s, fmt.Errorf("context dbAuth must be iam or secret, got %q", s.DBAuth)
	}
	if _, ok := raw("relayKeyCiphertext"); ok {
		return s, fmt.Errorf("context relayKeyCiphertext is no longer read: the deploy creates the relay key and stores its ciphertext in the database (see docs/deploy.md, The relay key)")
	}
	for key, dst := range map[string]*bool{
		"kmsEndpoint": &s.KMSEndpoint, "deletionProtection": &s.DeletionProtection, "retainData": &s.RetainData,
		"keyRotation": &s.KeyRotation, "alarms": &s.Alarms, "media": &s.Media,
		"gifs": &s.GIFs,
	} {
		if *dst, err = boolean(key); err != nil {
			return s, err
		}
	}
	days, err := strconv.Atoi(str("logRetentionDays", ""))
	if err != nil || retention[days] == "" {
		return s, fmt.Errorf("context logRetentionDays must be one of 1 3 5 7 14 30 60 90 180 365, got %q", str("logRetentionDays", ""))
	}
	s.LogRetention = retention[days]
	switch s.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return s, fmt.Errorf("context logLevel must be debug, info, warn or error, got %q", s.LogLevel)
	}
	if !regexp.MustCompile(`^[0-9A-Za-z._-]{1,32}$`).MatchString(s.RelayKeyRevision) {
		return s, fmt.Errorf("context relayKeyRevision %q: use 1-32 letters, digits, '.', '_' or '-'", s.RelayKeyRevision)
	}
	for _, n := range []struct {
		key           string
		dst           *float64
		def, min, max float64
	}{
		{"httpThrottleRate", &s.HTTPRate, defaultThrottles["httpThrottleRate"], 1, 10000},
		{"httpThrottleBurst", &s.HTTPBurst, defaultThrottles["httpThrottleBurst"], 1, 5000},
		{"wsThrottleRate", &s.WSRate, defaultThrottles["wsThrottleRate"], 1, 10000},
		{"wsThrottleBurst", &s.WSBurst, defaultThrottles["wsThrottleBurst"], 1, 5000},
		{"budgetUSD", &s.BudgetUSD, 0, 0, 1e6},
	} {
		if *n.dst, err = number(n.key, n.def, n.min, n.max); err != nil {
			return s, err
		}
	}
	rc, err := number("reservedConcurrency", 0, 0, 1000)
	if err != nil || rc != float64(int(rc)) {
		return s, fmt.Errorf("context reservedConcurrency must be a whole number from 0 (none) to 1000, got %q", str("reservedConcurrency", "0"))
	}
	s.ReservedConcurrency = int(rc)
	if err := s.readMedia(str); err != nil {
		return s, err
	}
	if s.AlarmEmail != "" && !emailRE.MatchString(s.AlarmEmail) {
		return s, fmt.Errorf("context alarmEmail %q is not an email address", s.AlarmEmail)
	}
	hours, err := number("dbAwakeHours", 6, 1, 23)
	if err != nil || hours != float64(int(hours)) {
		return s, fmt.Errorf("context dbAwakeHours must be a whole number of hours from 1 to 23, got %q", str("dbAwakeHours", "6"))
	}
	s.DBAwakeHours = int(hours)
	if (s.Domain == "") != (s.CertificateArn == "") {
		return s, fmt.Errorf("context domain and certificateArn go together (an ACM certificate in us-east-1 for the domain)")
	}
	for _, h := range s.Hostnames {
		if s.Domain == "" {
			return s, errors.New("context hostnames needs domain and certificateArn: the names are served by the CloudFront distribution")
		}
		if !domainRE.MatchString(strings.TrimPrefix(h, "*.")) || h == s.Domain {
			return s, fmt.Errorf("context hostnames: %q is not a lower-case host name (or *.name) other than domain", h)
		}
	}
	if s.Domain != "" && !domainRE.MatchString(s.Domain) {
		return s, fmt.Errorf("context domain %q is not a lower-case host name", s.Domain)
	}
	if s.CertificateArn != "" && !certRE.MatchString(s.CertificateArn) {
		return s, fmt.Errorf("context certificateArn %q: want an ACM certificate ARN in us-east-1 (CloudFront reads certificates only there)", s.CertificateArn)
	}
	if s.AssetDir, err = filepath.Abs(s.AssetDir); err != nil {
		return s, fmt.Errorf("context assetDir: %w", err)
	}
	if st, err := os.Stat(s.AssetDir); err != nil || !st.IsDir() {
		return s, fmt.Errorf("asset directory %s does not exist: run `make build` first (or pass -c assetDir=DIR)", s.AssetDir)
	}
	return s, nil
}

// readMedia reads and checks the media limits (see media.go).
func (s *Settings) readMedia(str func(key, def string) string) error {
	whole := func(key string, def, min, max int64) (int64, error) {
		v := str(key, strconv.FormatInt(def, 10))
		// JSON context numbers arrive as float64 (1e+08): accept any
		// whole number in range.
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f != math.Trunc(f) || f < float64(min) || f > float64(max) {
			return 0, fmt.Errorf("context %s must be a whole number of bytes from %d to %d, got %q", key, min, max, v)
		}
		return int64(f), nil
	}
	var err error
	if s.MediaMaxBytes, err = whole("mediaMaxBytes", DefaultMediaMaxBytes, 1, MediaMaxCeiling); err != nil {
		return err
	}
	if s.MediaDirectMaxBytes, err = whole("mediaDirectMaxBytes", DefaultMediaDirectMaxBytes, 1, MediaDirectCeiling); err != nil {
		return fmt.Errorf("%w (a larger body would pass Lambda's 6 MB payload once base64-encoded)", err)
	}
	if s.MediaDirectMaxBytes > s.MediaMaxBytes {
		return fmt.Errorf("context mediaDirectMaxBytes (%d) cannot exceed mediaMaxBytes (%d)", s.MediaDirectMaxBytes, s.MediaMaxBytes)
	}
	if s.MediaKeyBytesPerDay, err = whole("mediaKeyBytesPerDay", DefaultMediaKeyBytesPerDay, 1, math.MaxInt64/2); err != nil {
		return err
	}
	if s.MediaCommunityBytesStored, err = whole("mediaCommunityBytesStored", DefaultMediaCommunityBytesStored, 1, math.MaxInt64/2); err != nil {
		return err
	}
	s.MediaPresignTTL = str("mediaPresignTTL", DefaultMediaPresignTTL)
	if d, err := time.ParseDuration(s.MediaPresignTTL); err != nil || d < time.Minute || d > time.Hour {
		return fmt.Errorf("context mediaPresignTTL must be a Go duration from 1m to 1h, got %q", s.MediaPresignTTL)
	}
	return nil
}

// lambdaSettings are the choices the functions' environment depends on
// (lambdas.Environment).
func (s Settings) lambdaSettings() lambdas.Settings {
	return lambdas.Settings{
		Community: s.Community, LogLevel: s.LogLevel,
		DBAuth: s.DBAuth, Egress: s.Egress, KMSEndpoint: s.KMSEndpoint,
		RelayKeyRevision: s.RelayKeyRevision, Owner: s.Owner,
		Domain: s.Domain, PublicURL: s.PublicURL(), Hostnames: len(s.Hostnames) > 0,
		Media: s.Media, PushGateway: s.PushGateway, PushProfiles: s.PushProfiles,
		LiveKit: s.LiveKitSecret != "",
		GIFs:    s.GIFs,
		MediaLimits: lambdas.MediaLimits{
			MaxBytes: s.MediaMaxBytes, DirectMaxBytes: s.MediaDirectMaxBytes,
			KeyBytesPerDay: s.MediaKeyBytesPerDay, CommunityBytesStored: s.MediaCommunityBytesStored,
			PresignTTL: s.MediaPresignTTL,
		},
	}
}
