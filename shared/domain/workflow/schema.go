// Package workflow is Buzz's channel workflows as pure rules (block/buzz
// crates/buzz-workflow): the kind 30620 definition (YAML or JSON: a
// trigger, steps, conditions, templates) parsed and validated with Buzz's
// schema, limits and error texts (schema.go); durations and cron
// expressions (timing.go); template substitution and the trigger's
// variables (template.go); the `if:`/`filter:` expressions (expr.go); the
// webhook secret and approval tokens (secret.go). No I/O: the runs live in
// shared/service/workflow.
package workflow

import (
	"encoding/json"
	"fmt"

	"strings"

	"gopkg.in/yaml.v3"
)

// Trigger kinds (the `on` field).
const (
	OnMessagePosted = "message_posted"
	OnReactionAdded = "reaction_added"
	OnDiffPosted    = "diff_posted"
	OnSchedule      = "schedule"
	OnWebhook       = "webhook"
)

// Actions (the `action` field).
const (
	ActSendMessage     = "send_message"
	ActSendDM          = "send_dm"
	ActSetChannelTopic = "set_channel_topic"
	ActAddReaction     = "add_reaction"
	ActCallWebhook     = "call_webhook"
	ActRequestApproval = "request_approval"
	ActDelay           = "delay"
	ActIngestDocument  = "ingest_document"
	ActRunAgent        = "run_agent"
	ActBarrier         = "barrier"
	ActVerifyArtifact  = "verify_artifact"
	ActPublishArtifact = "publish_artifact"
)

var triggers = []string{OnMessagePosted, OnReactionAdded, OnDiffPosted, OnSchedule, OnWebhook}

var actions = []string{ActSendMessage, ActSendDM, ActSetChannelTopic, ActAddReaction, ActCallWebhook,
	ActRequestApproval, ActDelay, ActIngestDocument, ActRunAgent, ActBarrier, ActVerifyArtifact, ActPublishArtifact}

// Limits, as Buzz's clients and schema hold them.
const (
	// MaxContentBytes is the largest definition Buzz's SDK and desktop
	// app build (check_content(yaml, 64 KiB)).
	MaxContentBytes = 64 << 10
	// MaxStepIDLength bounds a step id (schema.rs valid_step_id).
	MaxStepIDLength = 64
	// MaxInlineSchemaBytes bounds an inline JSON Schema.
	MaxInlineSchemaBytes = 64 << 10
	// MinIntervalSeconds is the shortest schedule interval.
	MinIntervalSeconds = 60
)

// Def is a workflow definition.
type Def struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Trigger     Trigger `json:"trigger"`
	Steps       []Step  `json:"steps"`
	Enabled     bool    `json:"enabled"`
}

// Trigger is what starts a run; On says which fields apply.
type Trigger struct {
	On       string  `json:"on"`
	Filter   *string `json:"filter,omitempty"`
	Emoji    *string `json:"emoji,omitempty"`
	Cron     *string `json:"cron,omitempty"`
	Interval *string `json:"interval,omitempty"`
}

// Step is one step: an action with its condition, timeout and
// dependencies.
type Step struct {
	ID          string   `json:"id"`
	Name        *string  `json:"name"`
	If          *string  `json:"if"`
	TimeoutSecs *uint64  `json:"timeout_secs"`
	DependsOn   []string `json:"depends_on"`
	Action      Action   `json:"-"`
}

// Action is a step's action; Kind says which fields apply.
type Action struct {
	Kind          string
	Text          string
	Channel       *string
	ReplyInThread bool
	To            string
	Topic         string
	Emoji         string
	URL           string
	Method        *string
	Headers       map[string]string
	Body          *string
	From          string
	Message       string
	Timeout       *string
	Duration      string
	Source        string
	Output        string
	Agent         string
	Identity      string
	Prompt        string
	OutputSchema  any
	Schema        any
	Artifact      string
}

// Error is a definition Buzz refuses: its text is Buzz's WorkflowError
// display ("invalid YAML: …" or "invalid definition: …").
type Error struct {
	YAML bool
	Msg  string
}

func (e *Error) Error() string {
	if e.YAML {
		return "invalid YAML: " + e.Msg
	}
	return "invalid definition: " + e.Msg
}

func yamlErr(format string, a ...any) error {
	return &Error{YAML: true, Msg: fmt.Sprintf(format, a...)}
}
func defErr(format string, a ...any) error { return &Error{Msg: fmt.Sprintf(format, a...)} }

// Parse reads a definition (YAML, or JSON, which YAML reads too) and
// validates it: Buzz's parse_yaml. It never panics.
func Parse(content string) (d *Def, err error) {
	defer func() {
		if r := recover(); r != nil { // the YAML decoder's, on input it cannot read
			d, err = nil, yamlErr("%v", r)
		}
	}()
	if len(content) > MaxContentBytes {
		return nil, defErr("definition exceeds %d bytes", MaxContentBytes)
	}
	var root any
	if err = yaml.Unmarshal([]byte(content), &root); err != nil {
		return nil, yamlErr("%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	m, err := object(root, "")
	if err != nil {
		return nil, err
	}
	d = &Def{Enabled: true}
	if d.Name, err = reqString(m, "name", ""); err != nil {
		return nil, err
	}
	if d.Description, err = optString(m, "description", ""); err != nil {
		return nil, err
	}
	if v, ok := m["enabled"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return nil, typeErr("enabled", v, "a boolean")
		}
		d.Enabled = b
	}
	tv, ok := m["trigger"]
	if !ok {
		return nil, yamlErr("missing field `trigger`")
	}
	if d.Trigger, err = parseTrigger(tv); err != nil {
		return nil, err
	}
	sv, ok := m["steps"]
	if !ok {
		return nil, yamlErr("missing field `steps`")
	}
	list, ok := sv.([]any)
	if !ok {
		return nil, typeErr("steps", sv, "a sequence")
	}
	for i, s := range list {
		st, err := parseStep(s, fmt.Sprintf("steps[%d]", i))
		if err != nil {
			return nil, err
		}
		d.Steps = append(d.Steps, st)
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

func parseTrigger(v any) (Trigger, error) {
	var t Trigger
	m, err := object(v, "trigger")
	if err != nil {
		return t, err
	}
	on, err := reqString(m, "on", "trigger")
	if err != nil {
		return t, err
	}
	if !contains(triggers, on) {
		return t, variantErr("trigger", on, triggers)
	}
	t.On = on
	switch on {
	case OnMessagePosted, OnDiffPosted:
		t.Filter, err = optString(m, "filter", "trigger")
	case OnReactionAdded:
		if t.Emoji, err = optString(m, "emoji", "trigger"); err == nil {
			t.Filter, err = optString(m, "filter", "trigger")
		}
	case OnSchedule:
		if t.Cron, err = optString(m, "cron", "trigger"); err == nil {
			t.Interval, err = optString(m, "interval", "trigger")
		}
	}
	return t, err
}

func parseStep(v any, at string) (Step, error) {
	var s Step
	m, err := object(v, at)
	if err != nil {
		return s, err
	}
	if s.ID, err = reqString(m, "id", at); err != nil {
		return s, err
	}
	if s.Name, err = optString(m, "name", at); err != nil {
		return s, err
	}
	if s.If, err = optString(m, "if", at); err != nil {
		return s, err
	}
	if tv, ok := m["timeout_secs"]; ok && tv != nil {
		n, ok := tv.(int)
		if !ok || n < 0 {
			return s, typeErr(at+".timeout_secs", tv, "u64")
		}
		u := uint64(n)
		s.TimeoutSecs = &u
	}
	s.DependsOn = []string{}
	if dv, ok := m["depends_on"]; ok && dv != nil {
		list, ok := dv.([]any)
		if !ok {
			return s, typeErr(at+".depends_on", dv, "a sequence")
		}
		for _, x := range list {
			str, ok := x.(string)
			if !ok {
				return s, typeErr(at+".depends_on", x, "a string")
			}
			s.DependsOn = append(s.DependsOn, str)
		}
	}
	s.Action, err = parseAction(m, at)
	return s, err
}

func parseAction(m map[string]any, at string) (Action, error) {
	var a Action
	kind, err := reqString(m, "action", at)
	if err != nil {
		return a, err
	}
	if !contains(actions, kind) {
		return a, variantErr(at, kind, actions)
	}
	a.Kind = kind
	req := func(k string) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = reqString(m, k, at)
		return s
	}
	opt := func(k string) *string {
		if err != nil {
			return nil
		}
		var s *string
		s, err = optString(m, k, at)
		return s
	}
	switch kind {
	case ActSendMessage:
		a.Text, a.Channel = req("text"), opt("channel")
		if v, ok := m["reply_in_thread"]; ok && v != nil && err == nil {
			b, ok := v.(bool)
			if !ok {
				return a, typeErr(at+".reply_in_thread", v, "a boolean")
			}
			a.ReplyInThread = b
		}
	case ActSendDM:
		a.To, a.Text = req("to"), req("text")
	case ActSetChannelTopic:
		a.Topic = req("topic")
	case ActAddReaction:
		a.Emoji = req("emoji")
	case ActCallWebhook:
		a.URL, a.Method = req("url"), opt("method")
		if hv, ok := m["headers"]; ok && hv != nil && err == nil {
			hm, ok := hv.(map[string]any)
			if !ok {
				return a, typeErr(at+".headers", hv, "a map")
			}
			a.Headers = map[string]string{}
			for k, v := range hm {
				s, ok := v.(string)
				if !ok {
					return a, typeErr(at+".headers."+k, v, "a string")
				}
				a.Headers[k] = s
			}
		}
		a.Body = opt("body")
	case ActRequestApproval:
		a.From, a.Message, a.Timeout = req("from"), req("message"), opt("timeout")
	case ActDelay:
		a.Duration = req("duration")
	case ActIngestDocument:
		a.Source, a.Output = req("source"), req("output")
	case ActRunAgent:
		a.Agent, a.Identity, a.Prompt = req("agent"), req("identity"), req("prompt")
		if err == nil {
			v, ok := m["output_schema"]
			if !ok {
				return a, yamlErr("%s: missing field `output_schema`", at)
			}
			a.OutputSchema = v
		}
	case ActVerifyArtifact:
		v, ok := m["schema"]
		if !ok {
			return a, yamlErr("%s: missing field `schema`", at)
		}
		a.Schema = v
	case ActPublishArtifact:
		a.Artifact = req("artifact")
	}
	return a, err
}

// Validate holds a parsed definition to Buzz's invariants, in Buzz's order
// and words (schema.rs WorkflowDef::validate).
func (d *Def) Validate() error {
	if strings.TrimSpace(d.Name) == "" {
		return defErr("name is required and must not be empty")
	}
	if len(d.Steps) == 0 {
		return defErr("at least one step is required")
	}
	seen := map[string]int{}
	for i, s := range d.Steps {
		if strings.TrimSpace(s.ID) == "" {
			return defErr("step id must not be empty")
		}
		if !validStepID(s.ID) {
			return defErr("step id '%s' is invalid: must contain only alphanumeric characters and underscores", s.ID)
		}
		if _, dup := seen[s.ID]; dup {
			return defErr("duplicate step id: %s", s.ID)
		}
		seen[s.ID] = i
		switch s.Action.Kind {
		case ActRunAgent:
			if err := checkIdentity(s.ID, s.Action.Identity); err != nil {
				return err
			}
			if err := checkInlineSchema(s.ID, s.Action.OutputSchema); err != nil {
				return err
			}
		case ActVerifyArtifact:
			if err := checkInlineSchema(s.ID, s.Action.Schema); err != nil {
				return err
			}
		}
	}
	for i, s := range d.Steps {
		deps := map[string]bool{}
		for _, dep := range s.DependsOn {
			if deps[dep] {
				return defErr("step '%s': duplicate dependency '%s'", s.ID, dep)
			}
			deps[dep] = true
			at, ok := seen[dep]
			if !ok {
				return defErr("step '%s': unknown dependency '%s'", s.ID, dep)
			}
			if at >= i {
				return defErr("step '%s': dependency '%s' must reference an earlier step", s.ID, dep)
			}
		}
	}
	if !d.Trigger.HasMessage() {
		for _, s := range d.Steps {
			if s.Action.Kind == ActSendMessage && s.Action.ReplyInThread {
				return defErr("step '%s': reply_in_thread requires a message-based trigger (message_posted, reaction_added, or diff_posted); schedule and webhook triggers have no message to reply to", s.ID)
			}
		}
	}
	if d.Trigger.On == OnSchedule {
		c, iv := d.Trigger.Cron, d.Trigger.Interval
		if c == nil && iv == nil {
			return defErr("schedule trigger requires either 'cron' or 'interval'")
		}
		if c != nil && iv != nil {
			return defErr("schedule trigger cannot specify both 'cron' and 'interval'; use one or the other")
		}
		if c != nil {
			if _, err := ParseCron(*c); err != nil {
				return defErr("invalid cron expression '%s': %v", *c, err)
			}
		}
		if iv != nil {
			secs, err := DurationSeconds(*iv)
			if err != nil {
				return defErr("invalid interval '%s': expected a duration like '30m', '1h', or '60s'", *iv)
			}
			if secs < MinIntervalSeconds {
				return defErr("interval must be at least 60s (cron loop ticks every 60 seconds)")
			}
		}
	}
	return nil
}

// HasMessage reports whether the trigger carries a triggering message.
func (t Trigger) HasMessage() bool {
	return t.On == OnMessagePosted || t.On == OnReactionAdded || t.On == OnDiffPosted
}

// RequiresElevatedAuthority is SEC-006: a definition with a call_webhook
// step can send channel content anywhere, so its owner must be an owner
// or admin of the channel, at save and at every run.
func (d *Def) RequiresElevatedAuthority() bool {
	for _, s := range d.Steps {
		if s.Action.Kind == ActCallWebhook {
			return true
		}
	}
	return false
}

// RequiresDurableScheduler reports whether the definition needs Buzz's
// DAG scheduler (dependencies or the agent actions), which this relay
// does not run yet: its runs fail with "action not implemented".
func (d *Def) RequiresDurableScheduler() bool {
	for _, s := range d.Steps {
		if len(s.DependsOn) > 0 {
			return true
		}
		switch s.Action.Kind {
		case ActIngestDocument, ActRunAgent, ActBarrier, ActVerifyArtifact, ActPublishArtifact:
			return true
		}
	}
	return false
}

func validStepID(id string) bool {
	if id == "" || len(id) > MaxStepIDLength {
		return false
	}
	for _, c := range id {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func checkIdentity(step, id string) error {
	if len(id)%2 != 0 {
		return defErr("step '%s': agent identity is not hex: Odd number of digits", step)
	}
	for i, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return defErr("step '%s': agent identity is not hex: Invalid character '%c' at position %d", step, c, i)
		}
	}
	if len(id) != 64 || id != strings.ToLower(id) {
		return defErr("step '%s': agent identity must be 32 lowercase hex bytes", step)
	}
	return nil
}

// checkInlineSchema holds an inline JSON Schema to an object of at most
// MaxInlineSchemaBytes. (Buzz also compiles it with a JSON Schema
// validator; here a schema is checked for shape and size only.)
func checkInlineSchema(step string, v any) error {
	if _, ok := v.(map[string]any); !ok {
		return defErr("step '%s': inline JSON Schema must be an object", step)
	}
	b, err := json.Marshal(jsonable(v))
	if err != nil {
		return defErr("%v", err)
	}
	if len(b) > MaxInlineSchemaBytes {
		return defErr("step '%s': inline JSON Schema exceeds 64 KiB", step)
	}
	return nil
}

// jsonable turns YAML's maps into JSON's (yaml.v3 keys a nested map by
// string already; other keys are printed).
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = jsonable(x)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[fmt.Sprint(k)] = jsonable(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = jsonable(x)
		}
		return out
	}
	return v
}

func object(v any, at string) (map[string]any, error) {
	switch t := v.(type) {
	case map[string]any:
		return t, nil
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[fmt.Sprint(k)] = x
		}
		return out, nil
	}
	if at == "" {
		return nil, typeErr("", v, "struct WorkflowDef")
	}
	return nil, typeErr(at, v, "a map")
}

func reqString(m map[string]any, key, at string) (string, error) {
	v, ok := m[key]
	if !ok {
		if at == "" {
			return "", yamlErr("missing field `%s`", key)
		}
		return "", yamlErr("%s: missing field `%s`", at, key)
	}
	s, ok := v.(string)
	if !ok {
		return "", typeErr(join(at, key), v, "a string")
	}
	return s, nil
}

func optString(m map[string]any, key, at string) (*string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, typeErr(join(at, key), v, "a string")
	}
	return &s, nil
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func typeErr(at string, v any, want string) error {
	var got string
	switch t := v.(type) {
	case nil:
		got = "unit value"
	case bool:
		got = fmt.Sprintf("boolean `%v`", t)
	case int, int64, uint64:
		got = fmt.Sprintf("integer `%v`", t)
	case float64:
		got = fmt.Sprintf("floating point `%v`", t)
	case string:
		got = fmt.Sprintf("string %q", t)
	case []any:
		got = "sequence"
	case map[string]any, map[any]any:
		got = "map"
	default:
		got = fmt.Sprintf("%T", v)
	}
	if at == "" {
		return yamlErr("invalid type: %s, expected %s", got, want)
	}
	return yamlErr("%s: invalid type: %s, expected %s", at, got, want)
}

func variantErr(at, got string, want []string) error {
	q := make([]string, len(want))
	for i, w := range want {
		q[i] = "`" + w + "`"
	}
	return yamlErr("%s: unknown variant `%s`, expected one of %s", at, got, strings.Join(q, ", "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Canonical is the definition as stored JSON (Buzz keeps the canonical
// JSON beside the event): every field, the action's flattened into its
// step.
func (d *Def) Canonical() []byte {
	type out struct {
		Name        string           `json:"name"`
		Description *string          `json:"description"`
		Trigger     Trigger          `json:"trigger"`
		Steps       []map[string]any `json:"steps"`
		Enabled     bool             `json:"enabled"`
	}
	o := out{Name: d.Name, Description: d.Description, Trigger: d.Trigger, Enabled: d.Enabled, Steps: []map[string]any{}}
	for _, s := range d.Steps {
		m := map[string]any{"id": s.ID, "name": s.Name, "if": s.If, "timeout_secs": s.TimeoutSecs, "depends_on": s.DependsOn}
		for k, v := range s.Action.fields() {
			m[k] = v
		}
		o.Steps = append(o.Steps, m)
	}
	b, _ := json.Marshal(o) // only strings, numbers, maps: never fails
	return b
}

func (a Action) fields() map[string]any {
	m := map[string]any{"action": a.Kind}
	switch a.Kind {
	case ActSendMessage:
		m["text"], m["channel"], m["reply_in_thread"] = a.Text, a.Channel, a.ReplyInThread
	case ActSendDM:
		m["to"], m["text"] = a.To, a.Text
	case ActSetChannelTopic:
		m["topic"] = a.Topic
	case ActAddReaction:
		m["emoji"] = a.Emoji
	case ActCallWebhook:
		m["url"], m["method"], m["headers"], m["body"] = a.URL, a.Method, a.Headers, a.Body
	case ActRequestApproval:
		m["from"], m["message"], m["timeout"] = a.From, a.Message, a.Timeout
	case ActDelay:
		m["duration"] = a.Duration
	case ActIngestDocument:
		m["source"], m["output"] = a.Source, a.Output
	case ActRunAgent:
		m["agent"], m["identity"], m["prompt"], m["output_schema"] = a.Agent, a.Identity, a.Prompt, jsonable(a.OutputSchema)
	case ActVerifyArtifact:
		m["schema"] = jsonable(a.Schema)
	case ActPublishArtifact:
		m["artifact"] = a.Artifact
	}
	return m
}
