// Package bundle builds, verifies and reads the offline bundles of
// kubevirt-installer.
//
// A bundle is one tar file, optionally zstd- or gzip-compressed, holding:
//
//	checksums.txt        sha256 and path of every other file, sorted by path
//	bundle.json          Metadata: format version, images and their digests
//	charts/<chart>/...   the installer's charts
//	images/              an OCI image layout: oci-layout, index.json and
//	                     blobs/sha256/<hex>, each blob stored once however
//	                     many images share it
//
// checksums.txt is the first entry, so a bundle is verified in one streaming
// pass: every later entry is hashed and compared, and an entry that is not
// listed, a listed file that never comes and a hash that differs are all
// errors naming the file. The sha256 of checksums.txt is the bundle's
// aggregate checksum; Create returns it and it is what to compare over a
// separate channel to detect a bundle whose checksums.txt was rewritten.
//
// Create is resumable: it builds the bundle in a work directory, and a blob
// already there with the right digest is neither downloaded nor written
// again.
package bundle
