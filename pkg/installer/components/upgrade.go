package components

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
)

// CheckUpgrade reports whether the installed version of component c may be
// upgraded to c.Version: never down, and for KubeVirt, which supports only
// N-1 to N upgrades, by at most one minor version.
func CheckUpgrade(c Component, installed string) error {
	from, err := semver.NewVersion(installed)
	if err != nil {
		return fmt.Errorf("%s: failed to parse installed version %q: %w", c.Name, installed, err)
	}
	to, err := semver.NewVersion(c.Version)
	if err != nil {
		return fmt.Errorf("%s: failed to parse pinned version %q: %w", c.Name, c.Version, err)
	}
	if to.LessThan(from) {
		return fmt.Errorf("%s: installed %s is newer than pinned %s; downgrades are not supported", c.Name, installed, c.Version)
	}
	if c.Name == "kubevirt" && (to.Major() != from.Major() || to.Minor() > from.Minor()+1) {
		return fmt.Errorf("%s: cannot upgrade from %s to %s: KubeVirt upgrades one minor version at a time; upgrade through the intermediate minor versions first",
			c.Name, installed, c.Version)
	}
	return nil
}
