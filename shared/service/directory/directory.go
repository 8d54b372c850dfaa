// Package directory keeps what a host serves outside the database: one
// document per registered hostname (the community there, whether it is
// served, and the fields its NIP-11 document is made of) and one for the
// deployment's default community (which serves every host while no
// hostname is registered), in the object store (the media bucket through
// shared/aws/s3blobs; the local S3 server in make dev).
//
// NIP-11 and a new WebSocket connection's host read these documents and
// never the database, so a client or monitor polling NIP-11, or an app
// reconnecting, does not keep a paused Aurora awake. Every path that
// changes a community (shared/service/community's use cases, NIP-86, the
// operator command, the provisioning of the default community, a 9033's
// icon through shared/service/ingest.WithDirectory) rewrites
// its documents from the database after the change (Refresh). A document
// that is missing (a deployment that predates the directory, a write that
// failed) is read from the database once and written.
//
// Each instance keeps the documents it read with their ETag and asks the
// store on every lookup whether they changed (a conditional GET, which
// answers 304 without a body): S3 is strongly consistent, so a community
// disabled on one instance is refused by every other from the next lookup,
// and never served from a stale copy.
package directory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/relayurl"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/community"
)

// Objects is the object store the documents live in (s3blobs.Bucket).
type Objects interface {
	Put(ctx context.Context, key string, body []byte, contentType string) error
	// GetIfNoneMatch reads key unless its ETag is still etag (changed
	// false); found is false when there is no object.
	GetIfNoneMatch(ctx context.Context, key, etag string) (body []byte, version string, changed, found bool, err error)
}

// Document is what one host serves: the community and the fields of its
// NIP-11 document (the relay adds its limits and media as it serves it).
type Document struct {
	Community          string `json:"community"`
	Disabled           bool   `json:"disabled,omitempty"`
	Name               string `json:"name,omitempty"`
	About              string `json:"about,omitempty"`
	Picture            string `json:"picture,omitempty"`
	RelayPubkey        string `json:"relay_pubkey,omitempty"`
	MembershipEnforced bool   `json:"membership_enforced,omitempty"`
	// Written is when the document was written (unix seconds), for an
	// operator reading the bucket.
	Written int64 `json:"written"`
}

// defaults is the default community's document: Community is nil once a
// hostname is registered anywhere (every host is then served by its own
// document only).
type defaults struct {
	Community *Document `json:"community"`
	Written   int64     `json:"written"`
}

func documentOf(r *records.Community, now int64) *Document {
	return &Document{Community: r.ID, Disabled: r.DisabledAt != nil, Name: r.Name, About: r.About, Picture: r.Picture,
		RelayPubkey: r.RelayPubkey, MembershipEnforced: r.MembershipEnforced, Written: now}
}

// community is d as the relay's use cases know a community (disabled
// communities too: Served says).
func (d *Document) community() *community.Community {
	c := &community.Community{
		Spec:        community.Spec{ID: d.Community, Name: d.Name, About: d.About, Picture: d.Picture},
		RelayPubkey: d.RelayPubkey, MembershipEnforced: d.MembershipEnforced,
	}
	if d.Disabled {
		at := time.Unix(d.Written, 0)
		c.DisabledAt = &at
	}
	return c
}

// Directory reads and writes the documents. A nil *Directory is a
// deployment without one: Refresh does nothing. Safe for concurrent use.
type Directory struct {
	obj      Objects
	prefix   string
	st       *store.Store
	fallback string
	now      func() time.Time

	mu    sync.Mutex
	cache map[string]cached // object key → what was read there
}

type cached struct {
	etag string
	body []byte
}

// maxCached bounds the documents one instance keeps.
const maxCached = 1024

// New keeps the documents in obj under prefix, read from and refreshed
// out of st; fallback is the deployment's default community
// (BUZZ_COMMUNITY).
func New(obj Objects, prefix string, st *store.Store, fallback string) *Directory {
	return &Directory{obj: obj, prefix: prefix, st: st, fallback: fallback, now: time.Now, cache: map[string]cached{}}
}

func (d *Directory) hostKey(host string) string {
	return d.prefix + "host/" + url.PathEscape(host)
}

func (d *Directory) defaultKey() string { return d.prefix + "default" }

// Lookup is the community at host as its document says (disabled ones
// too; Served tells), or an error community.Unknown recognises when no
// community is there. Only a missing document reaches the database.
func (d *Directory) Lookup(ctx context.Context, host string) (*community.Community, error) {
	host = relayurl.Hostname(host)
	var doc Document
	found, err := d.read(ctx, d.hostKey(host), &doc)
	if err != nil {
		return nil, err
	}
	if found {
		return doc.community(), nil
	}
	var def defaults
	if found, err = d.read(ctx, d.defaultKey(), &def); err != nil {
		return nil, err
	}
	if !found {
		if def, err = d.writeDefaults(ctx); err != nil {
			return nil, err
		}
	}
	if def.Community != nil {
		return def.Community.community(), nil
	}
	// No document: a hostname registered before the directory was, or
	// none at all (asked again each time, as the registry does: a host
	// tells nothing it does not serve).
	row, err := d.st.CommunitiesGetByHost(ctx, host, d.fallback)
	if errors.Is(err, records.ErrNotFound) {
		return nil, community.ErrUnknownHost
	}
	if err != nil {
		return nil, fmt.Errorf("directory: host %q: %w", host, err)
	}
	if err := d.write(ctx, row); err != nil {
		return nil, err
	}
	return documentOf(row, d.now().Unix()).community(), nil
}

// Resolve is the served community at host, or community.ErrUnknownHost
// (unknown and disabled alike), as community.Registry.Resolve answers.
func (d *Directory) Resolve(ctx context.Context, host string) (*community.Community, error) {
	c, err := d.Lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if !c.Served() {
		return nil, community.ErrUnknownHost
	}
	return c, nil
}

// ResolveID is Resolve's community id, refused as
// community.Registry.ResolveID refuses (restricted:, the same words for an
// unknown and a disabled community).
func (d *Directory) ResolveID(ctx context.Context, host string) (string, error) {
	c, err := d.Resolve(ctx, host)
	if err != nil {
		return "", community.NotServedAt(host, err)
	}
	return c.ID, nil
}

// Admit is community.Admit over the documents: the WebSocket upgrade of a
// host whose document says it serves no community is refused.
func (d *Directory) Admit(ctx context.Context, host string) error {
	return community.Admit(ctx, host, d.ResolveID)
}

// Refresh rewrites the documents of community id (one per hostname) and the
// default community's from the database, after id changed. Nil: none kept.
func (d *Directory) Refresh(ctx context.Context, id string) error {
	if d == nil {
		return nil
	}
	row, err := d.st.CommunitiesGet(ctx, id)
	if err != nil {
		return fmt.Errorf("directory: refresh %q: %w", id, err)
	}
	if err := d.write(ctx, row); err != nil {
		return err
	}
	_, err = d.writeDefaults(ctx)
	return err
}

// RefreshAll rewrites every community's documents (the operator command's
// refresh, after changes made to the database by hand).
func (d *Directory) RefreshAll(ctx context.Context) error {
	rows, err := d.st.CommunitiesList(ctx)
	if err != nil {
		return fmt.Errorf("directory: refresh: %w", err)
	}
	for _, row := range rows {
		if err := d.write(ctx, row); err != nil {
			return err
		}
	}
	_, err = d.writeDefaults(ctx)
	return err
}

// write puts row's document under each of its hostnames.
func (d *Directory) write(ctx context.Context, row *records.Community) error {
	b, _ := json.Marshal(documentOf(row, d.now().Unix()))
	for _, h := range row.Hosts {
		if err := d.put(ctx, d.hostKey(relayurl.Hostname(h)), b); err != nil {
			return err
		}
	}
	return nil
}

// writeDefaults puts the default community's document: the community
// itself while no hostname is registered (host "" is never one), else
// none.
func (d *Directory) writeDefaults(ctx context.Context) (defaults, error) {
	def := defaults{Written: d.now().Unix()}
	row, err := d.st.CommunitiesGetByHost(ctx, "", d.fallback)
	switch {
	case err == nil:
		def.Community = documentOf(row, def.Written)
	case !errors.Is(err, records.ErrNotFound):
		return defaults{}, fmt.Errorf("directory: default community: %w", err)
	}
	b, _ := json.Marshal(def)
	return def, d.put(ctx, d.defaultKey(), b)
}

func (d *Directory) put(ctx context.Context, key string, body []byte) error {
	d.mu.Lock()
	delete(d.cache, key)
	d.mu.Unlock()
	if err := d.obj.Put(ctx, key, body, "application/json"); err != nil {
		return fmt.Errorf("directory: write %s: %w", key, err)
	}
	return nil
}

// read decodes the document at key into v: from this instance's copy when
// the store says it is unchanged.
func (d *Directory) read(ctx context.Context, key string, v any) (found bool, err error) {
	d.mu.Lock()
	c, ok := d.cache[key]
	d.mu.Unlock()
	body, etag, changed, found, err := d.obj.GetIfNoneMatch(ctx, key, c.etag)
	if err != nil {
		return false, fmt.Errorf("directory: read %s: %w", key, err)
	}
	switch {
	case !found:
		if ok {
			d.mu.Lock()
			delete(d.cache, key)
			d.mu.Unlock()
		}
		return false, nil
	case !changed:
		body = c.body
	case etag != "":
		d.mu.Lock()
		if len(d.cache) >= maxCached {
			clear(d.cache)
		}
		d.cache[key] = cached{etag: etag, body: body}
		d.mu.Unlock()
	}
	if err := json.Unmarshal(body, v); err != nil {
		return false, fmt.Errorf("directory: read %s: %w", key, err)
	}
	return true, nil
}
