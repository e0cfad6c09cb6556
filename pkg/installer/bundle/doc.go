// Package bundle builds, verifies and reads the offline bundles of
// kubevirt-installer.
//
// A bundle is one tar file, optionally zstd- or gzip-compressed, holding:
//
//	checksums.txt        sha256 and path of every other file, sorted by path
//	checksums.txt.sig    in a signed bundle: base64 signature of checksums.txt
//	bundle.json          Metadata: format version, chosen platforms, images
//	                     with their digests, platforms and referrers, charts
//	                     with their versions
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
// An image index is stored byte for byte when every platform it lists is
// chosen, and as a filtered index of the chosen platforms otherwise, which
// has a digest of its own; the metadata then records the upstream digest
// too. Read refuses a bundle whose metadata claims a platform its stored
// index or image config lacks. The signatures, attestations and SBOMs
// attached to an image upstream (cosign's sha256-<hex>.sig/.att/.sbom tags
// and OCI referrers) are stored beside it in the layout and pushed with it.
//
// Create is resumable: it builds the bundle in a work directory, and a blob
// already there with the right digest is neither downloaded nor written
// again.
package bundle
