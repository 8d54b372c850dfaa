package community

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/kmssigner"
	"github.com/buzzrelay/relay/shared/reject"
)

// DB is a pool or connection the operator commands run on.
type DB interface {
	Querier
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Spec is a community to create.
type Spec struct {
	ID        string
	Hosts     []string
	Name      string
	About     string
	Picture   string
	Operators []string
}

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
var hostRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$|^[0-9a-f:]+$`)

// CheckID accepts a community id: lowercase letters, digits, _ and -.
func CheckID(id string) error {
	if !idRE.MatchString(id) {
		return reject.Invalidf("community id must be 1-63 lowercase letters, digits, _ or -, starting with a letter or digit, got %q", id)
	}
	return nil
}

// CheckHost normalises a hostname (no scheme, path or port).
func CheckHost(h string) (string, error) {
	n := NormalizeHost(h)
	if strings.ContainsAny(h, "/@?#") || !hostRE.MatchString(n) {
		return "", reject.Invalidf("hostname %q is not a DNS name or IP address (no scheme, path or port)", h)
	}
	return n, nil
}

// CheckPicture accepts an empty or http(s) URL.
func CheckPicture(p string) error {
	if p == "" {
		return nil
	}
	u, err := url.Parse(p)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return reject.Invalidf("icon must be an http(s) URL, got %q", p)
	}
	return nil
}

// CheckPubkey accepts a 64-character lowercase hex pubkey.
func CheckPubkey(pk string) error {
	if !nostr.IsValid32ByteHex(pk) {
		return reject.Invalidf("pubkey must be 64 lowercase hex characters, got %q", pk)
	}
	return nil
}

const maxText = 2000

func (s *Spec) check() error {
	if err := CheckID(s.ID); err != nil {
		return err
	}
	if len(s.Hosts) == 0 {
		return reject.Invalidf("community %q needs at least one hostname", s.ID)
	}
	for i, h := range s.Hosts {
		n, err := CheckHost(h)
		if err != nil {
			return err
		}
		s.Hosts[i] = n
	}
	if s.Name == "" {
		s.Name = s.ID
	}
	if len(s.Name) > 200 || len(s.About) > maxText {
		return reject.Invalidf("name is at most 200 bytes and about at most %d", maxText)
	}
	if err := CheckPicture(s.Picture); err != nil {
		return err
	}
	for _, op := range s.Operators {
		if err := CheckPubkey(op); err != nil {
			return err
		}
	}
	if s.Operators == nil {
		s.Operators = []string{}
	}
	return nil
}

// Create stores a new community with its hostnames and a new relay key
// sealed for it, in one transaction; it answers the key's pubkey. A taken
// id or hostname is an invalid: error and changes nothing.
func Create(ctx context.Context, db DB, sealer Sealer, s Spec) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	pub, ct, err := newKey(ctx, sealer, s.ID)
	if err != nil {
		return "", err
	}
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO communities (id, name, about, picture, operators, relay_key_ciphertext, relay_pubkey)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, s.ID, s.Name, s.About, s.Picture, s.Operators, ct, pub); err != nil {
			return taken(err, "community id "+s.ID)
		}
		for _, h := range s.Hosts {
			if _, err := tx.Exec(ctx, `INSERT INTO community_hosts (host, community_id) VALUES ($1, $2)`, h, s.ID); err != nil {
				return taken(err, "hostname "+h)
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return pub, nil
}

// newKey makes a relay key for community id: its pubkey and its secret
// sealed for id (the plaintext is cleared before it returns).
func newKey(ctx context.Context, sealer Sealer, id string) (string, []byte, error) {
	secret, err := kmssigner.NewSecret()
	if err != nil {
		return "", nil, err
	}
	defer clear(secret)
	pub, err := kmssigner.PublicKey(secret)
	if err != nil {
		return "", nil, err
	}
	ct, err := sealer.Seal(ctx, id, secret)
	if err != nil {
		return "", nil, fmt.Errorf("community %s: %w", id, err)
	}
	return pub, ct, nil
}

func taken(err error, what string) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "23505" {
		return reject.Invalidf("%s is already taken", what)
	}
	return fmt.Errorf("community: %w", err)
}

// ErrNoCommunity is returned for an unknown community id.
var ErrNoCommunity = errors.New("community: no such community")

// one runs a statement that must change community id's row.
func one(ctx context.Context, q Querier, id, sql string, args ...any) error {
	tag, err := q.Exec(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("community %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w %q", ErrNoCommunity, id)
	}
	return nil
}

// Disable stops serving community id (its data stays); Enable undoes it.
func Disable(ctx context.Context, q Querier, id string) error {
	return one(ctx, q, id, `UPDATE communities SET disabled_at = COALESCE(disabled_at, now()) WHERE id = $1`, id)
}

// Enable serves a disabled community again.
func Enable(ctx context.Context, q Querier, id string) error {
	return one(ctx, q, id, `UPDATE communities SET disabled_at = NULL WHERE id = $1`, id)
}

// RotateKey gives community id a new relay key (its identity changes);
// running instances pick it up within the registry TTL. Answers the new
// pubkey.
func RotateKey(ctx context.Context, q Querier, sealer Sealer, id string) (string, error) {
	pub, ct, err := newKey(ctx, sealer, id)
	if err != nil {
		return "", err
	}
	if err := one(ctx, q, id, `UPDATE communities SET relay_key_ciphertext = $2, relay_pubkey = $3 WHERE id = $1`, id, ct, pub); err != nil {
		return "", err
	}
	return pub, nil
}

// Info fields NIP-86 changes.
const (
	FieldName    = "name"
	FieldAbout   = "about"
	FieldPicture = "picture"
)

// SetInfo changes one of name, about, picture.
func SetInfo(ctx context.Context, q Querier, id, field, value string) error {
	switch field {
	case FieldName:
		if value == "" || len(value) > 200 {
			return reject.Invalidf("name must be 1-200 bytes")
		}
	case FieldAbout:
		if len(value) > maxText {
			return reject.Invalidf("description is at most %d bytes", maxText)
		}
	case FieldPicture:
		if err := CheckPicture(value); err != nil {
			return err
		}
	default:
		return fmt.Errorf("community: unknown field %q", field)
	}
	return one(ctx, q, id, `UPDATE communities SET `+field+` = $2 WHERE id = $1`, id, value)
}

// AddOperator lets pubkey manage community id.
func AddOperator(ctx context.Context, q Querier, id, pubkey string) error {
	if err := CheckPubkey(pubkey); err != nil {
		return err
	}
	return one(ctx, q, id, `UPDATE communities SET operators = array_append(array_remove(operators, $2), $2) WHERE id = $1`, id, pubkey)
}

// PubkeyRule is a banned or allowed pubkey.
type PubkeyRule struct {
	Pubkey string `json:"pubkey"`
	Reason string `json:"reason,omitempty"`
}

// Rules of community_pubkey_rules.
const (
	RuleBan   = "ban"
	RuleAllow = "allow"
)

// SetPubkeyRule bans or allows pubkey in community id (replacing its rule).
func SetPubkeyRule(ctx context.Context, q Querier, id, pubkey, rule, reason string) error {
	if err := CheckPubkey(pubkey); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `INSERT INTO community_pubkey_rules (community_id, pubkey, rule, reason, created_at)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (community_id, pubkey) DO UPDATE SET rule = EXCLUDED.rule, reason = EXCLUDED.reason, created_at = EXCLUDED.created_at`,
		id, pubkey, rule, reason, time.Now().Unix())
	if err != nil {
		return fmt.Errorf("community %s: %s pubkey: %w", id, rule, err)
	}
	return nil
}

// PubkeyRules lists community id's pubkeys under rule.
func PubkeyRules(ctx context.Context, q Querier, id, rule string) ([]PubkeyRule, error) {
	rows, err := q.Query(ctx, `SELECT pubkey, reason FROM community_pubkey_rules
WHERE community_id = $1 AND rule = $2 ORDER BY created_at, pubkey`, id, rule)
	if err != nil {
		return nil, fmt.Errorf("community %s: list %s: %w", id, rule, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PubkeyRule, error) {
		var p PubkeyRule
		return p, r.Scan(&p.Pubkey, &p.Reason)
	})
	if err != nil {
		return nil, fmt.Errorf("community %s: list %s: %w", id, rule, err)
	}
	if out == nil {
		out = []PubkeyRule{}
	}
	return out, nil
}

// BanEvent records event id as banned in community id and marks it
// deleted, so no read serves it and a resubmission is refused.
func BanEvent(ctx context.Context, db DB, id, eventID, reason string) error {
	if !nostr.IsValid32ByteHex(eventID) {
		return reject.Invalidf("event id must be 64 lowercase hex characters, got %q", eventID)
	}
	now := time.Now().Unix()
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO community_banned_events (community_id, event_id, reason, created_at)
VALUES ($1, $2, $3, $4) ON CONFLICT (community_id, event_id) DO UPDATE SET reason = EXCLUDED.reason`, id, eventID, reason, now); err != nil {
			return fmt.Errorf("community %s: ban event: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE events SET deleted_at = $3 WHERE community_id = $1 AND id = $2 AND deleted_at IS NULL`, id, eventID, now); err != nil {
			return fmt.Errorf("community %s: ban event: %w", id, err)
		}
		return nil
	})
}

// Describe is a one-line summary for the operator command.
func (c *Community) Describe() string {
	state := "enabled"
	if c.DisabledAt != nil {
		state = "disabled " + c.DisabledAt.UTC().Format(time.RFC3339)
	}
	pk := c.RelayPubkey
	if pk == "" {
		pk = "(configured relay key)"
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", c.ID, strings.Join(c.Hosts, ","), c.Name, pk, state)
}

// AddHost makes community id serve host too; a host served by another
// community is an invalid: error.
func AddHost(ctx context.Context, q Querier, id, host string) error {
	h, err := CheckHost(host)
	if err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `INSERT INTO community_hosts (host, community_id) VALUES ($1, $2)`, h, id); err != nil {
		return taken(err, "hostname "+h)
	}
	return nil
}
