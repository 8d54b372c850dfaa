package store

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Delivered is what live delivery needs about one stored event: its JSON,
// its channel ("" outside any), whether that is a system channel, and its
// thread root ("" for a top-level event).
type Delivered struct {
	Raw, Channel, Root string
	System             bool
}

// Deliveries is what live delivery needs about one batch of committed
// events.
type Deliveries struct {
	// Events are the stored, not deleted events of the batch by id.
	Events map[string]Delivered
	// Roots maps the replies among the batch's deletion targets to their
	// thread roots.
	Roots map[string]string
	// System are the system channels among the channels asked about.
	System map[string]bool
}

// DeliveryRequest names what live delivery needs about one batch of
// committed events: the stored, not deleted events among IDs (with
// channel, channel type and thread root), the thread roots of the replies
// among Targets and which of Channels are system channels. The audience
// is not the database's: the session store holds it (shared/service/fanout
// reads it after the commit).
type DeliveryRequest struct {
	IDs, Targets, Channels []string
	// system are the system flags a transaction already read (Delivery).
	system map[string]bool
}

// DeliveriesGet loads r in one round trip.
func (s *Store) DeliveriesGet(ctx context.Context, community string, r DeliveryRequest) (*Deliveries, error) {
	b := &pgx.Batch{}
	out := r.queue(b, community)
	if b.Len() == 0 {
		return out, nil
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, errorf("load events for delivery: %w", err)
	}
	return out, nil
}

// queue adds the statements of r to b; their results fill the Deliveries
// it returns once b's results are read. With no event to read and one
// channel or none (the usual commit, whose events Tx.stored holds, or an
// ephemeral event), the subscriptions and the system flag are read by
// statements of scalar parameters, which Postgres plans once per
// connection; array parameters keep it making a custom plan per
// execution, costlier than running the statement.
func (r DeliveryRequest) queue(b *pgx.Batch, community string) *Deliveries {
	out := &Deliveries{Events: make(map[string]Delivered, len(r.IDs)), Roots: map[string]string{}, System: map[string]bool{}}
	if len(r.IDs) == 0 && len(r.Channels) <= 1 {
		r.queueOneChannel(b, community, out)
		return out
	}
	b.Queue(deliveryEventsSQL, community, r.IDs).Query(func(rows pgx.Rows) error {
		var id string
		var d Delivered
		_, err := pgx.ForEachRow(rows, []any{&id, &d.Raw, &d.Channel, &d.System, &d.Root}, func() error {
			out.Events[id] = d
			return nil
		})
		return err
	})
	if len(r.Targets) > 0 {
		queueRoots(b, community, r.Targets, out)
	}
	if len(r.Channels) > 0 {
		b.Queue(deliverySystemSQL, community, r.Channels).Query(func(rows pgx.Rows) error {
			var id string
			_, err := pgx.ForEachRow(rows, []any{&id}, func() error {
				out.System[id] = true
				return nil
			})
			return err
		})
	}
	return out
}

// queueOneChannel adds r's statements for one channel or none to b.
func (r DeliveryRequest) queueOneChannel(b *pgx.Batch, community string, out *Deliveries) {
	var channel string
	if len(r.Channels) == 1 {
		channel = r.Channels[0]
		if system, known := r.system[channel]; known {
			out.System[channel] = system
		} else {
			b.Queue(deliverySystemOneSQL, community, channel).QueryRow(func(row pgx.Row) error {
				var system bool
				err := row.Scan(&system)
				if notFound(err) {
					return nil
				}
				out.System[channel] = system
				return err
			})
		}
	}
	if len(r.Targets) > 0 {
		queueRoots(b, community, r.Targets, out)
	}
}

// queueRoots adds the lookup of the thread roots of the replies among
// targets to b.
func queueRoots(b *pgx.Batch, community string, targets []string, out *Deliveries) {
	b.Queue(deliveryRootsSQL, community, targets).Query(func(rows pgx.Rows) error {
		var id, root string
		_, err := pgx.ForEachRow(rows, []any{&id, &root}, func() error {
			out.Roots[id] = root
			return nil
		})
		return err
	})
}

// Delivery is a DeliveryRequest that the commit of a transaction carries:
// its statements follow COMMIT in the commit's round trip, on the
// transaction's connection, so the publisher's delivery costs no round
// trip or pool connection of its own. Read after the commit, they see the
// subscriptions stored by then, exactly as DeliveriesGet called after the
// transaction would; the events the transaction stored are not read back
// (Tx.stored holds them as stored), nor the system flag of a channel it
// read (Tx.system).
type Delivery struct {
	tx      *Tx
	request func() DeliveryRequest
	req     DeliveryRequest // as asked
	sent    DeliveryRequest // what the commit read: req less the stored events
	out     *Deliveries     // nil until a commit loaded it
	err     error           // the loading failed (the commit did not)
}

// DeliveriesGetAtCommit asks that the commit of t load request(), which is
// called as the commit is sent (after the transaction's last write).
func (t *Tx) DeliveriesGetAtCommit(request func() DeliveryRequest) *Delivery {
	d := &Delivery{tx: t, request: request}
	t.tx.after = d
	return d
}

// queue adds d's statements to the commit's batch: the request less the
// events the transaction stored, whose channels join the channels asked
// about (so the usual commit reads one channel's subscriptions only, and
// its system flag unless the transaction read the channel).
func (d *Delivery) queue(b *pgx.Batch) {
	d.req = d.request()
	d.sent = DeliveryRequest{Targets: d.req.Targets, Channels: slices.Clone(d.req.Channels), system: d.tx.system}
	for _, id := range d.req.IDs {
		e, ok := d.tx.stored[id]
		switch {
		case !ok:
			d.sent.IDs = append(d.sent.IDs, id)
		case e.Channel != "" && !slices.Contains(d.sent.Channels, e.Channel):
			d.sent.Channels = append(d.sent.Channels, e.Channel)
		}
	}
	d.out = d.sent.queue(b, d.tx.community)
}

// failed records that the statements after a successful COMMIT failed.
func (d *Delivery) failed(err error) { d.out, d.err = nil, err }

// Deliveries is what the commit loaded, with the stored events; when the
// commit could not carry it (nothing was written, or those statements
// failed) it is loaded now, on its own.
func (d *Delivery) Deliveries(ctx context.Context) (*Deliveries, error) {
	s := d.tx.store
	if d.out == nil {
		if d.err == nil {
			d.req = d.request()
		}
		return s.DeliveriesGet(ctx, d.tx.community, d.req)
	}
	for _, id := range d.req.IDs {
		if e, ok := d.tx.stored[id]; ok {
			e.System = d.out.System[e.Channel]
			d.out.Events[id] = e
		}
	}
	return d.out, nil
}

// The statements of DeliveriesGet reach each row by its whole key, one id at
// a time (a LATERAL subquery with LIMIT 1, or a correlated scalar subquery,
// which Postgres plans as a lookup per id): pgx prepares every statement and
// Postgres may keep a generic plan made while the tables were small and
// unanalyzed, when "community_id = $1" looks like one row. With "id =
// ANY($2)" or a join against an unnest, that plan reads the community's
// every event and filters them, on every delivery, a cost that grows with
// the table (TestDeliveryPlansUseKeys).
const (
	deliveryEventsSQL = `
SELECT e.id, e.raw, COALESCE(e.channel_id, ''),
  COALESCE((SELECT c.channel_type = 'system' FROM channels c
    WHERE c.community_id = $1 AND c.id = e.channel_id), false),
  COALESCE((SELECT t.root_id FROM thread_metadata t
    WHERE t.community_id = $1 AND t.event_id = e.id), '')
FROM unnest($2::text[]) AS x(id)
CROSS JOIN LATERAL (SELECT e.id, e.raw, e.channel_id FROM events e
  WHERE e.community_id = $1 AND e.id = x.id AND e.` + notDeleted + ` LIMIT 1) e`
	deliveryRootsSQL = `
SELECT t.event_id, t.root_id FROM unnest($2::text[]) AS x(id)
CROSS JOIN LATERAL (SELECT t.event_id, t.root_id FROM thread_metadata t
  WHERE t.community_id = $1 AND t.event_id = x.id AND t.root_id IS NOT NULL LIMIT 1) t`
	deliverySystemSQL = `
SELECT x.id FROM unnest($2::text[]) AS x(id)
WHERE (SELECT c.channel_type = 'system' FROM channels c WHERE c.community_id = $1 AND c.id = x.id)`
	deliverySystemOneSQL = `
SELECT c.channel_type = 'system' FROM channels c WHERE c.community_id = $1 AND c.id = $2`
)

// remember records an event this transaction stores.
func (t *Tx) remember(id string, d Delivered) {
	if t.stored == nil {
		t.stored = map[string]Delivered{}
	}
	t.stored[id] = d
}
