// Package nip29 holds the channel rules of NIP-29 and NIP-CL
// (spec/NIP-CL.md) that need no database, one file per rule:
//
//   - create.go: channel creation (kind 9007), channel types and visibility;
//   - edit.go: metadata edits (kind 9002);
//   - labels.go: NIP-CL channel labels (t tags of 9007 and 9002);
//   - roles.go: roles and their order, put-user (9000) and remove-user (9001);
//   - statetags.go: the tags of the relay-signed state events
//     (39000-39002), with NIP-CL's identity tags (t type, t labels, P creator,
//     created_at);
//   - reply.go: NIP-10 thread markers;
//   - tags.go: reading tags and channel ids.
//
// Kind numbers are shared/kinds'.
package nip29
