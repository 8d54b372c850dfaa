package wsrelay

import (
	"context"
	"errors"
)

// unanswered answers a message the relay could not serve at all (its
// connection could not be loaded, e.g. while the database resumes) with
// why, as refuse does.
func (p *replier) unanswered(ctx context.Context, body []byte, why string) {
	if msg := p.parse(ctx, body); msg != nil {
		p.refuse(ctx, msg, why)
	}
}

// refuse answers msg with why (NIP-01 prefixed) in the form the client can
// match to it: OK false for EVENT and AUTH, CLOSED for REQ and COUNT, a
// NOTICE for anything else.
func (p *replier) refuse(ctx context.Context, msg *Message, why string) {
	switch msg.Verb {
	case VerbEvent, VerbAuth:
		p.send(ctx, okMessage(msg.Event.ID, false, why))
	case VerbReq, VerbCount:
		p.send(ctx, array("CLOSED", msg.SubID, why))
	default:
		p.send(ctx, notice(why))
	}
}

// parse reads one client message; a malformed one is answered (matched to
// what it was, where that can be told) and gives nil.
func (p *replier) parse(ctx context.Context, body []byte) *Message {
	msg, err := Parse(body)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			p.parseError(ctx, pe)
		}
		return nil
	}
	return msg
}
