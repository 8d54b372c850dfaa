package wsrelay

import (
	"context"
	"errors"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// target is the client message an answer belongs to, as far as it can be
// told: an EVENT or AUTH by its event id, a REQ or COUNT by its
// subscription id.
type target struct {
	verb, sub, event string
	// matched: the answer can name the message (an OK for its event id, a
	// CLOSED for its subscription).
	matched bool
}

// answerTo is the target of a parsed message.
func answerTo(msg *Message) target {
	t := target{verb: msg.Verb, sub: msg.SubID, matched: true}
	if msg.Event != nil {
		t.event = msg.Event.ID
	}
	return t
}

// fail is wsrelay's one table from an error to its wire form: the NIP-01
// prefixed text reject.Map gives (logged by reject.Report under op when
// the client is not told why), as OK false for an EVENT or AUTH, CLOSED
// for a REQ or COUNT, NEG-ERR for a NIP-77 message, and a NOTICE for
// anything it cannot be matched to.
func (p *replier) fail(ctx context.Context, op string, to target, err error) {
	why := reject.Report(ctx, p.r.Log, "wsrelay: "+op, err).Text
	switch {
	case to.matched && (to.verb == VerbEvent || to.verb == VerbAuth):
		p.send(ctx, okMessage(to.event, false, why))
	case to.matched && (to.verb == VerbReq || to.verb == VerbCount):
		p.send(ctx, array("CLOSED", to.sub, why))
	case to.matched && negentropy(to.verb):
		p.send(ctx, array(VerbNegErr, to.sub, why))
	default:
		p.send(ctx, notice(why))
	}
}

// unanswered answers a message the relay could not serve at all (its
// connection could not be loaded, e.g. while the database resumes) with
// why err stopped it, in the form the client can match to it.
func (p *replier) unanswered(ctx context.Context, body []byte, op string, err error) {
	msg := p.parse(ctx, body)
	if msg == nil { // answered as malformed; err is still logged
		reject.Report(ctx, p.r.Log, "wsrelay: "+op, err)
		return
	}
	p.fail(ctx, op, answerTo(msg), err)
}

// parse reads one client message; a malformed one is answered (matched to
// what it was, where that can be told) and gives nil.
func (p *replier) parse(ctx context.Context, body []byte) *Message {
	msg, err := Parse(body)
	if err != nil {
		p.parseFailed(ctx, err)
		return nil
	}
	return msg
}

// parseFailed answers a message Parse refused.
func (p *replier) parseFailed(ctx context.Context, err error) {
	var pe *ParseError
	if errors.As(err, &pe) {
		p.fail(ctx, "parse", target{verb: pe.Verb, sub: pe.SubID, event: pe.EventID,
			matched: (pe.Verb == VerbEvent || pe.Verb == VerbAuth) && pe.EventID != "" ||
				(pe.Verb == VerbReq || pe.Verb == VerbCount || negentropy(pe.Verb)) && pe.SubID != ""}, pe.Err)
	}
}

// negentropy reports whether verb is a NIP-77 client message, answered
// NEG-ERR when it fails.
func negentropy(verb string) bool {
	return verb == VerbNegOpen || verb == VerbNegMsg || verb == VerbNegClose
}
