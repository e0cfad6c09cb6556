package config

import (
	"context"
	"crypto/sha256"

	"k8s.io/utils/lru"
)

// SpecCache remembers the Specs Parse made, by the SHA-256 of
// providerSpec.value. The Machines of one MachineSet share one value, and
// the machine-controller loads it on every reconcile of each of them:
// parsing it again was a quarter of what the controller allocated at 300
// Machines. Only valid values are remembered, so an invalid one is reported
// with its field paths on every call, as before.
//
// A Spec from a SpecCache is shared by every caller that loads the same
// value, so it must not be changed. Resolve only reads its Spec, and the
// Settings it returns share no slice, map or pointer with it.
//
// A nil *SpecCache remembers nothing. A SpecCache is safe for concurrent use.
type SpecCache struct {
	specs *lru.Cache
}

// NewSpecCache returns a SpecCache that remembers at most size Specs, the
// least recently used going first.
func NewSpecCache(size int) *SpecCache {
	return &SpecCache{specs: lru.New(size)}
}

// Parse returns the Spec of value: the remembered one, else what Parse
// returns.
func (c *SpecCache) Parse(value []byte) (*Spec, error) {
	if c == nil {
		return Parse(value)
	}
	key := sha256.Sum256(value)
	if v, ok := c.specs.Get(key); ok {
		if spec, ok := v.(*Spec); ok {
			return spec, nil
		}
	}
	spec, err := Parse(value)
	if err != nil {
		return nil, err
	}
	c.specs.Add(key, spec)
	return spec, nil
}

// Load is Load with the Spec from c.
func (c *SpecCache) Load(ctx context.Context, value []byte, r Resolver, opts Options) (*Settings, []string, error) {
	spec, err := c.Parse(value)
	if err != nil {
		return nil, nil, err
	}
	settings, err := Resolve(ctx, spec, r, opts)
	if err != nil {
		return nil, spec.Warnings, err
	}
	return settings, settings.Warnings, nil
}

// Len returns how many Specs c remembers.
func (c *SpecCache) Len() int {
	if c == nil {
		return 0
	}
	return c.specs.Len()
}
