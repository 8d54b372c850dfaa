package main

import (
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"
)

// Media (issue 30): Blossom and Buzz's /media routes keep blobs in one
// private S3 bucket per stack. The functions that serve media get the
// bucket and its limits in their environment (mediaEnv) and the S3
// actions of MediaGrants; downloads are redirects to presigned S3 GETs, so
// blob bytes never pass through a function. See docs/deploy.md, "Media".

// Object key prefixes, the contract with the media code: a stored blob is
// blobs/<community>/<sha256>, a large upload staged by a presigned PUT is
// uploads/<community>/<upload-id> until the relay verifies its SHA-256 and
// completes it, a deleted blob waits in trash/<community>/<sha256>.
const (
	MediaBlobsPrefix   = "blobs/"
	MediaUploadsPrefix = "uploads/"
	MediaTrashPrefix   = "trash/"
)

// Lifecycle of the bucket, in days.
const (
	// An upload never completed (the client never PUT, or the relay
	// refused the bytes) is gone a day later.
	MediaUploadsExpireDays = 1
	// A multipart upload left incomplete anywhere in the bucket is
	// aborted (its parts are billed until then).
	MediaAbortMultipartDays = 1
	// A deleted blob can be restored (copied back) for a week.
	MediaTrashExpireDays = 7
)

// Defaults of the media limits (context keys in brackets), given to the
// functions as MEDIA_* variables; the media code reads them once and
// advertises them in NIP-11 and its preflight answers.
const (
	// MEDIA_MAX_BYTES (mediaMaxBytes): the largest blob, 100 MiB.
	DefaultMediaMaxBytes = 104857600
	// MEDIA_DIRECT_MAX_BYTES (mediaDirectMaxBytes): the largest body that
	// goes through a function, 4 MiB: base64 in the invoke's JSON makes it
	// 5.6 MB, under Lambda's 6 MB request payload (6291456 bytes) with
	// room for the event's headers. Larger uploads go by presigned PUT.
	DefaultMediaDirectMaxBytes = 4194304
	// MEDIA_KEY_BYTES_PER_DAY (mediaKeyBytesPerDay): uploads per key per
	// day, 1 GiB.
	DefaultMediaKeyBytesPerDay = 1073741824
	// MEDIA_COMMUNITY_BYTES_STORED (mediaCommunityBytesStored): stored per
	// community, 10 GiB.
	DefaultMediaCommunityBytesStored = 10737418240
	// MEDIA_PRESIGN_TTL (mediaPresignTTL): how long a presigned PUT or GET
	// is valid.
	DefaultMediaPresignTTL = "15m"
	// MediaDirectCeiling is the most mediaDirectMaxBytes may be (see
	// DefaultMediaDirectMaxBytes); MediaMaxCeiling is S3's largest single
	// PUT (5 GiB), which a presigned upload is.
	MediaDirectCeiling = 4194304
	MediaMaxCeiling    = 5368709120
)

// MediaGrant is one statement of a function's S3 access: Actions on the
// objects under Prefix.
type MediaGrant struct {
	Sid     string
	Prefix  string
	Actions []string
}

// MediaGrants is every function's S3 access, all in this one table, by
// function name; a function with none neither gets the bucket in its
// environment nor any S3 grant. A copy (trash, completing a staged
// upload) is s3:GetObject on the source and s3:PutObject on the target.
//
//   - ingest serves the writing routes (PUT/HEAD /upload, DELETE /<sha256>
//     and Buzz's /media/upload routes): it stores direct uploads under
//     blobs/, presigns PUTs to uploads/, reads a staged upload to verify
//     its SHA-256, copies it to blobs/ and deletes it, moves a deleted
//     blob to trash/ (and back), and aborts a multipart upload it gives up.
//   - query serves the reading routes (GET/HEAD /<sha256>, GET /list,
//     GET/HEAD /media/<sha256>): it presigns GETs of blobs/ and, when a
//     staged upload has arrived, completes it (shared/service/media): reads
//     it from uploads/, copies it to blobs/ once its SHA-256 matches, and
//     deletes the staged object. It writes nothing else.
//
// Both may list the bucket (MediaListers): without s3:ListBucket, S3
// answers a HEAD or GET of a missing key with 403 instead of 404, and the
// media code could not tell "not there" from "not allowed".
var MediaGrants = map[string][]MediaGrant{
	"ingest": {
		{Sid: "MediaBlobs", Prefix: MediaBlobsPrefix, Actions: []string{"s3:DeleteObject", "s3:GetObject", "s3:PutObject"}},
		{Sid: "MediaUploads", Prefix: MediaUploadsPrefix, Actions: []string{"s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject", "s3:PutObject"}},
		{Sid: "MediaTrash", Prefix: MediaTrashPrefix, Actions: []string{"s3:DeleteObject", "s3:GetObject", "s3:PutObject"}},
	},
	"query": {
		{Sid: "MediaBlobs", Prefix: MediaBlobsPrefix, Actions: []string{"s3:GetObject", "s3:PutObject"}},
		{Sid: "MediaUploads", Prefix: MediaUploadsPrefix, Actions: []string{"s3:DeleteObject", "s3:GetObject"}},
	},
}

// MediaListers may s3:ListBucket on the media bucket (see MediaGrants).
var MediaListers = map[string]bool{"ingest": true, "query": true}

// newMediaBucket is the media bucket: private (every public access
// blocked, ACLs off), SSE-S3 encrypted, TLS 1.2+ only, unversioned, with
// the lifecycle above and CORS for browsers that PUT to and GET from
// presigned URLs. It is retained when the stack is deleted or it is
// replaced (except when the first create rolls back): blobs are members'
// data, and CloudFormation cannot delete a bucket that holds any.
func newMediaBucket(stack awscdk.Stack, s Settings) awss3.Bucket {
	days := func(n float64) awscdk.Duration { return awscdk.Duration_Days(jsii.Number(n)) }
	return awss3.NewBucket(stack, jsii.String("Media"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		MinimumTLSVersion: jsii.Number(1.2),
		Versioned:         jsii.Bool(false),
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN_ON_UPDATE_OR_DELETE,
		LifecycleRules: &[]*awss3.LifecycleRule{
			{Id: jsii.String("expire-staged-uploads"), Prefix: jsii.String(MediaUploadsPrefix), Expiration: days(MediaUploadsExpireDays)},
			{Id: jsii.String("expire-trash"), Prefix: jsii.String(MediaTrashPrefix), Expiration: days(MediaTrashExpireDays)},
			{Id: jsii.String("abort-incomplete-multipart"), AbortIncompleteMultipartUploadAfter: days(MediaAbortMultipartDays)},
		},
		Cors: &[]*awss3.CorsRule{{
			Id:             jsii.String("browser-presigned"),
			AllowedMethods: &[]awss3.HttpMethods{awss3.HttpMethods_GET, awss3.HttpMethods_HEAD, awss3.HttpMethods_PUT},
			AllowedOrigins: jsii.Strings("*"),
			AllowedHeaders: jsii.Strings("*"),
			ExposedHeaders: jsii.Strings("Accept-Ranges", "Content-Length", "Content-Range", "Content-Type", "ETag"),
			MaxAge:         jsii.Number(3600),
		}},
	})
}

// grantMedia attaches fn's rows of MediaGrants (and s3:ListBucket for the
// MediaListers) on bucket.
func grantMedia(name string, bucket awss3.Bucket, add func(awsiam.PolicyStatement)) {
	for _, g := range MediaGrants[name] {
		actions := append([]string(nil), g.Actions...)
		sort.Strings(actions)
		add(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String(g.Sid),
			Actions:   jsii.Strings(actions...),
			Resources: jsii.Strings(*bucket.ArnForObjects(jsii.String(g.Prefix + "*"))),
		}))
	}
	if MediaListers[name] {
		add(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("MediaList"),
			Actions:   jsii.Strings("s3:ListBucket"),
			Resources: jsii.Strings(*bucket.BucketArn()),
		}))
	}
}
