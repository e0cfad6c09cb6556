// Package bundle builds, verifies and reads the offline bundles of
// kubevirt-installer.
//
// A bundle is one tar file, optionally zstd- or gzip-compressed, holding:
//
//	checksums.txt        sha256 and path of every other file, sorted by path
//	checksums.txt.sig    in a signed bundle: base64 signature of checksums.txt
//	bundle.json          Metadata: format version, images with their digests
//	                     and platforms, charts with their versions
//	sbom.cdx.json        CycloneDX SBOM of the images and charts
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
// A signature of checksums.txt covers every file through it. It is made and
// checked with sigstore's signature package, as cosign sign-blob and
// verify-blob do with a key, and it sits right after checksums.txt, so Read
// with a key refuses an unsigned or wrongly signed bundle before it reads
// anything else.
//
// Create is resumable: it builds the bundle in a work directory, and a blob
// already there with the right digest is neither downloaded nor written
// again.
package bundle
