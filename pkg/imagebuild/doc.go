// Package imagebuild builds this project's controllers into OCI images
// without a container engine: static Go binaries cross-compiled per
// platform, written into layers next to a minimal root (CA certificates,
// /etc/passwd and /etc/group entries for nobody), one image index per image,
// each with a CycloneDX SBOM of its binaries' Go modules attached as an OCI
// referrer and, given a key, a cosign-compatible signature.
//
// The same commit gives the same digests on any machine with the same Go
// toolchain: binaries are built with -trimpath, without VCS stamping or a
// build ID; every file and config time is the commit time (or
// SOURCE_DATE_EPOCH); tar entries are sorted and owned by root with
// numeric ids only; gzip headers carry no name or time; the SBOM has no
// serial number and the commit time as its timestamp.
//
// What a binary reports with --version comes from package version, set
// with -ldflags -X.
package imagebuild
