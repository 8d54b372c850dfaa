package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
)

// Settings are the synth-time choices, read from CDK context (cdk.json or
// `cdk synth -c key=value`). Deploy-time knobs (Aurora capacity) are
// CloudFormation parameters instead, see NewRelayStack.
type Settings struct {
	// Community names the relay (BUZZ_COMMUNITY) and is the KMS encryption
	// context of its key: context "community", default "default".
	Community string
	// StackName, default "BuzzRelay-<community with . as ->".
	StackName string
	// AssetDir holds <fn>.zip for every function (make build writes
	// ../build): context "assetDir", relative to infra/.
	AssetDir string
	// Egress is how functions in the VPC reach PostToConnection, KMS, SSM
	// and Secrets Manager: "nat-gateway" (default) or "nat-instance".
	Egress string
	// KMSEndpoint adds a KMS interface endpoint so key traffic never leaves
	// the VPC (context "kmsEndpoint": true; costs extra, see docs/deploy.md).
	KMSEndpoint bool
	// RelayKeyCiphertext, when set (base64), is put in the functions'
	// environment instead of reading the SSM parameter at cold start.
	RelayKeyCiphertext string
	// RelayKeyRevision (context "relayKeyRevision", default "1") is put in
	// the signing functions' environment as RELAY_KEY_REVISION. The code
	// ignores it; changing it after a key rotation makes every function
	// start fresh instances, which read the new ciphertext.
	RelayKeyRevision string
	// LogRetention for every function's log group (context
	// "logRetentionDays", default 30).
	LogRetention awslogs.RetentionDays
	// LogLevel is LOG_LEVEL of the functions (default "info").
	LogLevel string
	// AlarmEmail, when set, subscribes to the alarm topic.
	AlarmEmail string
	// DeletionProtection of the Aurora cluster (context
	// "deletionProtection", default true).
	DeletionProtection bool
}

// Slug is the community in the characters every AWS name accepts.
func (s Settings) Slug() string { return strings.ReplaceAll(s.Community, ".", "-") }

// RelayKeyParameter is the SSM parameter holding the relay key ciphertext.
func (s Settings) RelayKeyParameter() string { return "/buzz/" + s.Community + "/relay-key" }

var (
	communityRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,40}[a-z0-9])?$`)
	retention   = map[int]awslogs.RetentionDays{
		1: awslogs.RetentionDays_ONE_DAY, 3: awslogs.RetentionDays_THREE_DAYS, 5: awslogs.RetentionDays_FIVE_DAYS,
		7: awslogs.RetentionDays_ONE_WEEK, 14: awslogs.RetentionDays_TWO_WEEKS, 30: awslogs.RetentionDays_ONE_MONTH,
		60: awslogs.RetentionDays_TWO_MONTHS, 90: awslogs.RetentionDays_THREE_MONTHS, 180: awslogs.RetentionDays_SIX_MONTHS,
		365: awslogs.RetentionDays_ONE_YEAR,
	}
)

// SettingsFrom reads and checks the context of node (the App).
func SettingsFrom(node constructs.Node) (Settings, error) {
	str := func(key, def string) string {
		v := node.TryGetContext(&key)
		if v == nil {
			return def
		}
		return fmt.Sprint(v)
	}
	boolean := func(key string, def bool) (bool, error) {
		v := str(key, strconv.FormatBool(def))
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("context %s must be true or false, got %q", key, v)
		}
		return b, nil
	}
	s := Settings{
		Community:          str("community", "default"),
		AssetDir:           str("assetDir", "../build"),
		Egress:             str("egress", "nat-gateway"),
		RelayKeyCiphertext: str("relayKeyCiphertext", ""),
		RelayKeyRevision:   str("relayKeyRevision", "1"),
		LogLevel:           str("logLevel", "info"),
		AlarmEmail:         str("alarmEmail", ""),
	}
	if !communityRE.MatchString(s.Community) {
		return s, fmt.Errorf("context community %q: use lower-case letters, digits, '.' and '-' (at most 42)", s.Community)
	}
	s.StackName = str("stackName", "BuzzRelay-"+s.Slug())
	switch s.Egress {
	case "nat-gateway", "nat-instance":
	default:
		return s, fmt.Errorf("context egress must be nat-gateway or nat-instance, got %q", s.Egress)
	}
	var err error
	if s.KMSEndpoint, err = boolean("kmsEndpoint", false); err != nil {
		return s, err
	}
	if s.DeletionProtection, err = boolean("deletionProtection", true); err != nil {
		return s, err
	}
	days, err := strconv.Atoi(str("logRetentionDays", "30"))
	if err != nil || retention[days] == "" {
		return s, fmt.Errorf("context logRetentionDays must be one of 1 3 5 7 14 30 60 90 180 365, got %q", str("logRetentionDays", "30"))
	}
	s.LogRetention = retention[days]
	switch s.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return s, fmt.Errorf("context logLevel must be debug, info, warn or error, got %q", s.LogLevel)
	}
	if s.RelayKeyCiphertext != "" {
		if _, err := base64.StdEncoding.DecodeString(s.RelayKeyCiphertext); err != nil {
			return s, fmt.Errorf("context relayKeyCiphertext is not base64: %w", err)
		}
	}
	if !regexp.MustCompile(`^[0-9A-Za-z._-]{1,32}$`).MatchString(s.RelayKeyRevision) {
		return s, fmt.Errorf("context relayKeyRevision %q: use 1-32 letters, digits, '.', '_' or '-'", s.RelayKeyRevision)
	}
	if s.AssetDir, err = filepath.Abs(s.AssetDir); err != nil {
		return s, fmt.Errorf("context assetDir: %w", err)
	}
	if st, err := os.Stat(s.AssetDir); err != nil || !st.IsDir() {
		return s, fmt.Errorf("asset directory %s does not exist: run `make build` first (or pass -c assetDir=DIR)", s.AssetDir)
	}
	return s, nil
}
