package community

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/buzzrelay/relay/shared/aws/kmssigner"
	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

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
	if !eventcheck.LowerHex(pk, 64) {
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
func Create(ctx context.Context, st *store.Store, sealer Sealer, dir Directory, s Spec) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	pub, ct, err := newKey(ctx, sealer, s.ID)
	if err != nil {
		return "", err
	}
	if err := st.CommunitiesInsert(ctx, &records.Community{ID: s.ID, Name: s.Name, About: s.About, Picture: s.Picture,
		Operators: s.Operators, Hosts: s.Hosts, RelayPubkey: pub, Ciphertext: ct}); err != nil {
		return "", taken(err)
	}
	return pub, refreshed(ctx, dir, s.ID)
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

// taken answers a taken id or hostname with invalid:.
func taken(err error) error {
	var te *records.TakenError
	if errors.As(err, &te) {
		return reject.Invalidf("%s", te.Error())
	}
	return fmt.Errorf("community: %w", err)
}

// ErrNoCommunity is returned for an unknown community id.
var ErrNoCommunity = errors.New("community: no such community")

// known turns the store's ErrNotFound about community id into
// ErrNoCommunity.
func known(err error, id string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, records.ErrNotFound):
		return fmt.Errorf("%w %q", ErrNoCommunity, id)
	}
	return fmt.Errorf("community: %w", err)
}

// Directory keeps what each host serves outside the database
// (shared/service/directory): Refresh rewrites community id's documents
// after a change. Every use case below that changes what a host serves or
// what NIP-11 says of it takes one; nil: the deployment keeps none.
type Directory interface {
	Refresh(ctx context.Context, id string) error
}

// refreshed tells dir that community id changed; the change holds when
// that fails, and the failure is returned after it.
func refreshed(ctx context.Context, dir Directory, id string) error {
	if dir == nil {
		return nil
	}
	if err := dir.Refresh(ctx, id); err != nil {
		return fmt.Errorf("community: %q changed, but its directory documents were not rewritten (run the community command's refresh): %w", id, err)
	}
	return nil
}

// Disable stops serving community id (its data stays); Enable undoes it.
// Its directory documents say so (dir), so that NIP-11 and a new
// WebSocket connection are refused without the database.
func Disable(ctx context.Context, st *store.Store, id string, dir Directory) error {
	if err := known(st.CommunitiesDisable(ctx, id), id); err != nil {
		return err
	}
	return refreshed(ctx, dir, id)
}

// Enable serves a disabled community again.
func Enable(ctx context.Context, st *store.Store, id string, dir Directory) error {
	if err := known(st.CommunitiesEnable(ctx, id), id); err != nil {
		return err
	}
	return refreshed(ctx, dir, id)
}

// RotateKey gives community id a new relay key (its identity changes);
// running instances pick it up within the registry TTL. Answers the new
// pubkey.
func RotateKey(ctx context.Context, st *store.Store, sealer Sealer, id string, dir Directory) (string, error) {
	pub, ct, err := newKey(ctx, sealer, id)
	if err != nil {
		return "", err
	}
	if err := known(st.CommunitiesSetRelayKey(ctx, id, ct, pub), id); err != nil {
		return "", err
	}
	return pub, refreshed(ctx, dir, id)
}

// Info fields NIP-86 changes.
const (
	FieldName    = records.InfoName
	FieldAbout   = records.InfoAbout
	FieldPicture = records.InfoPicture
)

// SetInfo changes one of name, about, picture.
func SetInfo(ctx context.Context, st *store.Store, id, field, value string, dir Directory) error {
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
	if err := known(st.CommunitiesSetInfo(ctx, id, field, value), id); err != nil {
		return err
	}
	return refreshed(ctx, dir, id)
}

// SetMembership turns community id's NIP-43 membership enforcement on or
// off (NIP-11 advertises it).
func SetMembership(ctx context.Context, st *store.Store, id string, on bool, dir Directory) error {
	if err := known(st.CommunitiesSetMembershipEnforced(ctx, id, on), id); err != nil {
		return err
	}
	return refreshed(ctx, dir, id)
}

// AddOperator lets pubkey manage community id.
func AddOperator(ctx context.Context, st *store.Store, id, pubkey string) error {
	if err := CheckPubkey(pubkey); err != nil {
		return err
	}
	return known(st.OperatorsInsert(ctx, id, pubkey), id)
}

// RemoveOperator stops pubkey managing community id. The last operator
// stays (someone must be able to manage the community): add another first.
func RemoveOperator(ctx context.Context, st *store.Store, id, pubkey string) error {
	if err := CheckPubkey(pubkey); err != nil {
		return err
	}
	removed, last, err := st.OperatorsDelete(ctx, id, pubkey)
	if err := known(err, id); err != nil {
		return err
	}
	switch {
	case last:
		return reject.Invalidf("%s is the community's last operator: add another operator first", pubkey)
	case !removed:
		return reject.Invalidf("%s is not an operator of this community", pubkey)
	}
	return nil
}

// Operators lists community id's operators.
func Operators(ctx context.Context, st *store.Store, id string) ([]string, error) {
	c, err := st.CommunitiesGet(ctx, id)
	if err := known(err, id); err != nil {
		return nil, err
	}
	return c.Operators, nil
}

// PubkeyRule is a banned, timed-out or allowed pubkey; ExpiresAt (unix
// seconds) is absent for a rule that holds for good.
type PubkeyRule struct {
	Pubkey    string `json:"pubkey"`
	Reason    string `json:"reason,omitempty"`
	ExpiresAt *int64 `json:"expires_at,omitempty"`
}

// Rules of community_pubkey_rules.
const (
	RuleBan     = "ban"
	RuleAllow   = "allow"
	RuleTimeout = "timeout"
)

// LiftPubkeyRule removes pubkey's rule in community id when it is one of
// rules (unban: ban and timeout; unallow: allow); a key with none such is
// an invalid: error and nothing changes.
func LiftPubkeyRule(ctx context.Context, st *store.Store, id, pubkey string, rules ...string) error {
	if err := CheckPubkey(pubkey); err != nil {
		return err
	}
	lifted, err := st.PubkeyRulesDeleteIn(ctx, id, pubkey, rules)
	if err != nil {
		return err
	}
	if !lifted {
		return reject.Invalidf("%s has no %s rule in this community", pubkey, strings.Join(rules, " or "))
	}
	return nil
}

// SetPubkeyRule bans, allows or times out pubkey in community id as actor
// (an operator), until expires (nil: for good), replacing its rule (a
// timeout never replaces a ban).
func SetPubkeyRule(ctx context.Context, st *store.Store, id, pubkey, rule, reason, actor string, expires *int64) error {
	if err := CheckPubkey(pubkey); err != nil {
		return err
	}
	return st.PubkeyRulesSet(ctx, id, pubkey, rule, reason, actor, expires, time.Now().Unix())
}

// PubkeyRules lists community id's pubkeys under rule.
func PubkeyRules(ctx context.Context, st *store.Store, id, rule string) ([]PubkeyRule, error) {
	rows, err := st.PubkeyRulesList(ctx, id, rule)
	if err != nil {
		return nil, err
	}
	out := make([]PubkeyRule, len(rows))
	for i, r := range rows {
		out[i] = PubkeyRule{Pubkey: r.Pubkey, Reason: r.Reason, ExpiresAt: r.ExpiresAt}
	}
	return out, nil
}

// BanEvent records event id as banned in community id and marks it
// deleted, so no read serves it and a resubmission is refused.
func BanEvent(ctx context.Context, st *store.Store, id, eventID, reason string) error {
	if !eventcheck.LowerHex(eventID, 64) {
		return reject.Invalidf("event id must be 64 lowercase hex characters, got %q", eventID)
	}
	return st.BannedEventsInsert(ctx, id, eventID, reason, time.Now().Unix())
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
func AddHost(ctx context.Context, st *store.Store, id, host string, dir Directory) error {
	h, err := CheckHost(host)
	if err != nil {
		return err
	}
	if err := st.CommunityHostsInsert(ctx, id, h); err != nil {
		return taken(err)
	}
	return refreshed(ctx, dir, id)
}
