package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompression(t *testing.T) {
	for file, want := range map[string]Compression{
		"b.tar.zst": CompressionZstd, "b.tar.gz": CompressionGzip, "b.tgz": CompressionGzip, "b.tar": CompressionNone,
	} {
		if got := CompressionFor(file); got != want {
			t.Errorf("CompressionFor(%s) = %s, want %s", file, got, want)
		}
	}
	if _, err := ParseCompression("lz4"); err == nil {
		t.Error("lz4 was accepted")
	}
	if c, err := ParseCompression("zstd"); err != nil || c != CompressionZstd {
		t.Errorf("zstd: %s, %v", c, err)
	}
}

func TestParseChecksums(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	tests := []struct {
		name, in, wantErr string
		want              checksums
	}{
		{name: "valid", in: sum + "  a/b\n" + sum + "  c\n", want: checksums{"a/b": sum, "c": sum}},
		{name: "one space", in: sum + " a\n", wantErr: "line 1 is not"},
		{name: "short sum", in: "abc  a\n", wantErr: "line 1 is not"},
		{name: "upper case", in: strings.ToUpper(sum) + "  a\n", wantErr: "line 1 is not"},
		{name: "escaping path", in: sum + "  ../etc/passwd\n", wantErr: "invalid path"},
		{name: "absolute path", in: sum + "  /etc/passwd\n", wantErr: "invalid path"},
		{name: "unclean path", in: sum + "  a//b\n", wantErr: "invalid path"},
		{name: "lists itself", in: sum + "  checksums.txt\n", wantErr: "invalid path"},
		{name: "twice", in: sum + "  a\n" + sum + "  a\n", wantErr: "lists a twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseChecksums(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestVerifyRefusesWhatIsNotABundleFile: a directory (an unpacked bundle or
// a work directory) and files that are no tar archive get an error that
// says what a bundle is, not one about its first entry.
func TestVerifyRefusesWhatIsNotABundleFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name, file, want string
	}{
		{"directory", dir, "is a directory, not a bundle file: a bundle is one tar archive"},
		{"empty file", write("empty", ""), "failed to read it as a tar archive, which a bundle is: EOF"},
		{"text file", write("notes.txt", "not a bundle\n"), "failed to read it as a tar archive, which a bundle is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Verify(tt.file)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.file) {
				t.Errorf("error %v, want one naming %s and containing %q", err, tt.file, tt.want)
			}
		})
	}
}
