package bundle

import (
	"archive/tar"
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVerifyRefusesTamperedBundles(t *testing.T) {
	_, items := upstream(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.tar")
	create(t, items, good, CompressionNone)
	entries := readEntries(t, good)
	// blob is the first blob entry after the charts and metadata.
	blob := -1
	for i, e := range entries {
		if strings.HasPrefix(e.name, "images/blobs/") {
			blob = i
			break
		}
	}
	if blob < 0 {
		t.Fatal("the bundle has no blob")
	}
	blobName := entries[blob].name
	tests := tamperCases(blob, blobName)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".tar")
			writeEntries(t, file, tt.edit(append([]entry(nil), entries...)))
			_, err := Verify(file)
			if err == nil {
				t.Fatal("a tampered bundle was accepted")
			}
			if !strings.Contains(err.Error(), file) {
				t.Errorf("error %q does not name the bundle", err)
			}
			if tt.errMsg != "" {
				if !strings.Contains(err.Error(), tt.errMsg) {
					t.Errorf("error %q, want one containing %q", err, tt.errMsg)
				}
				return
			}
			var tampered *TamperedError
			if !errors.As(err, &tampered) {
				t.Fatalf("error %v is not a TamperedError", err)
			}
			if diff := cmp.Diff(tt.want, tampered); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("unchanged rewrite is accepted", func(t *testing.T) {
		file := filepath.Join(dir, "rewritten.tar")
		writeEntries(t, file, entries)
		if _, err := Verify(file); err != nil {
			t.Fatal(err)
		}
	})
}

// tamperCase is one way to damage a bundle and the verdict it must get.
type tamperCase struct {
	name   string
	edit   func([]entry) []entry
	want   *TamperedError
	errMsg string
}

// tamperCases damage entry blob, named blobName.
func tamperCases(blob int, blobName string) []tamperCase {
	return []tamperCase{
		{
			name: "changed byte",
			edit: func(es []entry) []entry {
				es[blob].data = append([]byte(nil), es[blob].data...)
				es[blob].data[len(es[blob].data)/2] ^= 0x01
				return es
			},
			want: &TamperedError{Changed: []string{blobName}},
		},
		{
			name: "deleted file",
			edit: func(es []entry) []entry { return append(es[:blob:blob], es[blob+1:]...) },
			want: &TamperedError{Missing: []string{blobName}},
		},
		{
			name: "extra file",
			edit: func(es []entry) []entry {
				return append(es, entry{name: "charts/demo/templates/evil.yaml", data: []byte("kind: Pod\n")})
			},
			want: &TamperedError{Extra: []string{"charts/demo/templates/evil.yaml"}},
		},
		{
			name: "duplicate entry",
			edit: func(es []entry) []entry { return append(es, es[blob]) },
			want: &TamperedError{Extra: []string{blobName}},
		},
		{
			name: "changed checksum list",
			edit: func(es []entry) []entry {
				es[0].data = bytes.Replace(es[0].data, []byte("  "+blobName), []byte("  images/blobs/sha256/other"), 1)
				return es
			},
			want: &TamperedError{Missing: []string{"images/blobs/sha256/other"}, Extra: []string{blobName}},
		},
		linkCase("symbolic link in place of a file", blob, blobName, tar.TypeSymlink, "/etc/passwd", "symbolic link"),
		linkCase("hard link in place of a file", blob, blobName, tar.TypeLink, ChecksumsFile, "hard link"),
		linkCase("FIFO in place of a file", blob, blobName, tar.TypeFifo, "", "named pipe (FIFO)"),
		linkCase("directory in place of a file", blob, blobName, tar.TypeDir, "", "directory"),
		{
			name: "unlisted symbolic link",
			edit: func(es []entry) []entry {
				return append(es, entry{name: "charts/demo/templates/link.yaml", typ: tar.TypeSymlink, link: "../../../../etc/shadow"})
			},
			want: &TamperedError{NotRegular: []string{"charts/demo/templates/link.yaml (symbolic link)"}},
		},
		{
			name: "checksum list a symbolic link",
			edit: func(es []entry) []entry {
				es[0] = entry{name: ChecksumsFile, typ: tar.TypeSymlink, link: "/etc/passwd"}
				return es
			},
			errMsg: "checksums.txt is a symbolic link, not a regular file",
		},
		{
			name:   "checksum list not first",
			edit:   func(es []entry) []entry { return append(es[1:], es[0]) },
			errMsg: "the first entry is not checksums.txt",
		},
	}
}

// linkCase replaces the listed file blob with an entry of type typ: one
// message that it is no regular file, and none that the file is missing
// or that the entry is not listed.
func linkCase(name string, blob int, blobName string, typ byte, link, kind string) tamperCase {
	return tamperCase{
		name: name,
		edit: func(es []entry) []entry {
			es[blob] = entry{name: blobName, typ: typ, link: link}
			return es
		},
		want: &TamperedError{NotRegular: []string{blobName + " (" + kind + ")"}},
	}
}
