package workflow

import "fmt"

// Authority is what SEC-006 asks about a workflow's owner now: the
// owner's role in the workflow's channel ("" none: removed or never a
// member), whether the owner is banned in the community, and whether the
// channel is gone.
type Authority struct {
	Role         string
	Banned, Gone bool
	Elevated     bool // the role is owner or admin
}

// Unauthorized is Buzz's "unauthorized: …" (error code owner_unauthorized):
// the owner may not run the workflow now.
type Unauthorized struct{ Msg string }

func (e *Unauthorized) Error() string { return "unauthorized: " + e.Msg }

// CheckOwner is SEC-006, asked before every run at every door that starts
// or resumes one: the owner is still an unbanned member of a live
// channel, and a definition that calls webhooks (elevated) has an owner
// or admin owner now, not only when it was saved.
func CheckOwner(a Authority, elevated bool) error {
	switch {
	case a.Gone:
		return &Unauthorized{"the workflow's channel no longer exists"}
	case a.Banned:
		return &Unauthorized{"the workflow's owner is banned"}
	case a.Role == "":
		return &Unauthorized{"the workflow's owner is no longer a member of its channel"}
	case elevated && !a.Elevated:
		return &Unauthorized{fmt.Sprintf("call_webhook requires the owner to be a channel owner or admin (role %q)", a.Role)}
	}
	return nil
}

// Code is a run error's stable classification (Buzz's WorkflowError::code).
func Code(err error) string {
	switch e := err.(type) {
	case *Unauthorized:
		return "owner_unauthorized"
	case *ConditionError:
		return "condition_evaluation_failed"
	case *TemplateError:
		return "template_resolution_failed"
	case *StepTimeout:
		return "step_timeout"
	case *WebhookError:
		return "webhook_failed"
	case *NotImplemented:
		return "action_not_implemented"
	case *Error:
		if e.YAML {
			return "invalid_yaml"
		}
		return "invalid_definition"
	}
	return "database_error"
}

// StepTimeout is Buzz's "step '{id}' timed out after {n}s".
type StepTimeout struct {
	Step string
	Secs uint64
}

func (e *StepTimeout) Error() string {
	return fmt.Sprintf("step '%s' timed out after %ds", e.Step, e.Secs)
}

// WebhookError is Buzz's "webhook error: …" (a call_webhook, or an action
// sink failure).
type WebhookError struct{ Msg string }

func (e *WebhookError) Error() string { return "webhook error: " + e.Msg }

// NotImplemented is Buzz's "action not implemented: …".
type NotImplemented struct{ Action string }

func (e *NotImplemented) Error() string { return "action not implemented: " + e.Action }

// CheckApprover is Buzz's approver spec: "" or "any" lets any member of
// the channel decide, a 64-hex key only that key; anything else (a role,
// "@someone") is refused, fail-closed, as Buzz refuses it.
func CheckApprover(spec, pubkey string) error {
	switch {
	case spec == "" || spec == "any":
		return nil
	case len(spec) == 64 && isHex(spec):
		if equalFold(spec, pubkey) {
			return nil
		}
		return fmt.Errorf("not the designated approver for this request")
	}
	return fmt.Errorf("approver spec '%s' is not yet supported", spec)
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
