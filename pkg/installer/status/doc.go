// Package status reports the state of an installation: per component its
// pinned and installed versions, Helm release revision and status, whether
// it is ready, and every problem found, as data and as a table.
package status
