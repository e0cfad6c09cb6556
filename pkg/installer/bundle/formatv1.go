package bundle

import (
	"encoding/json"
	"fmt"
)

// formatVersion1 is the format of bundles before version 2: one platform
// per bundle, images stored as single-platform manifests, no referrers.
// Such bundles are still read: their metadata is converted to the current
// form on reading.
const formatVersion1 = 1

// metadataV1 is bundle.json of format version 1.
type metadataV1 struct {
	Platform string `json:"platform"`
	Images   []struct {
		Ref      string `json:"ref"`
		Digest   string `json:"digest"`
		Platform string `json:"platform,omitempty"`
	} `json:"images"`
	Charts []ChartEntry `json:"charts,omitempty"`
}

// decodeMetadata decodes bundle.json of any format version this package
// reads into the current form.
func decodeMetadata(raw []byte) (Metadata, error) {
	var version struct {
		FormatVersion int `json:"formatVersion"`
	}
	if err := json.Unmarshal(raw, &version); err != nil {
		return Metadata{}, fmt.Errorf("failed to decode %s: %w", MetadataFile, err)
	}
	switch version.FormatVersion {
	case FormatVersion:
		var m Metadata
		if err := json.Unmarshal(raw, &m); err != nil {
			return Metadata{}, fmt.Errorf("failed to decode %s: %w", MetadataFile, err)
		}
		return m, nil
	case formatVersion1:
		return decodeMetadataV1(raw)
	default:
		return Metadata{}, fmt.Errorf("bundle format version %d is not supported (want %d or %d)", version.FormatVersion, formatVersion1, FormatVersion)
	}
}

// decodeMetadataV1 converts bundle.json of format version 1: the bundle's
// one platform becomes its platform list and, where an image records none,
// the image's.
func decodeMetadataV1(raw []byte) (Metadata, error) {
	var v1 metadataV1
	if err := json.Unmarshal(raw, &v1); err != nil {
		return Metadata{}, fmt.Errorf("failed to decode %s (format version 1): %w", MetadataFile, err)
	}
	m := Metadata{FormatVersion: formatVersion1, Charts: v1.Charts}
	if v1.Platform != "" {
		m.Platforms = []string{v1.Platform}
	}
	for _, img := range v1.Images {
		platform := img.Platform
		if platform == "" {
			platform = v1.Platform
		}
		entry := ImageEntry{Ref: img.Ref, Digest: img.Digest}
		if platform != "" {
			entry.Platforms = []string{platform}
		}
		m.Images = append(m.Images, entry)
	}
	return m, nil
}
