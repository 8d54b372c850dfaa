package s3local

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/johannesboyne/gofakes3"
	"github.com/spf13/afero"
)

// prefixLister is the backend with S3's cost of a LIST by prefix: the
// keys under the prefix, read from the folder the prefix names. gofakes3's
// folder backend walks the whole bucket for a prefix without a delimiter
// and reads each listed object's metadata file, so every LIST cost as
// much as the bucket held (with a session's objects in it, each of a
// write's LISTs grew with every other key's pending subscriptions). Its
// listings carry no ETag (no caller here reads one); any other LIST is
// the backend's.
type prefixLister struct {
	gofakes3.Backend
	fs afero.Fs // the backend's base: buckets under buckets/
}

func (p prefixLister) ListBucket(bucket string, prefix *gofakes3.Prefix, page gofakes3.ListBucketPage) (*gofakes3.ObjectList, error) {
	if prefix == nil || !prefix.HasPrefix || prefix.HasDelimiter || !page.IsEmpty() || gofakes3.ValidateBucketName(bucket) != nil {
		return p.Backend.ListBucket(bucket, prefix, page)
	}
	root := path.Join("buckets", bucket)
	if ok, err := afero.DirExists(p.fs, filepath.FromSlash(root)); err != nil || !ok {
		return p.Backend.ListBucket(bucket, prefix, page) // its answer for a missing bucket
	}
	dir := prefix.Prefix[:strings.LastIndexByte(prefix.Prefix, '/')+1]
	var items []*gofakes3.Content
	err := afero.Walk(p.fs, filepath.FromSlash(path.Join(root, dir)), func(name string, info os.FileInfo, err error) error {
		if err != nil {
			if os.IsNotExist(err) { // nothing under the prefix, or deleted while listed
				return nil
			}
			return err
		}
		if info.IsDir() {
			return nil
		}
		key := strings.TrimPrefix(filepath.ToSlash(name), root+"/")
		if strings.HasPrefix(key, prefix.Prefix) {
			items = append(items, &gofakes3.Content{Key: key, LastModified: gofakes3.NewContentTime(info.ModTime()), Size: info.Size()})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(items, func(a, b *gofakes3.Content) int { return strings.Compare(a.Key, b.Key) })
	out := gofakes3.NewObjectList()
	for _, c := range items {
		out.Add(c)
	}
	return out, nil
}
