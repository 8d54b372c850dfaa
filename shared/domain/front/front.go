// Package front is what the relay's HTTP routes and the front in front of
// them agree on (CloudFront's edge function, infra/edgeupload.js, in AWS;
// the emulator's Front, localdev/emulator/front.go, locally): which
// requests the front may stream from the media bucket and how the relay
// tells it to. The bytes of such an answer never pass through a function
// (API Gateway carries a binary answer base64-encoded, a Lambda answer is
// at most 6 MB).
package front

// StreamPattern is the paths (path.Match's pattern; CloudFront's
// behaviour path, where * spans any characters) whose GET the front sends
// to the relay first and may stream: Buzz desktop's feedback attachments
// (GET /api/admin/v1/feedback/{id}/attachments/{sha256}).
const StreamPattern = "/api/admin/v1/feedback/*/attachments/*"

// StreamHeader marks the relay's stream answer (bridge.Stream): the front
// GETs its URL from the bucket and streams that to the client on the same
// request; an answer without it is given to the client as it is.
const StreamHeader = "x-buzz-stream"
