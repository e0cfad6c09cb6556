// Package filelimit reads files a user names (keys, configuration files)
// with a bound on their size, so that a wrong path such as /dev/zero or a
// huge file ends in an error naming the limit instead of taking the
// process's memory.
package filelimit

import (
	"fmt"
	"io"
	"os"
)

// TooLargeError reports a file larger than the limit it was read with.
type TooLargeError struct {
	// Path is the file.
	Path string
	// Limit is the most bytes it may have.
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the limit for this file", e.Path, Bytes(e.Limit))
}

// ReadFile returns the content of the file at path, or a *TooLargeError
// when it has more than limit bytes; it reads at most limit+1 bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return data, nil
}

// Bytes formats n with a binary unit, e.g. 64 KiB, 1.5 MiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	if n%div == 0 {
		return fmt.Sprintf("%d %ciB", n/div, "KMGTPE"[exp])
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
