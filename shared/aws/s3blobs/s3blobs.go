// Package s3blobs is the media bucket through the AWS SDK's S3 client:
// put, head, a streaming reader for verification, copy, delete, and
// presigned PUT and GET URLs (the bytes of large uploads and of every
// download go between the client and S3, not through a function).
package s3blobs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
)

// ErrNotFound is an object the bucket does not hold.
var ErrNotFound = errors.New("s3blobs: no such object")

// Bucket is one S3 bucket.
type Bucket struct {
	Name    string
	client  *s3.Client
	presign *s3.PresignClient
}

// Open builds the client from the SDK configuration (awssdk.Load). With
// endpoint set (AWS_ENDPOINT_URL_S3, the local S3 server) requests use it
// with path-style addressing, so presigned URLs name it too.
func Open(ctx context.Context, region, bucket, endpoint string) (*Bucket, error) {
	if bucket == "" {
		return nil, errors.New("s3blobs: no bucket name")
	}
	cfg, err := awssdk.Load(ctx, region, endpoint)
	if err != nil {
		return nil, fmt.Errorf("s3blobs: %w", err)
	}
	// Checksums only where S3 requires them: the SDK's default adds a
	// CRC32 trailer (aws-chunked) to every PUT, which S3-compatible
	// local servers do not all read.
	cfg.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	cfg.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
	})
	return &Bucket{Name: bucket, client: client, presign: s3.NewPresignClient(client)}, nil
}

// Put stores body under key.
func (b *Bucket) Put(ctx context.Context, key string, body []byte, contentType string) error {
	_, err := b.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &b.Name, Key: &key, Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))), ContentType: nonEmpty(contentType),
	})
	if err != nil {
		return fmt.Errorf("s3blobs: put %s: %w", key, err)
	}
	return nil
}

// Head returns the size of the object at key; found is false when the
// bucket holds none (err is then nil).
func (b *Bucket) Head(ctx context.Context, key string) (size int64, found bool, err error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.Name, Key: &key})
	if err != nil {
		if err = notFound(err); errors.Is(err, ErrNotFound) {
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("s3blobs: head %s: %w", key, err)
	}
	return aws.ToInt64(out.ContentLength), true, nil
}

// Open streams the object at key (from offset, to its end when length is
// 0).
func (b *Bucket) Open(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	rc, _, err := b.open(ctx, key, offset, length)
	return rc, err
}

// OpenVersion streams the whole object at key with its ETag, which names
// exactly the bytes streamed: the relay reads a staged upload once to
// check its hash, then copies that version only (Copy's ifMatch).
func (b *Bucket) OpenVersion(ctx context.Context, key string) (io.ReadCloser, string, error) {
	return b.open(ctx, key, 0, 0)
}

func (b *Bucket) open(ctx context.Context, key string, offset, length int64) (io.ReadCloser, string, error) {
	in := &s3.GetObjectInput{Bucket: &b.Name, Key: &key}
	if offset > 0 || length > 0 {
		r := "bytes=" + strconv.FormatInt(offset, 10) + "-"
		if length > 0 {
			r += strconv.FormatInt(offset+length-1, 10)
		}
		in.Range = &r
	}
	out, err := b.client.GetObject(ctx, in)
	if err != nil {
		return nil, "", fmt.Errorf("s3blobs: get %s: %w", key, notFound(err))
	}
	return out.Body, aws.ToString(out.ETag), nil
}

// Get reads the whole (small) object at key; found is false when the
// bucket holds none (err is then nil).
func (b *Bucket) Get(ctx context.Context, key string) (body []byte, found bool, err error) {
	rc, err := b.Open(ctx, key, 0, 0)
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer rc.Close()
	if body, err = io.ReadAll(rc); err != nil {
		return nil, false, fmt.Errorf("s3blobs: read %s: %w", key, err)
	}
	return body, true, nil
}

// GetIfNoneMatch reads the whole (small) object at key unless its ETag
// is still etag (an empty etag reads it anyway): changed is false when it
// is, and body is then nil; found is false when the bucket holds none.
// version is the ETag of what was read.
func (b *Bucket) GetIfNoneMatch(ctx context.Context, key, etag string) (body []byte, version string, changed, found bool, err error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.Name, Key: &key, IfNoneMatch: nonEmpty(etag)})
	var api smithy.APIError
	var resp *smithyhttp.ResponseError
	switch {
	case err == nil:
	case etag != "" && (errors.As(err, &api) && api.ErrorCode() == "NotModified" ||
		errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusNotModified):
		return nil, etag, false, true, nil
	case errors.Is(notFound(err), ErrNotFound):
		return nil, "", true, false, nil
	default:
		return nil, "", false, false, fmt.Errorf("s3blobs: get %s: %w", key, err)
	}
	defer out.Body.Close()
	if body, err = io.ReadAll(out.Body); err != nil {
		return nil, "", false, false, fmt.Errorf("s3blobs: read %s: %w", key, err)
	}
	return body, aws.ToString(out.ETag), true, true, nil
}

// List returns the keys under prefix in ascending order, at most limit of
// them (0: every key, a page of up to 1000 per request).
func (b *Bucket) List(ctx context.Context, prefix string, limit int) ([]string, error) {
	in := &s3.ListObjectsV2Input{Bucket: &b.Name, Prefix: &prefix}
	if limit > 0 && limit < 1000 {
		in.MaxKeys = aws.Int32(int32(limit))
	}
	var keys []string
	for {
		out, err := b.client.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("s3blobs: list %s: %w", prefix, err)
		}
		for _, o := range out.Contents {
			keys = append(keys, aws.ToString(o.Key))
			if limit > 0 && len(keys) == limit {
				return keys, nil
			}
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			return keys, nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// Copy copies src to dst within the bucket, with contentType.
func (b *Bucket) Copy(ctx context.Context, src, dst, contentType string) error {
	_, err := b.CopyVersion(ctx, src, dst, contentType, "")
	return err
}

// CopyVersion copies src to dst within the bucket, with contentType, when
// src is still the version (ETag) OpenVersion read: copied is false (err
// nil) when S3 refuses the copy because src was replaced since. An empty
// version copies whatever src holds.
func (b *Bucket) CopyVersion(ctx context.Context, src, dst, contentType, version string) (copied bool, err error) {
	_, err = b.client.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket: &b.Name, Key: &dst, CopySource: aws.String(b.Name + "/" + src),
		ContentType: nonEmpty(contentType), MetadataDirective: types.MetadataDirectiveReplace,
		CopySourceIfMatch: nonEmpty(version),
	})
	var api smithy.APIError
	switch {
	case err == nil:
		return true, nil
	case version != "" && errors.As(err, &api) && api.ErrorCode() == "PreconditionFailed":
		return false, nil
	}
	return false, fmt.Errorf("s3blobs: copy %s to %s: %w", src, dst, notFound(err))
}

// Delete removes the object at key (absent is not an error).
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if _, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.Name, Key: &key}); err != nil {
		return fmt.Errorf("s3blobs: delete %s: %w", key, err)
	}
	return nil
}

// PresignPut is a URL that uploads exactly size bytes whose SHA-256 is
// sha256Hex to key until ttl passes; the signed headers the client must
// send come with it. The checksum is one of them (x-amz-checksum-sha256):
// S3 refuses a body that does not hash to it, so any object at key has
// the announced hash (the relay still checks it: a server that does not
// verify checksums, as the local one, is answered the same way).
func (b *Bucket) PresignPut(ctx context.Context, key string, size int64, contentType, sha256Hex string, ttl time.Duration) (string, http.Header, error) {
	sum, err := hex.DecodeString(sha256Hex)
	if err != nil || len(sum) != sha256.Size {
		return "", nil, fmt.Errorf("s3blobs: presign put %s: %q is not a SHA-256", key, sha256Hex)
	}
	req, err := b.presign.PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket: &b.Name, Key: &key, ContentLength: aws.Int64(size), ContentType: nonEmpty(contentType),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum)),
	}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", nil, fmt.Errorf("s3blobs: presign put %s: %w", key, err)
	}
	return req.URL, req.SignedHeader, nil
}

// PresignGet is a URL that downloads key (S3 serves Range) until ttl
// passes, S3 answering it with the given Content-Type and, when set,
// Content-Disposition (whatever the object's metadata says).
func (b *Bucket) PresignGet(ctx context.Context, key, contentType, disposition string, ttl time.Duration) (string, error) {
	req, err := b.presign.PresignGetObject(ctx, &s3.GetObjectInput{
		Bucket: &b.Name, Key: &key, ResponseContentType: nonEmpty(contentType),
		ResponseContentDisposition: nonEmpty(disposition),
	}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("s3blobs: presign get %s: %w", key, err)
	}
	return req.URL, nil
}

// CreateBucket makes the bucket (localdev and tests; in AWS the stack
// owns it). An existing bucket is not an error.
func (b *Bucket) CreateBucket(ctx context.Context) error {
	_, err := b.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &b.Name})
	var owned *types.BucketAlreadyOwnedByYou
	var exists *types.BucketAlreadyExists
	if err != nil && !errors.As(err, &owned) && !errors.As(err, &exists) {
		return fmt.Errorf("s3blobs: create bucket %s: %w", b.Name, err)
	}
	return nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// notFound maps S3's "no such key" answers to ErrNotFound.
func notFound(err error) error {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	var api smithy.APIError
	if errors.As(err, &nsk) || errors.As(err, &nf) ||
		(errors.As(err, &api) && (api.ErrorCode() == "NotFound" || api.ErrorCode() == "NoSuchKey")) {
		return fmt.Errorf("%w (%v)", ErrNotFound, err)
	}
	return err
}
