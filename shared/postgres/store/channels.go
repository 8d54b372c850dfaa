package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/buzzrelay/relay/shared/domain/nip29"
	"github.com/buzzrelay/relay/shared/domain/records"
)

const channelCols = `id, name, about, picture, channel_type, visibility, labels, creator, created_at, deleted_at IS NOT NULL,
  restricted, hidden, closed, supported_kinds, coalesce(parent, ''), archived_at IS NOT NULL`

func scanChannel(row pgx.Row) (*records.Channel, error) {
	c := &records.Channel{}
	err := row.Scan(&c.ID, &c.Name, &c.About, &c.Picture, &c.Type, &c.Visibility, &c.Labels, &c.Creator, &c.CreatedAt, &c.Deleted,
		&c.Restricted, &c.Hidden, &c.Closed, &c.SupportedKinds, &c.Parent, &c.Archived)
	if err != nil {
		return nil, interpret(err)
	}
	c.Private = c.Visibility == nip29.Private
	return c, nil
}

// ChannelsGet reads a channel. lock takes a row lock, so moderation events on
// one channel apply one after another.
func (t *Tx) ChannelsGet(ctx context.Context, id string, lock bool) (*records.Channel, error) {
	q := `SELECT ` + channelCols + ` FROM channels WHERE community_id = $1 AND id = $2`
	if lock {
		q += ` FOR UPDATE`
	}
	c, err := scanChannel(t.tx.QueryRow(ctx, q, t.community, id))
	if err != nil && !notFound(err) {
		return nil, errorf("channel %s: %w", id, err)
	}
	if err == nil {
		t.sawChannel(c)
	}
	return c, err
}

// ChannelsLockFirst queues the row lock Channel(ctx, id, true) takes to
// ride the transaction's BEGIN, ahead of what FoldSessions queues after
// it: a write waiting for a busy channel holds no session row another
// write of that channel may have to fold (a lock order without cycles).
// A missing channel locks nothing.
func (t *Tx) ChannelsLockFirst(id string) {
	t.tx.lead = append(t.tx.lead, queued{
		sql:  `SELECT FROM channels WHERE community_id = $1 AND id = $2 FOR UPDATE`,
		args: []any{t.community, id}})
}

// sawChannel records whether a channel this transaction read is a system
// channel: its delivery then need not read the flag again.
func (t *Tx) sawChannel(c *records.Channel) {
	if t.system == nil {
		t.system = map[string]bool{}
	}
	t.system[c.ID] = c.Rule().System
}

// ChannelsGetWithRole reads a channel and pubkey's active role in it ("" when
// not a member) in one round trip.
func (t *Tx) ChannelsGetWithRole(ctx context.Context, id, pubkey string) (*records.Channel, string, error) {
	c := &records.Channel{}
	var role *string
	err := t.tx.QueryRow(ctx, `
SELECT c.id, c.name, c.about, c.picture, c.channel_type, c.visibility, c.labels, c.creator, c.created_at,
       c.deleted_at IS NOT NULL, c.restricted, c.hidden, c.closed, c.supported_kinds, coalesce(c.parent, ''), c.archived_at IS NOT NULL, m.role
FROM channels c
LEFT JOIN channel_members m ON m.community_id = c.community_id AND m.channel_id = c.id
     AND m.pubkey = $3 AND m.`+activeMember+`
WHERE c.community_id = $1 AND c.id = $2`, t.community, id, pubkey).
		Scan(&c.ID, &c.Name, &c.About, &c.Picture, &c.Type, &c.Visibility, &c.Labels, &c.Creator, &c.CreatedAt, &c.Deleted,
			&c.Restricted, &c.Hidden, &c.Closed, &c.SupportedKinds, &c.Parent, &c.Archived, &role)
	c.Private = c.Visibility == nip29.Private
	if err != nil {
		return nil, "", errorf("channel %s: %w", id, err)
	}
	t.sawChannel(c)
	return c, deref(role), nil
}

// ChannelsInsert creates a channel; created is false when the id exists.
func (t *Tx) ChannelsInsert(ctx context.Context, c *nip29.Channel, createEvent string) (created bool, err error) {
	tag, err := t.tx.Exec(ctx, `
INSERT INTO channels (community_id, id, name, about, picture, channel_type, visibility, labels, creator, created_at, create_event,
  restricted, hidden, closed, supported_kinds, parent)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, nullif($16, '')) ON CONFLICT DO NOTHING`,
		t.community, c.ID, c.Name, c.About, c.Picture, c.Type, c.Visibility, nonNil(c.Labels), c.Creator, c.CreatedAt, createEvent,
		c.Restricted, c.Hidden, c.Closed, c.SupportedKinds, c.Parent)
	if err != nil {
		return false, errorf("insert channel %s: %w", c.ID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ChannelsUpdate writes a channel's editable fields; an archive keeps the
// time it began (at, when it begins now).
func (t *Tx) ChannelsUpdate(ctx context.Context, c *nip29.Channel, at int64) error {
	if _, err := t.tx.Exec(ctx, `
UPDATE channels SET name = $3, about = $4, picture = $5, visibility = $6, labels = $7,
  restricted = $8, hidden = $9, closed = $10, supported_kinds = $11, parent = nullif($12, ''),
  archived_at = CASE WHEN $13 THEN coalesce(archived_at, $14) END
WHERE community_id = $1 AND id = $2`, t.community, c.ID, c.Name, c.About, c.Picture, c.Visibility, nonNil(c.Labels),
		c.Restricted, c.Hidden, c.Closed, c.SupportedKinds, c.Parent, c.Archived, at); err != nil {
		return errorf("update channel %s: %w", c.ID, err)
	}
	return nil
}

// ChannelsDelete marks a channel deleted.
func (t *Tx) ChannelsDelete(ctx context.Context, id string, at int64) error {
	if _, err := t.tx.Exec(ctx, `UPDATE channels SET deleted_at = $3 WHERE community_id = $1 AND id = $2`, t.community, id, at); err != nil {
		return errorf("delete channel %s: %w", id, err)
	}
	return nil
}

// ChannelMembersList lists the active members, owners first, then admins, then by
// the time they were added.
func (t *Tx) ChannelMembersList(ctx context.Context, channel string) ([]nip29.MemberRole, error) {
	rows, err := t.tx.Query(ctx, `
SELECT pubkey, role FROM channel_members
WHERE community_id = $1 AND channel_id = $2 AND `+activeMember+`
ORDER BY CASE role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, added_at, pubkey`, t.community, channel)
	if err != nil {
		return nil, errorf("members of %s: %w", channel, err)
	}
	return collect(rows, func(row pgx.CollectableRow) (nip29.MemberRole, error) {
		var m nip29.MemberRole
		err := row.Scan(&m.Pubkey, &m.Role)
		return m, err
	})
}

// ChannelMembersGetRole returns pubkey's active role in channel, "" when not a member.
func (t *Tx) ChannelMembersGetRole(ctx context.Context, channel, pubkey string) (string, error) {
	var role string
	err := t.tx.QueryRow(ctx, `SELECT role FROM channel_members
WHERE community_id = $1 AND channel_id = $2 AND pubkey = $3 AND `+activeMember, t.community, channel, pubkey).Scan(&role)
	if notFound(err) {
		return "", nil
	}
	if err != nil {
		return "", errorf("role in %s: %w", channel, err)
	}
	return role, nil
}

// ChannelMembersPut adds pubkey with role, or changes the role of an active member.
func (t *Tx) ChannelMembersPut(ctx context.Context, channel, pubkey, role string, at int64) error {
	if _, err := t.tx.Exec(ctx, `
INSERT INTO channel_members (community_id, channel_id, pubkey, role, added_at)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (community_id, channel_id, pubkey) DO UPDATE SET
  role = EXCLUDED.role,
  added_at = CASE WHEN channel_members.`+activeMember+` THEN channel_members.added_at ELSE EXCLUDED.added_at END,
  removed_at = NULL`, t.community, channel, pubkey, role, at); err != nil {
		return errorf("put member: %w", err)
	}
	return nil
}

// ChannelMembersDelete ends pubkey's membership.
func (t *Tx) ChannelMembersDelete(ctx context.Context, channel, pubkey string, at int64) error {
	if _, err := t.tx.Exec(ctx, `UPDATE channel_members SET removed_at = $4
WHERE community_id = $1 AND channel_id = $2 AND pubkey = $3 AND `+activeMember, t.community, channel, pubkey, at); err != nil {
		return errorf("remove member: %w", err)
	}
	return nil
}

// ChannelStateHeadsGet returns the created_at and id of the current relay-signed
// state event of kind for channel (ok false when there is none yet).
func (t *Tx) ChannelStateHeadsGet(ctx context.Context, channel string, kind int) (createdAt int64, eventID string, ok bool, err error) {
	err = t.tx.QueryRow(ctx, `SELECT created_at, event_id FROM channel_state_heads
WHERE community_id = $1 AND channel_id = $2 AND kind = $3`, t.community, channel, kind).Scan(&createdAt, &eventID)
	if notFound(err) {
		return 0, "", false, nil
	}
	if err != nil {
		return 0, "", false, errorf("state head: %w", err)
	}
	return createdAt, eventID, true, nil
}

// ChannelStateHeadsPut records eventID as the current head of kind for channel.
func (t *Tx) ChannelStateHeadsPut(ctx context.Context, channel string, kind int, eventID string, createdAt int64) error {
	if _, err := t.tx.Exec(ctx, `
INSERT INTO channel_state_heads (community_id, channel_id, kind, event_id, created_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (community_id, channel_id, kind) DO UPDATE SET event_id = EXCLUDED.event_id, created_at = EXCLUDED.created_at`,
		t.community, channel, kind, eventID, createdAt); err != nil {
		return errorf("set state head: %w", err)
	}
	return nil
}

// EventsGetTarget looks up a stored event together with its channel and pubkey's
// active role there, in one round trip: what a reply, reaction or edit needs
// to know about the event it points at. ch is nil for an event outside any
// channel; role is "" for a non-member.
func (t *Tx) EventsGetTarget(ctx context.Context, id, pubkey string) (ref *records.EventRef, ch *records.Channel, role string, err error) {
	ref = &records.EventRef{ID: id}
	var depth *int32
	var root, parent, chID, d, cID, cName, cAbout, cPicture, cType, cVis, cCreator, cParent, r *string
	var deleted, cCreated *int64
	var cDeleted, cRestricted, cHidden, cClosed, cArchived *bool
	var cKinds []int
	var cLabels []string
	err = t.tx.QueryRow(ctx, `
SELECT e.pubkey, e.kind, e.created_at, e.channel_id, e.d_tag, e.deleted_at, m.depth, m.root_id, m.parent_id,
       c.id, c.name, c.about, c.picture, c.channel_type, c.visibility, c.labels, c.creator, c.created_at,
       c.deleted_at IS NOT NULL, c.restricted, c.hidden, c.closed, c.supported_kinds, c.parent, c.archived_at IS NOT NULL, r.role
FROM events e
LEFT JOIN thread_metadata m ON m.community_id = e.community_id AND m.event_id = e.id
LEFT JOIN channels c ON c.community_id = e.community_id AND c.id = e.channel_id
LEFT JOIN channel_members r ON r.community_id = c.community_id AND r.channel_id = c.id
     AND r.pubkey = $3 AND r.`+activeMember+`
WHERE e.community_id = $1 AND e.id = $2`, t.community, id, pubkey).
		Scan(&ref.Pubkey, &ref.Kind, &ref.CreatedAt, &chID, &d, &deleted, &depth, &root, &parent,
			&cID, &cName, &cAbout, &cPicture, &cType, &cVis, &cLabels, &cCreator, &cCreated, &cDeleted,
			&cRestricted, &cHidden, &cClosed, &cKinds, &cParent, &cArchived, &r)
	if err != nil {
		return nil, nil, "", errorf("target %s: %w", id, err)
	}
	ref.ChannelID, ref.DTag, ref.Deleted = deref(chID), deref(d), deleted != nil
	if depth != nil {
		ref.HasThread, ref.Depth, ref.RootID, ref.ParentID = true, int(*depth), deref(root), deref(parent)
	}
	if cID != nil {
		ch = &records.Channel{Deleted: *cDeleted}
		ch.ID, ch.Name, ch.About, ch.Picture = *cID, *cName, *cAbout, *cPicture
		ch.Type, ch.Visibility, ch.Labels, ch.Creator, ch.CreatedAt = *cType, *cVis, cLabels, *cCreator, *cCreated
		ch.Private, ch.Restricted, ch.Hidden, ch.Closed = *cVis == nip29.Private, *cRestricted, *cHidden, *cClosed
		ch.SupportedKinds, ch.Parent, ch.Archived = cKinds, deref(cParent), *cArchived
		t.sawChannel(ch)
	}
	return ref, ch, deref(r), nil
}
