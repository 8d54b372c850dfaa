// Package provision is the deploy-time trigger (functions/migrate), run by
// CloudFormation as a custom resource through the CDK Provider framework's
// onEvent protocol. On Create and Update it applies the migrations (a
// database ahead of them is logged and accepted, so rollbacks work),
// registers the community, makes the Owner property's key (an npub or hex,
// `make deploy OWNER=...`) the community's first NIP-86 operator while it
// has none, creates the relay's IAM database user when one is named, and
// creates the community's relay key once: 32 random bytes sealed
// by KMS under the {"community": <id>} encryption context, stored in the
// community row and never replaced. Its answer carries the key's pubkey and
// ciphertext, which the stack hands to the request-path functions. Delete
// changes nothing: data outlives the stack resource.
package provision

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"sync"

	"github.com/buzzrelay/relay/shared/aws/kmssigner"
	"github.com/buzzrelay/relay/shared/domain/owner"
	"github.com/buzzrelay/relay/shared/postgres/migrate"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/wiring/config"
	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// Event is the Provider framework's onEvent input; an empty event ({}, a
// manual run) is a Create.
type Event struct {
	RequestType        string         `json:"RequestType"`
	PhysicalResourceID string         `json:"PhysicalResourceId,omitempty"`
	ResourceProperties map[string]any `json:"ResourceProperties,omitempty"`
	// RotateRelayKey, on a manual invocation only (no RequestType), replaces
	// the community's relay key with a new one: the relay's identity
	// changes. The functions pick the new ciphertext up when the stack's
	// custom resource next runs (docs/deploy.md).
	RotateRelayKey bool `json:"RotateRelayKey,omitempty"`
}

// Response is the onEvent answer; Data holds the resource's attributes.
type Response struct {
	PhysicalResourceID string            `json:"PhysicalResourceId"`
	Data               map[string]string `json:"Data,omitempty"`
}

// Attribute names of Response.Data.
const (
	AttrVersion            = "Version"
	AttrRelayPubkey        = "RelayPubkey"
	AttrRelayKeyCiphertext = "RelayKeyCiphertext"
)

// IAMRole is the role Aurora / RDS grant to users that log in with IAM
// auth tokens; it exists only there.
const IAMRole = "rds_iam"

// KMS is what the trigger asks of KMS: seal a new key, check a stored one.
type KMS interface {
	kmssigner.EncryptAPI
	kmssigner.DecryptAPI
}

// Provisioner does the work of one Create or Update.
type Provisioner struct {
	Community string
	Host      string // BUZZ_COMMUNITY_HOST, may be empty
	// IAMUser (DB_IAM_USER) is the database user the request path logs in
	// as with IAM auth; empty: none is created.
	IAMUser string
	// KeyID is the KMS key relay keys are sealed with (RELAY_KMS_KEY_ID).
	KeyID string
	// Import (RELAY_KEY_CIPHERTEXT, optional) is an existing relay key's
	// ciphertext to adopt when the community has none stored yet (a stack
	// that kept its key elsewhere); it is checked with KMS first.
	Import string
	DSN    func(context.Context) (string, error)
	KMS    KMS
	Log    *slog.Logger
	// Refresh rewrites the communities' directory documents
	// (config.RefreshDirectory: nothing without a directory bucket); nil:
	// none kept.
	Refresh func(ctx context.Context, dsn string) error
}

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// FromConfig builds the provisioner from the migrate function's
// environment; every misconfiguration is a clear error.
func FromConfig(ctx context.Context, cfg *config.Config, log *slog.Logger) (*Provisioner, error) {
	p := &Provisioner{
		Community: cfg.DefaultCommunity,
		Host:      cfg.CommunityHost,
		IAMUser:   cfg.DBIAMUser,
		KeyID:     cfg.Key.KMSKeyID,
		Import:    cfg.Key.Ciphertext,
		DSN:       cfg.DSN,
		Log:       log,
		Refresh:   cfg.RefreshDirectory,
	}
	if p.KeyID == "" {
		return nil, errors.New("RELAY_KMS_KEY_ID is not set: the migrate trigger creates the community's relay key with this KMS key (ARN, id or alias)")
	}
	if p.IAMUser != "" && !identRE.MatchString(p.IAMUser) {
		return nil, fmt.Errorf("DB_IAM_USER must be a lowercase SQL identifier (letters, digits, _), got %q", p.IAMUser)
	}
	if p.Import != "" {
		if _, err := kmssigner.DecodeCiphertext(p.Import); err != nil {
			return nil, fmt.Errorf("RELAY_KEY_CIPHERTEXT: %w", err)
		}
	}
	k, err := cfg.KMS(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	p.KMS = k
	return p, nil
}

// PhysicalID is the custom resource's physical id for community.
func PhysicalID(community string) string { return "buzz-migrate-" + community }

// Handler is functions/migrate: it reads the environment on the first
// Create or Update (so a misconfiguration reaches CloudFormation as the
// resource's failure reason) and answers Delete without touching anything,
// so a failed stack always rolls back and deletes cleanly.
func Handler(log *slog.Logger) func(context.Context, Event) (Response, error) {
	var once sync.Once
	var p *Provisioner
	var perr error
	return func(ctx context.Context, ev Event) (Response, error) {
		if ev.RequestType == "Delete" {
			community := "default"
			if cfg, err := config.FromEnv(); err == nil {
				community = cfg.DefaultCommunity
			}
			return deleted(ctx, log, ev, community), nil
		}
		once.Do(func() {
			cfg, err := config.FromEnv()
			if err != nil {
				perr = fmt.Errorf("migrate: config: %w", err)
				return
			}
			p, perr = FromConfig(ctx, cfg, log)
		})
		if perr != nil {
			return Response{}, perr
		}
		return p.Handle(ctx, ev)
	}
}

// Handle serves one onEvent request.
func (p *Provisioner) Handle(ctx context.Context, ev Event) (Response, error) {
	switch ev.RequestType {
	case "Delete":
		return deleted(ctx, p.Log, ev, p.Community), nil
	case "", "Create", "Update":
		if ev.RotateRelayKey && ev.RequestType != "" {
			return Response{}, errors.New("migrate: RotateRelayKey is for a manual invocation only, never a CloudFormation request")
		}
	default:
		return Response{}, fmt.Errorf("migrate: unknown RequestType %q (want Create, Update or Delete)", ev.RequestType)
	}
	raw, _ := ev.ResourceProperties[lambdas.PropOwner].(string)
	ownerKey, err := owner.Parse(raw)
	if err != nil {
		return Response{}, fmt.Errorf("migrate: property %s: %w", lambdas.PropOwner, err)
	}
	dsn, err := p.DSN(ctx)
	if err != nil {
		return Response{}, fmt.Errorf("migrate: database: %w", err)
	}
	res, err := migrate.Run(ctx, dsn, p.Log)
	if err != nil {
		return Response{}, err
	}
	if err := migrate.EnsureCommunity(ctx, dsn, p.Community, p.Host); err != nil {
		return Response{}, err
	}
	st, err := store.Open(ctx, dsn, store.Options{MaxConns: 1})
	if err != nil {
		return Response{}, fmt.Errorf("migrate: %w", err)
	}
	defer st.Close()
	if p.IAMUser != "" {
		if err := EnsureIAMUser(ctx, st, p.IAMUser); err != nil {
			return Response{}, err
		}
	}
	if err := p.EnsureOwner(ctx, st, ownerKey); err != nil {
		return Response{}, err
	}
	key, err := p.EnsureRelayKey(ctx, st, ev.RotateRelayKey)
	if err != nil {
		return Response{}, err
	}
	if p.Refresh != nil {
		if err := p.Refresh(ctx, dsn); err != nil {
			return Response{}, fmt.Errorf("migrate: %w", err)
		}
	}
	p.Log.InfoContext(ctx, "migrate: done", "version", res.Version, "ahead", res.Ahead,
		"community", p.Community, "relay_pubkey", key.Pubkey, "relay_key_created", key.Created, "iam_user", p.IAMUser,
		"owner", ownerKey)
	return Response{PhysicalResourceID: PhysicalID(p.Community), Data: map[string]string{
		AttrVersion:            strconv.Itoa(int(res.Version)),
		AttrRelayPubkey:        key.Pubkey,
		AttrRelayKeyCiphertext: kmssigner.EncodeCiphertext(key.Ciphertext),
	}}, nil
}

// EnsureOwner makes pk (the Owner property's key, owner.Parse; "" none)
// the community's first operator: only while the community has no
// operator, so a redeploy never undoes what its operators changed since
// through NIP-86 (addoperator, removeoperator).
func (p *Provisioner) EnsureOwner(ctx context.Context, st *store.Store, pk string) error {
	if pk == "" {
		return nil
	}
	set, err := st.OperatorsInsertFirst(ctx, p.Community, pk)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if !set {
		p.Log.InfoContext(ctx, "migrate: the community has operators already; the owner is changed through NIP-86 (addoperator, removeoperator)",
			"community", p.Community, "owner", pk)
	}
	return nil
}

// deleted answers Delete: nothing is dropped, the resource's id is kept.
func deleted(ctx context.Context, log *slog.Logger, ev Event, community string) Response {
	id := ev.PhysicalResourceID
	if id == "" {
		id = PhysicalID(community)
	}
	log.InfoContext(ctx, "migrate: delete changes nothing", "physical_id", id)
	return Response{PhysicalResourceID: id}
}

// EnsureIAMUser creates user (LOGIN) unless it exists, grants it rds_iam
// when that role exists (Aurora), and the privileges the relay needs: DML on
// every table and sequence of schema public, now and for tables later
// migrations create. It never grants DDL.
func EnsureIAMUser(ctx context.Context, st *store.Store, user string) error {
	if !identRE.MatchString(user) {
		return fmt.Errorf("migrate: invalid database user name %q", user)
	}
	if err := st.LoginRolesEnsure(ctx, user, IAMRole); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// RelayKey is the community's stored relay key.
type RelayKey struct {
	Ciphertext []byte
	Pubkey     string
	// Created is true when this run made (or imported) it.
	Created bool
}

// EnsureRelayKey returns the community's relay key, creating it when none is
// stored. A stored key is never replaced unless rotate says so; it is
// decrypted with KMS on every run, so a key the functions could not decrypt
// fails the deploy here, with its reason, instead of every cold start.
func (p *Provisioner) EnsureRelayKey(ctx context.Context, st *store.Store, rotate bool) (RelayKey, error) {
	k, err := storedKey(ctx, st, p.Community)
	if err != nil {
		return RelayKey{}, err
	}
	if k.Ciphertext == nil || rotate {
		if rotate {
			p.Log.WarnContext(ctx, "migrate: rotating the relay key: the relay's identity changes", "community", p.Community, "old_pubkey", k.Pubkey)
		}
		ct, pub, err := p.newKey(ctx, rotate)
		if err != nil {
			return RelayKey{}, err
		}
		created, err := st.CommunitiesPutRelayKey(ctx, p.Community, ct, pub, rotate)
		if err != nil {
			return RelayKey{}, fmt.Errorf("migrate: %w", err)
		}
		// Another run may have stored its key first: that one stands.
		if k, err = storedKey(ctx, st, p.Community); err != nil {
			return RelayKey{}, err
		}
		k.Created = created
	}
	sk, err := kmssigner.Load(ctx, p.KMS, k.Ciphertext, p.KeyID, p.Community)
	if err != nil {
		return RelayKey{}, fmt.Errorf("migrate: the stored relay key of community %q cannot be decrypted with RELAY_KMS_KEY_ID %s (it is never replaced automatically: restore access to its KMS key, or rotate it deliberately with localdev/relaykey): %w",
			p.Community, p.KeyID, err)
	}
	if sk.PublicKey() != k.Pubkey {
		return RelayKey{}, fmt.Errorf("migrate: the stored relay key of community %q decrypts to pubkey %s, but the row says %s", p.Community, sk.PublicKey(), k.Pubkey)
	}
	return k, nil
}

// newKey seals a fresh secret, or checks and adopts Import (not when
// rotating).
func (p *Provisioner) newKey(ctx context.Context, rotate bool) (ct []byte, pub string, err error) {
	if p.Import != "" && !rotate {
		ct, err := kmssigner.DecodeCiphertext(p.Import)
		if err != nil {
			return nil, "", fmt.Errorf("RELAY_KEY_CIPHERTEXT: %w", err)
		}
		sk, err := kmssigner.Load(ctx, p.KMS, ct, p.KeyID, p.Community)
		if err != nil {
			return nil, "", fmt.Errorf("migrate: RELAY_KEY_CIPHERTEXT to import: %w", err)
		}
		return ct, sk.PublicKey(), nil
	}
	secret, err := kmssigner.NewSecret()
	if err != nil {
		return nil, "", err
	}
	defer clear(secret)
	if pub, err = kmssigner.PublicKey(secret); err != nil {
		return nil, "", err
	}
	if ct, err = kmssigner.Seal(ctx, p.KMS, p.KeyID, p.Community, secret); err != nil {
		return nil, "", fmt.Errorf("migrate: %w", err)
	}
	return ct, pub, nil
}

func storedKey(ctx context.Context, st *store.Store, community string) (RelayKey, error) {
	ct, pub, err := st.CommunitiesGetRelayKey(ctx, community)
	if err != nil {
		return RelayKey{}, fmt.Errorf("migrate: %w", err)
	}
	return RelayKey{Ciphertext: ct, Pubkey: pub}, nil
}
