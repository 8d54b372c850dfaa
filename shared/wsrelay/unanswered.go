package wsrelay

import (
	"context"
	"errors"
)

// unanswered answers a message the relay could not serve at all (its
// connection could not be loaded, e.g. while the database resumes) in the
// form the client can match to what it sent: OK false for EVENT and AUTH,
// CLOSED for REQ and COUNT, a NOTICE for anything else.
func (p *replier) unanswered(ctx context.Context, body []byte, why string) {
	msg := p.parse(ctx, body)
	if msg == nil {
		return
	}
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
