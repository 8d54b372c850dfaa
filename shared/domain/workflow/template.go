package workflow

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/nbd-wtf/go-nostr/nip19"
)

// TriggerContext is what a run knows of what started it (Buzz's
// TriggerContext, stored with the run as JSON).
type TriggerContext struct {
	Text            string            `json:"text"`
	Author          string            `json:"author"`
	ChannelID       string            `json:"channel_id"`
	Timestamp       string            `json:"timestamp"`
	Emoji           string            `json:"emoji"`
	MessageID       string            `json:"message_id"`
	RootMessageID   string            `json:"root_message_id"`
	ParentMessageID string            `json:"parent_message_id"`
	WebhookFields   map[string]string `json:"webhook_fields"`
}

// Field looks a trigger field up by name; a webhook's body fields after
// the standard ones.
func (c *TriggerContext) Field(name string) (string, bool) {
	switch name {
	case "text":
		return c.Text, true
	case "author":
		return c.Author, true
	case "channel_id":
		return c.ChannelID, true
	case "timestamp":
		return c.Timestamp, true
	case "emoji":
		return c.Emoji, true
	case "message_id":
		return c.MessageID, true
	case "root_message_id":
		return c.RootMessageID, true
	case "parent_message_id":
		return c.ParentMessageID, true
	}
	v, ok := c.WebhookFields[name]
	return v, ok
}

// Outputs are the completed steps' outputs by step id.
type Outputs map[string]map[string]any

// Resolve substitutes {{trigger.X}} and {{steps.ID.output.X}} in s, with
// the filters truncate(N), npub (alias truncate_pubkey) and json; an
// unknown variable stays as written, an unclosed {{ ends the work.
func Resolve(s string, c *TriggerContext, out Outputs) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i+2:]
		j := strings.Index(rest, "}}")
		if j < 0 {
			b.WriteString("{{")
			b.WriteString(rest)
			return b.String(), nil
		}
		expr := strings.TrimSpace(rest[:j])
		rest = rest[j+2:]
		path, filter, hasFilter := strings.Cut(expr, "|")
		v, ok := lookup(strings.TrimSpace(path), c, out)
		if !ok {
			b.WriteString("{{" + expr + "}}")
			continue
		}
		if hasFilter {
			var err error
			if v, err = applyFilter(v, strings.TrimSpace(filter)); err != nil {
				return "", err
			}
		}
		b.WriteString(v)
	}
	b.WriteString(rest)
	return b.String(), nil
}

func lookup(path string, c *TriggerContext, out Outputs) (string, bool) {
	if f, ok := strings.CutPrefix(path, "trigger."); ok {
		return c.Field(f)
	}
	if r, ok := strings.CutPrefix(path, "steps."); ok {
		parts := strings.SplitN(r, ".", 3)
		if len(parts) != 3 || parts[1] != "output" {
			return "", false
		}
		o, ok := out[parts[0]]
		if !ok {
			return "", false
		}
		v, ok := o[parts[2]]
		if !ok {
			return "", false
		}
		return jsonString(v), true
	}
	return "", false
}

func jsonString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(t)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TemplateError is Buzz's "template error: …".
type TemplateError struct{ Msg string }

func (e *TemplateError) Error() string { return "template error: " + e.Msg }

func applyFilter(v, f string) (string, error) {
	if inner, ok := strings.CutPrefix(f, "truncate("); ok && strings.HasSuffix(inner, ")") {
		inner = strings.TrimSpace(strings.TrimSuffix(inner, ")"))
		n, err := strconv.ParseUint(inner, 10, 32)
		if err != nil {
			return "", &TemplateError{fmt.Sprintf("truncate() requires a number, got: %s", inner)}
		}
		r := []rune(v)
		if uint64(len(r)) > n {
			r = r[:n]
		}
		return string(r), nil
	}
	switch f {
	case "npub", "truncate_pubkey":
		if len(v) == 64 {
			if npub, err := nip19.EncodePublicKey(v); err == nil {
				return npub, nil
			}
		}
		return v, nil
	case "json":
		b, _ := json.Marshal(v)
		return string(b), nil
	}
	return "", &TemplateError{"unknown filter: " + f}
}

// Vars are the condition variables of a run: trigger_X for each trigger
// field (a webhook's fields first, never over a standard one), and
// steps_ID_output_F for each completed step's output.
func Vars(c *TriggerContext, out Outputs) map[string]any {
	v := map[string]any{}
	for k, x := range c.WebhookFields {
		if strings.HasPrefix(k, "trigger_") || strings.HasPrefix(k, "steps_") {
			continue
		}
		v["trigger_"+k] = x
	}
	for _, k := range []string{"text", "author", "channel_id", "timestamp", "emoji", "message_id", "root_message_id", "parent_message_id"} {
		s, _ := c.Field(k)
		v["trigger_"+k] = s
	}
	for id, o := range out {
		for f, x := range o {
			if n, ok := x.(float64); ok && n == float64(int64(n)) {
				x = int64(n)
			}
			if n, ok := x.(int); ok {
				x = int64(n)
			}
			v["steps_"+id+"_output_"+f] = x
		}
	}
	return v
}
