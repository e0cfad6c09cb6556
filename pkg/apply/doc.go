// Package apply is the one way the project writes the objects it owns:
// read the object from a cache; leave an object that is not ours alone
// (Foreign); send nothing when the object already holds what we want
// (Unchanged); otherwise write it with server-side apply under our field
// manager, taking fields back from other managers (Applied).
//
// "Already holds what we want" is two checks against the cached object:
// every field we set still has our value (no drift by others), and the
// object carries HashAnnotation with the hash of the desired object, which
// changes when we stop setting a field (server-side apply then removes it).
//
// An object the cache does not show is created with a plain Create, never
// applied: with a cache that only holds our objects, or one behind, an
// apply with force would take over a foreign object of the same name. When
// the Create finds the object there, it is read uncached and the ownership
// rule decides.
package apply
